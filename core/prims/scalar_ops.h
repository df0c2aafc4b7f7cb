// The scalar semantics of every elementwise prim, in one table: name, arity, which dtypes it
// accepts, and how it evaluates in the reference (floats in float64, integers exactly with
// two's complement wrapping). The prim reference kernels, the ATen reference kernels and the
// kernel-IR interpreter all evaluate through these functions, so they cannot drift apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/ir/dtype.h"
#include "core/support/status.h"

namespace plugsdk::prims {

enum class ScalarOp {
  // unary, any numeric dtype
  kAbs,
  kNeg,
  kSign,
  kFloor,
  kCeil,
  kRound,
  kTrunc,
  // unary, integral (and bool)
  kBitwiseNot,
  // unary, floating only
  kExp,
  kExpm1,
  kLog,
  kLog1p,
  kLog2,
  kSqrt,
  kRsqrt,
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kTanh,
  kAsinh,
  kAcosh,
  kAtanh,
  kErf,
  // binary arithmetic
  kAdd,
  kSub,
  kMul,
  kDiv,
  kRemainder,
  kFmod,
  kPow,
  kAtan2,
  kMaximum,
  kMinimum,
  // binary bitwise (integral and bool)
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  // comparisons (bool result)
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
};

/// Which dtypes an op's operands may have.
enum class Operands {
  kNumeric,   ///< any dtype but bool
  kAny,       ///< any dtype, bool included
  kIntegral,  ///< integers and bool
  kFloating,  ///< f16, bf16, f32, f64
};

struct ScalarOpInfo {
  ScalarOp op;
  const char* name;  ///< "add": the prim is "prims.add", the kernel-IR op "add"
  int arity;         ///< 1 or 2
  Operands operands;
  bool predicate;   ///< the result is bool
  const char* doc;  ///< exact semantics, one line (docs/prims.md)
};

const std::vector<ScalarOpInfo>& allScalarOps();
const ScalarOpInfo& scalarOpInfo(ScalarOp op);
std::optional<ScalarOp> scalarOpByName(std::string_view name);
/// True if `dtype` is allowed for the op's operands.
bool acceptsDType(const ScalarOpInfo& info, ir::DType dtype);

/// Evaluates a floating op (operands already of the op's dtype, held as doubles; the
/// reference keeps float64 precision). Predicates return 0 or 1. `b` is ignored for unary ops.
double evalFloat(ScalarOp op, double a, double b = 0);
/// Evaluates an integral op on values of `dtype` (held as int64; the result is wrapped to
/// the dtype's width). nullopt reports an integer division by zero (PyTorch raises).
std::optional<int64_t> evalInt(ScalarOp op, int64_t a, int64_t b, ir::DType dtype);

// Scalar functions shared with the ATen reference kernels (PyTorch's CPU semantics).
double floorDivF(double a, double b);                     ///< floor(a / b) as torch.div(rounding_mode='floor')
std::optional<int64_t> truncDivI(int64_t a, int64_t b);   ///< C division; INT64_MIN / -1 wraps
std::optional<int64_t> floorDivI(int64_t a, int64_t b);   ///< Python division
double remainderF(double a, double b);                    ///< result has the divisor's sign
std::optional<int64_t> remainderI(int64_t a, int64_t b);  ///< result has the divisor's sign
std::optional<int64_t> fmodI(int64_t a, int64_t b);       ///< result has the dividend's sign
int64_t powI(int64_t base, int64_t exp);                  ///< negative exponents: 0 unless |base| == 1
double maxF(double a, double b);                          ///< NaN propagates
double minF(double a, double b);                          ///< NaN propagates
int64_t wrapAdd(int64_t a, int64_t b);
int64_t wrapSub(int64_t a, int64_t b);
int64_t wrapMul(int64_t a, int64_t b);
int64_t wrapNeg(int64_t a);

/// The counter-based generator behind prims.rand and dropout: element `counter` of the
/// stream `seed` is (splitmix64(splitmix64(seed) + counter) >> (64 - bits)) * 2^-bits, uniform
/// in [0, 1) and exact in a float type with `bits` bits of precision (53 f64, 24 f32, 11 f16, 8 bf16).
uint64_t splitmix64(uint64_t x);
double uniformAt(int64_t seed, int64_t counter, int bits = 53);
/// Precision bits of a floating dtype (53, 24, 11, 8).
int precisionBits(ir::DType dtype);

}  // namespace plugsdk::prims
