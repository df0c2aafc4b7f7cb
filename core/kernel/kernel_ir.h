// The loop-level kernel IR: what the scheduler hands a backend for everything that is not a
// library op. A kernel runs its body once per point of a parallel grid (sizes may be
// symbolic); the body is straight-line SSA scalar code -- loads and stores through index
// expressions over flat buffers, elementwise math with the prims' semantics, casts, a
// counter-based random op -- plus reduction loops whose combine op is explicit. Grid and
// loop sizes, strides and offsets are all SymExprs, so one kernel serves every size.
//
// Index variables: grid dims are i0, i1, ...; the dims of a reduction loop are r0, r1, ...
// (each loop starts again at r0). Index expressions may also use size symbols and integer
// SSA values (written %N), e.g. a gather's `load %x[%5*64+i1]`.
//
// It suits a CPU JIT (grid = parallel outer loops, the innermost dim vectorized) and GPUs
// (grid points -> program instances, loops -> block or sub-group reductions) alike.
// docs/kernel-ir.md is the reference; the text form (kernel_text.h) parses back to an equal kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/symbolic.h"
#include "core/prims/scalar_ops.h"
#include "core/support/status.h"

namespace plugsdk::kernel {

using ir::DType;
using ir::SymExpr;

enum class ReduceOp { kSum, kProd, kMax, kMin, kArgMax, kArgMin };
/// How a store combines with what is in memory: kNone overwrites; the others read-modify-
/// write atomically (scatter with duplicate indices).
enum class Combine { kNone, kSum, kProd, kMax, kMin };

const char* reduceOpName(ReduceOp op);
const char* combineName(Combine c);

enum class StmtKind {
  kLoad,    ///< %v = load %arg[index] [if %mask] : dtype (masked off: no access, value 0)
  kConst,   ///< %v = const 2.5 : dtype
  kIndex,   ///< %v = index <expr> : i64 (an index expression as a value)
  kScalar,  ///< %v = <op> %a[, %b] : dtype (scalar_ops.h; comparisons give bool)
  kWhere,   ///< %v = where %c, %a, %b : dtype
  kCast,    ///< %v = cast %a : dtype (convert_element_type semantics)
  kRand,    ///< %v = rand <seed>, <counter expr> : dtype (prims.rand's generator)
  kReduce,  ///< %v = reduce <op> %a : dtype -- only directly inside a loop; %v is visible after it
  kStore,   ///< store[.combine] %arg[index], %a
  kCheck,   ///< check %c, "message": a run-time error (device assert) when %c is false
  kLoop,    ///< loop [sizes] { body }: a reduction loop over dims r0, r1, ...
};

struct Stmt {
  StmtKind kind = StmtKind::kConst;
  int result = -1;  ///< value id defined (-1 for store and loop)
  DType dtype = DType::kF32;
  std::vector<int> operands;  ///< value ids
  int arg = -1;               ///< load / store: kernel argument index
  SymExpr index;              ///< load / store offset (elements), index expr, rand counter
  prims::ScalarOp op = prims::ScalarOp::kAdd;
  ReduceOp reduce = ReduceOp::kSum;
  Combine combine = Combine::kNone;
  double fvalue = 0;   ///< kConst of a floating dtype
  int64_t ivalue = 0;  ///< kConst of an integral dtype; kRand seed
  std::vector<SymExpr> loopSizes;
  std::vector<Stmt> body;
  std::string message;  ///< kCheck: what failed
};

/// A buffer argument: flat storage of one dtype. `accumulator` marks the library result an
/// epilogue kernel reads (a backend fusing the epilogue reads its register instead).
struct Arg {
  std::string name;
  DType dtype = DType::kF32;
  bool read = false;
  bool written = false;
  bool accumulator = false;
};

struct Kernel {
  std::string name;
  std::vector<Arg> args;
  std::vector<SymExpr> grid;  ///< parallel dims i0, i1, ... (empty: a single point)
  std::vector<Stmt> body;
  int numValues = 0;  ///< value ids are 0 .. numValues-1

  /// Size symbols the kernel uses (grid, loops, indices), sorted.
  std::vector<std::string> sizeSymbols() const;
  /// Number of statements, loops' bodies included.
  int64_t numStmts() const;
  /// Whether a run can end in a run-time error: a CHECK, or an integer division or remainder
  /// (by zero). A run that launches no such kernel need not be waited for to be checked.
  bool mayFail() const;
};

/// Names of index variables.
std::string gridVar(size_t d);
std::string loopVar(size_t d);
/// The symbol an index expression uses for integer value `id` ("%id").
std::string valueSymbol(int id);
SymExpr valueRef(int id);

/// Checks SSA order and scoping (values defined before use, loop-local values not used
/// after their loop, reduces only directly in loops), argument indices, dtypes and that
/// index expressions use only index variables in scope, size symbols and integer values.
Status verifyKernel(const Kernel& k);

/// Structural equality (for round-trip tests).
bool kernelsEqual(const Kernel& a, const Kernel& b, std::string* whyNot = nullptr);

}  // namespace plugsdk::kernel
