// Kernel IR (the ABI's plugsdk_kernel_t, read through sdk::KernelView) -> LLVM IR for the
// CPU backend. One class, KernelLowering, whose methods are spread over files by topic:
//   lower_kernel.cc   the entry function, the grid loops, full and tail chunks, statements
//   lower_index.cc    index programs as uniform / affine / per-lane values
//   lower_memory.cc   loads, stores, combining (atomic) stores, dtype storage formats
//   lower_ops.cc      elementwise ops, casts, math functions
//   lower_loop.cc     reduction loops and reductions (vector accumulators, tree combines)
//
// Vectorization. Each kernel is lowered in one of three modes, chosen from its accesses:
//   kGrid  lanes are consecutive points of the grid's last dim (elementwise kernels, and
//          reductions whose loop walks a non-contiguous dim, e.g. column sums);
//   kLoop  the grid is walked one point at a time, and inside each loop the lanes are
//          consecutive values of the innermost loop variable (row reductions: softmax,
//          layernorm), combined across lanes by a tree at the end of the loop;
//   kScalar one lane everywhere (the "scalar" ISA, or a kernel with nothing to vectorize).
// A value is "uniform" (one scalar for all lanes) or "varying" (a vector): uniform values
// are computed once and broadcast where they meet varying ones. A chunk of lanes that
// runs past the end of its dim is masked (the tail): masked lanes never touch memory.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "backends/llvm_lowering/loop_reuse.h"
#include "backends/llvm_lowering/target.h"
#include "plugsdk/kernel_view.hpp"

namespace plugsdk::lowering {

enum class VectorMode { kScalar, kGrid, kLoop };

/// What lowerKernel produces: a module holding one entry function (codegen/frame.h's
/// KernelEntry signature), and what the runtime needs to interpret its status codes.
struct LoweredKernel {
  std::unique_ptr<llvm::Module> module;
  std::string entry;
  VectorMode mode = VectorMode::kScalar;
  uint32_t lanes = 1;
  std::vector<std::string> checkMessages;  ///< CHECK ordinal -> message
  /// The loop statement whose chunks the launch may split over several programs of a grid
  /// point (ThreadGroup::canSplit); none when the kernel cannot be split.
  std::optional<size_t> splitLoop;
  /// The trailing grid dims the entry's inner range [lo, hi) walks as one (their extents'
  /// product, row-major): 1 unless Target::collapseGrid joined the last dim to its outer
  /// neighbours; the outer points are those of the dims before them.
  size_t innerGridDims = 1;
};

/// Lowers `k` (validated) for `target` into a new module in `ctx`, its entry named `entry`.
/// UNIMPLEMENTED naming the statement for an op or dtype the backend does not handle.
sdk::StatusOr<LoweredKernel> lowerKernel(llvm::LLVMContext& ctx, const sdk::KernelView& k, const Target& target,
                                         const std::string& entry);

/// The mode lowerKernel will choose for `k` (exposed for tests and the dumps).
VectorMode chooseMode(const sdk::KernelView& k, const Target& target);
const char* modeName(VectorMode m);

/// A value during lowering: a scalar shared by all lanes, or a vector with one per lane.
struct Val {
  llvm::Value* v = nullptr;
  bool varying = false;
};

/// An index expression's value over the lanes: uniform, affine (base + stride * lane, with a
/// compile-time stride), or one i64 per lane.
struct IndexVal {
  enum class Kind { kUniform, kAffine, kLanes } kind = Kind::kUniform;
  llvm::Value* base = nullptr;   ///< i64: kUniform, kAffine
  int64_t stride = 0;            ///< kAffine
  llvm::Value* lanes = nullptr;  ///< <N x i64>: kLanes
};

/// The lanes the statements being lowered run on.
struct Region {
  uint32_t lanes = 1;
  uint32_t laneKind = 0;                            ///< PLUGSDK_INDEX_GRID_VAR or LOOP_VAR: which variable is per lane
  int64_t laneVar = -1;                             ///< its number; -1: no variable is per lane (lanes == 1)
  llvm::Value* mask = nullptr;                      ///< <lanes x i1>; nullptr: every lane active
  std::vector<llvm::Value*> grid;                   ///< i64 per grid var (the per-lane one: its lane-0 value)
  std::vector<llvm::Value*> loop;                   ///< i64 per loop var of the enclosing loop
  std::vector<std::optional<int64_t>> loopExtents;  ///< each loop var's extent, when a constant
  /// Every thread of the program's thread group runs these statements on the same point
  /// (kLoop mode with a group, outside the loops whose lanes are spread): one thread stores.
  bool replicated = false;
};

/// A reduction's accumulator while its loop is lowered.
struct Acc {
  const plugsdk_stmt_t* s = nullptr;
  uint32_t dtype = 0;  ///< the operand's dtype
  llvm::AllocaInst* value = nullptr;
  llvm::AllocaInst* best = nullptr;  ///< argmax / argmin: the position (i64 per lane)
  llvm::Constant* init = nullptr;    ///< the value of an empty reduction (scalar)
};

class KernelLowering {
 public:
  KernelLowering(llvm::LLVMContext& ctx, llvm::Module& m, const sdk::KernelView& k, const Target& target,
                 VectorMode mode);
  /// Builds the entry function.
  sdk::Status run(const std::string& entry);
  std::vector<std::string> checkMessages;

