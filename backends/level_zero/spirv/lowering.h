// KernelLowering: the kernel IR -> SPIR-V lowering (lower_kernel.h), one class whose methods
// are spread over files by topic, as backends/llvm_lowering does:
//   lower_kernel.cc   the entry point, the grid, control flow, statements, CHECK
//   lower_index.cc    index programs (int64, Python floor semantics), constants folded
//   lower_memory.cc   loads, stores, storage formats, combining stores (atomics, CAS loops)
//   lower_ops.cc      elementwise ops, casts, rand
//   lower_loop.cc     reduction loops and their accumulators
//   lower_group.cc    a work-group per grid point (mapping.h): loops spread over its
//                     work-items, accumulators combined through Workgroup memory
// Values: one SPIR-V id per SSA value, in its dtype's register type (bool as OpTypeBool, u8
// and i8 as 8-bit ints, f16 and bf16 in f32 rounded to their dtype after each op, as the LLVM
// backends do). Control flow is structured (OpSelectionMerge / OpLoopMerge); a failing
// work-item writes the status word and returns.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/level_zero/spirv/module.h"
#include "plugsdk/kernel_view.hpp"

namespace plugsdk::level_zero::spirv {

/// An index value: an i64 id, and its value when known at compile time.
struct Idx {
  uint32_t id = 0;
  std::optional<int64_t> c;
};

class KernelLowering {
 public:
  /// `groupSize`: 0 for one work-item per grid point, else a work-group of that many
  /// work-items per point (mapping.h).
  KernelLowering(Module& m, const sdk::KernelView& k, uint32_t groupSize = 0, bool contiguousChunks = false,
                 uint32_t subgroupSlots = 0);
  /// Builds the entry point `entry` into the module.
  sdk::Status run(const std::string& entry);
  std::vector<std::string> checkMessages;

 private:
  // ---- lower_kernel.cc
  sdk::Status statement(const plugsdk_stmt_t& s, size_t pos);
  /// if (cond) body(): a selection construct; the builder is left in its merge block.
  sdk::Status ifThen(uint32_t cond, const std::function<sdk::Status()>& body);
  /// for (i = 0; i < n; ++i) body(i) over i64: a structured loop.
  sdk::Status forLoop(uint32_t n, const std::function<sdk::Status(uint32_t)>& body);
  /// Where `failed` (bool): writes `code` to the status word unless set, and returns.
  void failWith(uint32_t failed, int32_t code);
  sdk::Status fail(size_t pos, const std::string& why) const;

  // ---- types and constants
  uint32_t boolT() { return m_.typeBool(); }
  uint32_t intT(uint32_t bits);
  uint32_t floatT(uint32_t bits);
  uint32_t i64() { return intT(64); }
  uint32_t u32() { return intT(32); }
  /// The register type of a dtype (f16 and bf16: f32).
  uint32_t computeType(uint32_t dtype);
  /// The memory type of a dtype (bool and u8: uchar, bf16: ushort, f16: half, which only
  /// vload_half / vstore_half_r touch: the Float16Buffer capability, no half arithmetic).
  uint32_t storageType(uint32_t dtype);
  /// The type of a dtype's bits as a value (storageType, but f16 as ushort).
  uint32_t bitsType(uint32_t dtype);
  uint32_t constI64(int64_t v) { return m_.constInt(i64(), static_cast<uint64_t>(v)); }
  uint32_t constU32(uint32_t v) { return m_.constInt(u32(), v); }
  uint32_t ext(spv::OpenCLStd f, uint32_t type, std::initializer_list<uint32_t> args);
  /// bool -> 0 / 1 of an integer type.
  uint32_t boolToInt(uint32_t b, uint32_t type);

  // ---- lower_index.cc
  sdk::StatusOr<Idx> index(plugsdk_index_expr_t e);
  uint32_t materialize(const Idx& x);
  /// a * b (extents: folded when constant, 1 dropped).
  Idx product(const Idx& a, const Idx& b);
  /// a // b or a % b (Python floor semantics) at run time.
  uint32_t floorDivMod(uint32_t a, uint32_t b, std::optional<int64_t> bConst, bool mod);

