// What every library kernel module shares (the tiled matmul, the implicit-GEMM convolution,
// flash attention): an OpenCL-flavoured SPIR-V module (Kernel, Addresses, Int64; Physical64
// OpenCL) with one entry point of CrossWorkgroup pointer and i64 parameters, a fixed
// LocalSize, ContractionOff (no fused multiply-adds, as the loop kernels), the local and
// work-group ids, Workgroup arrays, and the few helpers the kernels are written with: integer
// arithmetic, masked loads (the address clamped to the operand's first element, zeros
// selected: no early return, which PoCL 6.0 crashes on when barriers follow), barriers, and
// structured loops and selections whose carried values become phis.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "backends/level_zero/spirv/module.h"
#include "plugsdk/status.hpp"

namespace plugsdk::level_zero::library {

/// Work-groups along one dim of a launch at most (Level Zero devices may cap group counts at
/// 65535): larger grids are split into launches.
constexpr uint64_t kMaxGroups = 65535;

/// One parameter of the entry point.
struct KernelArg {
  enum Kind { kF32Pointer, kU8Pointer, kI64 };
  Kind kind;
  std::string name;
};

class TiledKernel {
 public:
  /// Starts the module and its one function (`params` in order, `local` its LocalSize) and
  /// writes the entry block's id loads. A u8 pointer declares the Int8 capability.
  TiledKernel(const std::string& entry, std::array<uint32_t, 3> local, const std::vector<KernelArg>& params);

  spirv::Module m;
  uint32_t i64 = 0, u32 = 0, u8 = 0, f32 = 0, bt = 0;
  uint32_t gptr = 0;  ///< CrossWorkgroup float*
  uint32_t lptr = 0;  ///< Workgroup float*
  /// The local and work-group ids (i64), loaded in the entry block.
  uint32_t lx = 0, ly = 0, gx = 0, gy = 0, gz = 0;

  /// Parameter `i` (in the constructor's order).
  uint32_t param(size_t i) const { return params_[i]; }
  /// A Workgroup array of `count` floats.
  uint32_t shared(uint32_t count, const std::string& name);

  // ---- values
  uint32_t op(spv::Op code, uint32_t type, std::initializer_list<uint32_t> xs) { return m.op(code, type, xs); }
  uint32_t cI(int64_t v) { return m.constInt(i64, static_cast<uint64_t>(v)); }
  uint32_t cF(double v) { return m.constFloat(f32, v); }
  uint32_t add(uint32_t a, uint32_t b) { return op(spv::Op::IAdd, i64, {a, b}); }
  uint32_t sub(uint32_t a, uint32_t b) { return op(spv::Op::ISub, i64, {a, b}); }
  uint32_t mul(uint32_t a, uint32_t b) { return op(spv::Op::IMul, i64, {a, b}); }
  uint32_t lt(uint32_t a, uint32_t b) { return op(spv::Op::SLessThan, bt, {a, b}); }
  uint32_t both(uint32_t a, uint32_t b) { return op(spv::Op::LogicalAnd, bt, {a, b}); }
  uint32_t select(uint32_t c, uint32_t a, uint32_t b) { return op(spv::Op::Select, m.typeOf(a), {c, a, b}); }
  uint32_t fadd(uint32_t a, uint32_t b) { return op(spv::Op::FAdd, f32, {a, b}); }
  uint32_t fmul(uint32_t a, uint32_t b) { return op(spv::Op::FMul, f32, {a, b}); }
  /// An OpenCL.std function of f32 arguments (exp, log, ...).
  uint32_t ext(spv::OpenCLStd f, std::initializer_list<uint32_t> args);

  // ---- memory
  /// Element `index` of Workgroup array `array` (a pointer).
  uint32_t at(uint32_t array, uint32_t index) { return op(spv::Op::AccessChain, lptr, {array, index}); }
  uint32_t loadShared(uint32_t array, uint32_t index) { return op(spv::Op::Load, f32, {at(array, index)}); }
  void storeShared(uint32_t array, uint32_t index, uint32_t value) {
    m.emit(spv::Op::Store, {at(array, index), value});
  }
  /// f32 `ptr[index]` where `ok`, else 0 (the address clamped to ptr[0], which exists).
  uint32_t loadOrZero(uint32_t ok, uint32_t ptr, uint32_t index);
  /// u8 `ptr[index]` where `ok`, else 0 (likewise).
  uint32_t loadU8OrZero(uint32_t ok, uint32_t ptr, uint32_t index);
  /// Stages `ptr[index]` (or 0 where not `ok`) into Workgroup `slot`, a pointer from at().
  void stage(uint32_t ok, uint32_t ptr, uint32_t index, uint32_t slot) {
    m.emit(spv::Op::Store, {slot, loadOrZero(ok, ptr, index)});
  }
  void storeGlobal(uint32_t ptr, uint32_t index, uint32_t value);
  /// OpControlBarrier at work-group scope over Workgroup and CrossWorkgroup memory.
  void barrier();

  // ---- structured control flow
  using Values = std::vector<uint32_t>;
  /// `for (i = from; i < end; i += step)` carrying `init` (phis in the header); `body(i,
  /// carried)` writes the body, which may hold blocks of its own, and returns the next values
  /// (of the same types). The values at the exit.
  Values loop(uint32_t from, uint32_t end, uint32_t step, const Values& init,
              const std::function<Values(uint32_t, const Values&)>& body);
  /// `if (cond) body()`: the values body returns where it ran, `otherwise` where it did not.
  Values when(uint32_t cond, const Values& otherwise, const std::function<Values()>& body);

  /// Ends the function and validates the module; `what` names it in an error.
  sdk::StatusOr<std::vector<uint32_t>> finish(const std::string& what);

 private:
  std::vector<uint32_t> params_;
  uint32_t u8ptr_ = 0, openclStd_ = 0;
};

}  // namespace plugsdk::level_zero::library
