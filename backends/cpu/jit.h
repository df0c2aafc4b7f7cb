// The machine-code stages of the CPU backend, over LLVM 19: an LLVM module is optimized
// (the new pass manager's O2/O3 pipeline, with LLVM's own loop and SLP vectorizers off:
// the code generators vectorize explicitly, so "scalar" stays scalar), compiled to an ELF
// object for the client's ISA, and linked into the process with ORC (JITLink). Each stage
// is a function of its own so the compile cache can stop after emitObject and the dumps can
// ask for assembly. Thread-safe: kernels of one program may compile on several threads.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cpu/isa.h"
#include "plugsdk/status.hpp"

namespace llvm {
class Module;
class TargetMachine;
namespace orc {
class LLJIT;
}  // namespace orc
}  // namespace llvm

namespace plugsdk::cpu {

/// A linked object: its symbols stay callable until it is destroyed (the code is unmapped).
class LoadedObject {
 public:
  ~LoadedObject();
  LoadedObject(const LoadedObject&) = delete;
  LoadedObject& operator=(const LoadedObject&) = delete;
  /// The address of a symbol the object defines; NOT_FOUND naming it otherwise.
  sdk::StatusOr<void*> lookup(const std::string& symbol) const;

 private:
  friend class Jit;
  LoadedObject() = default;
  std::function<void()> release_;  // removes the code from the JIT
  std::map<std::string, void*> symbols_;
};

/// One JIT per client: its ISA, the LLVM objects that link code into the process, and the
/// host functions generated code may call (libm, the runtime's helpers).
class Jit {
 public:
  static sdk::StatusOr<std::unique_ptr<Jit>> create(const Isa& isa);
  ~Jit();

  const Isa& isa() const { return isa_; }

  /// Gives `m` this target's triple and data layout (call before building code that reads
  /// the layout, and in any case before optimize).
  sdk::Status prepare(llvm::Module& m) const;

  /// Runs the O2 (level 2) or O3 (level 3) pipeline on `m`; verifies it first, so a
  /// malformed module is an error with the verifier's message, never a crash in a pass.
  sdk::Status optimize(llvm::Module& m, int level) const;

  /// Machine code for `m`: an ELF relocatable object, or assembly text (for the dumps).
  sdk::StatusOr<std::string> emitObject(llvm::Module& m) const;
  sdk::StatusOr<std::string> emitAssembly(llvm::Module& m) const;

  /// Links `object` (from emitObject, or read back from the disk cache) into the process
  /// and resolves `symbols`. A damaged object is an error naming `what`.
  sdk::StatusOr<std::unique_ptr<LoadedObject>> load(std::string_view object, const std::string& what,
                                                    const std::vector<std::string>& symbols);

  /// Makes `address` callable from generated code as `name` (before any load that uses it).
  sdk::Status defineHostSymbol(const std::string& name, void* address);

 private:
  Jit() = default;
  sdk::StatusOr<std::unique_ptr<llvm::TargetMachine>> targetMachine() const;
  Isa isa_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::mutex loadMutex_;  // ORC is thread-safe; this keeps load order deterministic for the logs
};

/// The LLVM version compiled in ("19.1.7"): part of every cache key.
std::string_view llvmVersion();

}  // namespace plugsdk::cpu
