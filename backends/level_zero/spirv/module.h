// A SPIR-V binary module under construction: ids, the module's sections in the order the
// spec requires (capabilities, extensions, imports, memory model, entry points, execution
// modes, names, decorations, types/constants/globals, functions), with types, constants,
// capabilities, imports and decorations deduplicated. Functions are written one at a time;
// a function's OpVariables (Function storage) are hoisted into its first block, as the spec
// requires, wherever the body asks for one.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "backends/level_zero/spirv/spirv_defs.h"

namespace plugsdk::level_zero::spirv {

/// What a type id stands for (the writer needs widths for constants and conversions).
struct TypeInfo {
  spv::Op kind = spv::Op::TypeVoid;  ///< TypeVoid, TypeBool, TypeInt, TypeFloat, TypePointer, ...
  uint32_t width = 0;                ///< TypeInt / TypeFloat: bits
  uint32_t pointee = 0;              ///< TypePointer
};

class Module {
 public:
  Module() = default;

  /// A fresh result id.
  uint32_t newId() { return nextId_++; }

  // ---- module level (each deduplicated)
  void capability(spv::Capability c);
  void extension(const std::string& name);
  uint32_t extInstImport(const std::string& name);
  void memoryModel(spv::AddressingModel a, spv::MemoryModel m);
  void entryPoint(spv::ExecutionModel model, uint32_t function, const std::string& name,
                  const std::vector<uint32_t>& interface);
  void executionMode(uint32_t function, spv::ExecutionMode mode, const std::vector<uint32_t>& literals = {});
  void name(uint32_t target, const std::string& name);
  void decorate(uint32_t target, spv::Decoration d, const std::vector<uint32_t>& literals = {});

  uint32_t typeVoid();
  uint32_t typeBool();
  /// Signedness 0 always (the Kernel capability allows no other).
  uint32_t typeInt(uint32_t width);
  uint32_t typeFloat(uint32_t width);
  uint32_t typeVector(uint32_t element, uint32_t count);
  /// An array of `count` elements (its length a 32-bit constant).
  uint32_t typeArray(uint32_t element, uint32_t count);
  uint32_t typePointer(spv::StorageClass sc, uint32_t pointee);
  uint32_t typeFunction(uint32_t result, const std::vector<uint32_t>& params);
  const TypeInfo& typeInfo(uint32_t type) const;

  /// An integer constant of `type` (the low `width` bits of `value`).
  uint32_t constInt(uint32_t type, uint64_t value);
  /// A floating constant of `type` (f32: `value` rounded to float; f64).
  uint32_t constFloat(uint32_t type, double value);
  uint32_t constBool(bool value);
  uint32_t constNull(uint32_t type);
  /// A module-scope variable (an Input built-in, Workgroup memory).
  uint32_t globalVariable(uint32_t pointerType, spv::StorageClass sc);

  // ---- function bodies (one at a time)
  uint32_t beginFunction(uint32_t resultType, uint32_t functionType);
  uint32_t parameter(uint32_t type);
  /// A Function-storage variable of `pointee`, placed in the function's first block.
  uint32_t localVariable(uint32_t pointee);
  /// Starts block `id` (from newId(); the previous block must have ended in a branch).
  void label(uint32_t id);
  /// The block being written.
  uint32_t currentBlock() const { return block_; }
  /// An instruction with a result: `OpX resultType result operands...`; returns the result.
  uint32_t op(spv::Op code, uint32_t resultType, std::initializer_list<uint32_t> operands);
  uint32_t op(spv::Op code, uint32_t resultType, const std::vector<uint32_t>& operands);
  /// An instruction without a result or result type (stores, branches, merges).
  void emit(spv::Op code, std::initializer_list<uint32_t> operands);
  void emit(spv::Op code, const std::vector<uint32_t>& operands);
  void endFunction();

  /// The result type of an id made by op() / parameter() / constants (0 when unknown).
  uint32_t typeOf(uint32_t id) const { return id < valueTypes_.size() ? valueTypes_[id] : 0; }

  /// The finished module's words (header with the id bound, then the sections).
  std::vector<uint32_t> words() const;

 private:
  using Words = std::vector<uint32_t>;
  static void append(Words& out, spv::Op code, const std::vector<uint32_t>& operands);
  static void appendString(std::vector<uint32_t>& operands, const std::string& s);
  /// A deduplicated type or constant: `operands` excludes the result id.
  uint32_t typeOrConstant(spv::Op code, uint32_t resultType, const std::vector<uint32_t>& operands);
  void setType(uint32_t id, uint32_t type);

  uint32_t nextId_ = 1;
  Words capabilities_, extensions_, imports_, memoryModel_, entryPoints_, executionModes_, names_, decorations_,
      globals_, functions_;
  std::map<std::vector<uint32_t>, uint32_t> dedup_;  ///< key: section tag, opcode, operands
  std::map<uint32_t, TypeInfo> types_;
  std::vector<uint32_t> valueTypes_;
  // The function being written: its header (OpFunction, parameters, first label), its
  // hoisted variables, its body.
  Words fnHeader_, fnVariables_, fnBody_;
  bool inFunction_ = false;
  bool firstLabel_ = false;
  uint32_t block_ = 0;
};

}  // namespace plugsdk::level_zero::spirv