  // ---- lower_memory.cc
  sdk::StatusOr<uint32_t> load(const plugsdk_stmt_t& s, size_t pos);
  sdk::Status store(const plugsdk_stmt_t& s, size_t pos);
  sdk::Status combiningStore(const plugsdk_stmt_t& s, size_t pos, uint32_t ptr, uint32_t value);
  /// A dtype's bits (bitsType) <-> its register value.
  uint32_t fromStorage(uint32_t v, uint32_t dtype);
  uint32_t toStorage(uint32_t v, uint32_t dtype);
  /// f16 bits (ushort) <-> f32, through a Function variable seen as half (vload_half /
  /// vstore_half_r, round to nearest even).
  uint32_t halfBitsToFloat(uint32_t bits);
  uint32_t floatToHalfBits(uint32_t v);
  /// The register value of element `ptr` / a store of register value `v` to it.
  uint32_t loadElement(uint32_t ptr, uint32_t dtype);
  void storeElement(uint32_t ptr, uint32_t v, uint32_t dtype);
  /// A pointer to element `index` (i64) of argument `arg`.
  uint32_t elementPointer(int32_t arg, uint32_t index);

  // ---- lower_ops.cc
  sdk::StatusOr<uint32_t> scalarOp(const plugsdk_stmt_t& s, size_t pos);
  sdk::StatusOr<uint32_t> cast(const plugsdk_stmt_t& s, size_t pos);
  uint32_t rand(const plugsdk_stmt_t& s, uint32_t counter);
  /// The f16 / bf16 rounding of an f32 register value (identity for other dtypes).
  uint32_t roundTo(uint32_t v, uint32_t dtype);
  uint32_t maxMin(uint32_t a, uint32_t b, uint32_t dtype, bool isMax);
  /// An ordered comparison of two values of `dtype` (bool compares as 0 / 1).
  uint32_t compare(uint32_t op, uint32_t a, uint32_t b, uint32_t dtype);
  uint32_t intDivRem(uint32_t op, uint32_t a, uint32_t b, uint32_t dtype);
  /// The combine of a reduction or a combining store (sum / prod / max / min) in registers.
  uint32_t combine(bool sum, bool prod, bool isMax, uint32_t a, uint32_t b, uint32_t dtype);

  // ---- lower_loop.cc
  sdk::Status loop(const plugsdk_stmt_t& s, size_t pos);