  // ---- lower_kernel.cc
 private:
  sdk::Status block(size_t begin, size_t end, Region& r);
  sdk::Status statement(const plugsdk_stmt_t& s, size_t pos, Region& r);
  /// for (i = begin; i < end; i += step) body(i), with the loop built around the builder.
  sdk::Status forLoop(llvm::Value* begin, llvm::Value* end, int64_t step,
                      const std::function<sdk::Status(llvm::Value*)>& body);
  /// Runs body over [begin, end) of a per-lane variable in chunks of `lanes`: full chunks,
  /// then one masked chunk for the rest. body(base, mask) with mask nullptr when full.
  sdk::Status chunked(llvm::Value* begin, llvm::Value* end, uint32_t lanes,
                      const std::function<sdk::Status(llvm::Value*, llvm::Value*)>& body);
  /// Runs body over [begin, end) of a loop variable (begin a multiple of `lanes`) whose chunks
  /// of `lanes` are spread over the thread group: chunk t, t + T, ... in thread t, as rounds
  /// of T chunks (a trip count the same in every thread; a small constant one is unrolled, so
  /// later loops over the same extent load the same addresses, reused from the first),
  /// the leftover full chunks in threads t < rest, the partial last chunk (masked) in the
  /// thread whose turn it is.
  sdk::Status spread(llvm::Value* begin, llvm::Value* end, uint32_t lanes,
                     const std::function<sdk::Status(llvm::Value*, llvm::Value*)>& body);
  /// if (cond) body(): blocks `name` and `name.after`, the builder left in the latter.
  sdk::Status ifThen(llvm::Value* cond, const char* name, const std::function<sdk::Status()>& body);
  /// The lanes of the chunk at `start` that lie below `end` (<lanes x i1>).
  llvm::Value* tailMask(llvm::Value* start, llvm::Value* end, uint32_t lanes);
  /// Runs body in thread 0 of the group only (where the region is replicated).
  sdk::Status inOneThread(const Region& r, const std::function<sdk::Status()>& body);
  /// Stores `code` into *status unless it is set, and leaves the function.
  /// Where `failed`: writes `code` to the status word (the first wins), raises `message`
  /// through the target's raiser when the launch asked for it, and leaves the kernel.
  void failWith(llvm::Value* failed, int32_t code, const std::string& message);
  sdk::Status fail(size_t pos, const std::string& why) const;

  // ---- lower_index.cc
  sdk::StatusOr<IndexVal> index(plugsdk_index_expr_t e, const Region& r);
  /// The per-lane vector of an index value.
  llvm::Value* indexLanes(const IndexVal& x, const Region& r);
  /// The largest power of two known to divide index `e`'s value at lane 0 (from constants,
  /// Target::symbolDivisor and the per-lane variable's chunk starts); 1 when nothing is known.
  int64_t laneZeroMultiple(plugsdk_index_expr_t e, const Region& r) const;
  /// The alignment of a contiguous access of r.lanes elements of `dtype` at index `e`.
  llvm::Align vectorAlign(plugsdk_index_expr_t e, const Region& r, uint32_t dtype) const;
  /// A uniform i64 (loop sizes, grid sizes: programs without per-lane operands).
  sdk::StatusOr<llvm::Value*> uniformIndex(plugsdk_index_expr_t e, const Region& r);

  // ---- lower_memory.cc
  sdk::StatusOr<Val> load(const plugsdk_stmt_t& s, size_t pos, Region& r);
  sdk::Status store(const plugsdk_stmt_t& s, size_t pos, Region& r);
  /// The store in every thread running the region (store() narrows a replicated one to one).
  sdk::Status storeAll(const plugsdk_stmt_t& s, size_t pos, Region& r);
  sdk::Status combiningStore(const plugsdk_stmt_t& s, llvm::Value* ptrs, llvm::Value* value, llvm::Value* mask,
                             uint32_t lanes);
  llvm::Type* storageType(uint32_t dtype);
  llvm::Value* fromStorage(llvm::Value* v, uint32_t dtype);
  llvm::Value* toStorage(llvm::Value* v, uint32_t dtype);
  llvm::Value* argPointer(int32_t arg);

  // ---- lower_ops.cc
 public:
  /// The register type of a dtype: i1, i8 ... i64, float (f16, bf16 and f32), double.
  llvm::Type* computeType(uint32_t dtype);

 private:
  sdk::StatusOr<Val> scalarOp(const plugsdk_stmt_t& s, size_t pos, Region& r);
  sdk::StatusOr<Val> cast(const plugsdk_stmt_t& s, Region& r);
  sdk::StatusOr<Val> rand(const plugsdk_stmt_t& s, Region& r);
  /// The f16 / bf16 rounding of an f32 register value (identity for other dtypes).
  llvm::Value* roundTo(llvm::Value* v, uint32_t dtype);
  llvm::Value* callLibm(const char* name, llvm::Type* t, llvm::ArrayRef<llvm::Value*> args);
  /// A transcendental op (exp ... erf, pow, atan2) on float or double scalars or vectors:
  /// vectorized polynomials (vector_math.h) where there are, libm per lane otherwise.
  llvm::Value* math(uint32_t op, llvm::Value* a, llvm::Value* b);
  /// sin or cos of a value whose sin and cos the kernel both takes (f32 arithmetic): both
  /// from one emitSinCosF32, the second reused where it is lowered in the same basic block.
  llvm::Value* sinOrCos(uint32_t op, llvm::Value* a);
  llvm::Value* maxMin(llvm::Value* a, llvm::Value* b, uint32_t dtype, bool isMax);
  llvm::Value* intDivRem(uint32_t op, llvm::Value* a, llvm::Value* b, uint32_t dtype, Region& r);

  // ---- lower_loop.cc
  sdk::Status loop(const plugsdk_stmt_t& s, size_t pos, Region& r);
  /// Two partial results of reduce `a` combined into one, (value, position) with position
  /// nullptr but for argmax / argmin, whose ties go to the earlier position.
  std::pair<llvm::Value*, llvm::Value*> combineOrdered(const Acc& a, llvm::Value* r, llvm::Value* bi, llvm::Value* v,
                                                       llvm::Value* vi);

  // ---- helpers
 public:
  /// `v` as a vector of `lanes` (a splat when it is uniform).
  llvm::Value* widen(const Val& v, uint32_t lanes);
  /// The dtype of SSA value `id`.
  uint32_t dtypeOf(int32_t id) const { return valueTypes_[static_cast<size_t>(id)]; }

 private:
  static constexpr uint64_t kUnrollRounds = 8;  ///< spread: rounds unrolled up to this many
  static constexpr int64_t kUnrollChunks = 4;   ///< chunked: full chunks unrolled up to this many
  llvm::Value* laneIota(uint32_t lanes);
  /// Marks a load of `arg` !invariant.load where the arg is never written while the kernel
  /// runs (argInvariant_), so LLVM may reuse its values across barriers and loops.
  llvm::Value* invariantLoad(int32_t arg, llvm::Value* load);
  llvm::Value* anyTrue(llvm::Value* maskVec);

  llvm::LLVMContext& ctx_;
  llvm::Module& m_;
  const sdk::KernelView& k_;
  const Target& target_;
  VectorMode mode_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* exit_ = nullptr;  ///< returns from the entry
  llvm::Value* frame_ = nullptr;
  llvm::Value* statusPtr_ = nullptr;
  llvm::Value* raiseFailures_ = nullptr;  ///< i1: bit 0 of the status pointer (target_.raiser set)
  std::vector<llvm::Value*> argPtrs_;     ///< loaded once in the entry block
  std::vector<bool> argInvariant_;        ///< loads of the arg may be marked !invariant.load
  std::vector<llvm::Value*> symbols_;     ///< i64 launch values
  std::vector<llvm::Value*> gridSizes_;
  std::vector<std::optional<int64_t>> gridExtents_;  ///< each grid dim's extent, when a constant
  std::vector<Val> values_;
  std::vector<uint32_t> valueTypes_;
  std::vector<size_t> checkOrdinal_;  ///< statement position -> CHECK ordinal
  std::vector<bool> sinAndCos_;       ///< value id -> the kernel takes both its sin and its cos
  struct SinCos {
    llvm::Value* arg;
    llvm::BasicBlock* block;  ///< where both became available
    llvm::Value* sin;
    llvm::Value* cos;
  };
  std::vector<SinCos> sinCos_;
  LoopReuse reuse_;  ///< values later loops repeat (loop_reuse.h)
  /// The kept values of unrolled loop iterations: (statement, slot) -> (cell, varying).
  std::map<std::pair<size_t, int64_t>, std::pair<llvm::AllocaInst*, bool>> keptValues_;
  int dynamicDepth_ = 0;  ///< forLoops open around the statements being lowered

 public:
  std::optional<size_t> splitLoop;  ///< see LoweredKernel::splitLoop
  /// Target::collapseGrid's groups of grid dims, [first, last] each, in order (one per dim
  /// when off); the last group is the entry's inner range.
  std::vector<std::pair<size_t, size_t>> gridGroups;
};

}  // namespace plugsdk::lowering