  // ---- lower_group.cc (group mode: groupSize_ > 0)
  /// OpControlBarrier of the work-group, ordering Workgroup and CrossWorkgroup memory.
  void barrier();
  /// for (i = lid; i < n; i += groupSize_) body(i), or with contiguousChunks_ the work-item's
  /// chunk [lid * c, min(n, (lid + 1) * c)), c = ceil(n / groupSize_): a loop over the group.
  sdk::Status spreadLoop(uint32_t n, const std::function<sdk::Status(uint32_t)>& body);
  /// Combines two work-items' fields (register values) into one.
  using Combine = std::function<std::vector<uint32_t>(const std::vector<uint32_t>&, const std::vector<uint32_t>&)>;
  /// Every work-item's `fields` combined over the work-group through Workgroup memory, in a
  /// fixed tree (work-item t with t + s for s = groupSize_ / 2, ..., 1): every work-item
  /// gets the same bits. `types`: the fields' register types (bool kept as uchar in memory).
  /// `sumIsFloat`, when not empty: every field is a sum of a 32- or 64-bit register type,
  /// floating or not (one entry a field); with subgroupSlots_ the
  /// fields are first summed over each sub-group (OpGroupFAdd / OpGroupIAdd Reduce), each
  /// sub-group's first work-item puts its sums in slot SubgroupId (slots no sub-group has get
  /// zeros), and the tree runs over subgroupSlots_ slots.
  std::vector<uint32_t> groupAllReduce(const std::vector<uint32_t>& fields, const std::vector<uint32_t>& types,
                                       const Combine& combine, const std::vector<bool>& sumIsFloat = {});
  /// argmax / argmin of two (value, position) pairs: the better value; on a tie, or between
  /// NaNs, the earlier position (the order the work-items saw them in does not matter).
  std::pair<uint32_t, uint32_t> combineOrdered(bool isMax, uint32_t r, uint32_t ri, uint32_t v, uint32_t vi,
                                               uint32_t dtype);
  /// A failure inside a spread loop: the status word is written and the rest of the
  /// iteration skipped (a work-item may not return before its group's barriers); the skips
  /// opened in an iteration are closed at its end.
  void skipRestIf(uint32_t failed, int32_t code);
  void closeSkips();
  /// Group mode, after a loop: the statements up to the next loop are skipped when a
  /// failure outside the loops happened (groupFailed_).
  void skipIfGroupFailed();
  /// Before a uniform point that reads argument `arg`: a barrier when another work-item of
  /// the group may have written it (the group's stores are spread or done by work-item 0).
  void syncBeforeReading(int32_t arg);
  /// Statements outside loops run on every work-item (their values are the same on all:
  /// they depend on the grid point and on combined reductions); stores go through work-item 0.
  sdk::Status onFirstWorkItem(const std::function<sdk::Status()>& body);

  uint32_t dtypeOf(int32_t id) const { return valueTypes_[static_cast<size_t>(id)]; }
  uint32_t value(int32_t id) const { return values_[static_cast<size_t>(id)]; }

  Module& m_;
  const sdk::KernelView& k_;
  uint32_t openclStd_ = 0;
  uint32_t halfScratch_ = 0;          ///< a Function ushort for f16 conversions (0: none yet)
  uint32_t status_ = 0;               ///< the status word parameter
  std::vector<uint32_t> argPtrs_;     ///< per argument: its pointer parameter
  std::vector<uint32_t> symbols_;     ///< per symbol: its i64 parameter
  std::vector<uint32_t> grid_;        ///< i64 per grid variable
  std::vector<uint32_t> loopVars_;    ///< i64 per variable of the loop being lowered
  std::vector<uint32_t> values_;      ///< SSA value -> id
  std::vector<uint32_t> valueTypes_;  ///< SSA value -> dtype
  std::vector<size_t> checkOrdinal_;  ///< statement position -> CHECK ordinal
  // Group mode.
  uint32_t groupSize_ = 0;
  bool contiguousChunks_ = false;
  uint32_t subgroupSlots_ = 0;  ///< sums' tree slots after the sub-group sums (0: no sub-groups)
  uint32_t sgLocalVar_ = 0, sgIdVar_ = 0, sgCountVar_ = 0;  ///< the sub-group built-ins (u32)
  uint32_t lid_ = 0;                                        ///< the work-item's local id (i64)
  bool spreading_ = false;                                  ///< lowering the body of a spread loop
  /// An open skip (skipRestIf, skipIfGroupFailed): its merge block, the block that jumps there
  /// past the skipped statements, and (outside loops) the values defined since it opened,
  /// which become phis with a null value from the skipping path when it closes.
  struct Skip {
    uint32_t merge = 0, skipping = 0;
    size_t mark = 0;
    bool phis = false;
  };
  std::vector<Skip> skips_;
  std::vector<int32_t> defined_;  ///< group mode: kernel values lowered outside loops, in order
  std::map<std::pair<uint32_t, size_t>, uint32_t> scratch_;  ///< (memory type, field) -> Workgroup array
  std::set<int32_t> written_;                                ///< arguments stored since the last barrier
  uint32_t groupFailed_ = 0;                                 ///< Function bool: a failure outside the loops
  bool groupMayFail_ = false;                                ///< a failWith outside the loops was lowered
};

}  // namespace plugsdk::level_zero::spirv
