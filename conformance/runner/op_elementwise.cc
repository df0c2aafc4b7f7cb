// The op tier's elementwise family: the 47 prims of the scalar op table (core/prims/scalar_ops.h,
// so a prim added there gets cases here without an edit), prims.where and
// prims.convert_element_type, over every dtype each accepts. Floating data mixes the dtype's
// special values (NaN, +-inf, +-0, denormals, extremes, rounding ties) with random values in
// the op's well-conditioned range; binary ops see every pair of special values; integer data
// mixes MIN, MAX, -1, 0, 1 with full-range values. Sizes cross tile boundaries, and views
// (transposed, offset and strided, broadcast, empty, size 1, rank 0) put the operands behind
// prims.permute / prims.slice / prims.broadcast_in_dim.
//
// Tolerances: exact for everything IEEE rounds correctly or that is exact (add, sub, mul, div,
// sqrt, rounding ops, fmod, min/max, comparisons, every integer and bool result); the ulp
// budget (ulpBudget) for the transcendentals, rsqrt and remainder.
#include <cmath>
#include <set>

#include "conformance/runner/op_common.h"
#include "core/prims/scalar_ops.h"

namespace plugsdk::conformance::op {
namespace {

using prims::Operands;
using prims::ScalarOp;
using prims::ScalarOpInfo;

/// Ops whose floating results are correctly rounded (or exact) in IEEE arithmetic.
bool exactInFloat(ScalarOp op) {
  switch (op) {
    case ScalarOp::kAbs:
    case ScalarOp::kNeg:
    case ScalarOp::kSign:
    case ScalarOp::kFloor:
    case ScalarOp::kCeil:
    case ScalarOp::kRound:
    case ScalarOp::kTrunc:
    case ScalarOp::kAdd:
    case ScalarOp::kSub:
    case ScalarOp::kMul:
    case ScalarOp::kDiv:
    case ScalarOp::kSqrt:
    case ScalarOp::kFmod:
    case ScalarOp::kMaximum:
    case ScalarOp::kMinimum:
    case ScalarOp::kEq:
    case ScalarOp::kNe:
    case ScalarOp::kLt:
    case ScalarOp::kLe:
    case ScalarOp::kGt:
    case ScalarOp::kGe: return true;
    default: return false;
  }
}

/// The random part of a floating operand `k` of `op`: where the function is well conditioned.
Fill floatRange(ScalarOp op, int k) {
  switch (op) {
    case ScalarOp::kExp: return Fill::normal(5);
    case ScalarOp::kExpm1: return Fill::normal(3);
    case ScalarOp::kLog:
    case ScalarOp::kLog2:
    case ScalarOp::kSqrt:
    case ScalarOp::kRsqrt: return Fill::logUniform(1e-3, 1e3);
    case ScalarOp::kLog1p: return Fill::uniform(-0.999, 10);
    case ScalarOp::kSin:
    case ScalarOp::kCos:
    case ScalarOp::kTan: return Fill::uniform(-100, 100).withoutHuge();
    case ScalarOp::kAsin:
    case ScalarOp::kAcos:
    case ScalarOp::kAtanh: return Fill::uniform(-1, 1);
    case ScalarOp::kAcosh: return Fill::logUniform(1, 100);
    case ScalarOp::kSinh:
    case ScalarOp::kCosh: return Fill::normal(4);
    case ScalarOp::kPow: return k == 0 ? Fill::logUniform(0.1, 10) : Fill::uniform(-4, 4);
    case ScalarOp::kRemainder:
    case ScalarOp::kFmod: return k == 0 ? Fill::normal(10) : Fill::normal(2);
    case ScalarOp::kMaximum:
    case ScalarOp::kMinimum: return Fill::normal().withoutNegZero();
    case ScalarOp::kRound:
    case ScalarOp::kFloor:
    case ScalarOp::kCeil:
    case ScalarOp::kTrunc: return Fill::normal(4);
    default: return Fill::normal(2);
  }
}

/// The random part of an integer operand: divisors are never 0, exponents small enough to
/// mean something (large ones are among the specials).
Fill intRange(ScalarOp op, int k) {
  switch (op) {
    case ScalarOp::kDiv:
    case ScalarOp::kRemainder:
    case ScalarOp::kFmod: return k == 0 ? Fill::fullRange() : Fill::ints(-40, 40).nonzero();
    case ScalarOp::kPow: return k == 0 ? Fill::ints(-3, 3) : Fill::ints(-2, 40);
    default: return Fill::fullRange();
  }
}

/// Max and min of +0 and -0 may return either zero (IEEE and the prim's doc leave it open):
/// make the second operand's zero the first's, so the sign of the result is defined.
void sameSignedZeros(std::vector<exec::HostTensor>& in, std::mt19937_64& /*rng*/) {
  if (in.size() < 2 || !in[0].isFloating()) return;
  auto &a = in[0].doubles(), &b = in[1].doubles();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] == 0 && b[i] == 0) b[i] = a[i];
}

std::string body(const ScalarOpInfo& info, const std::vector<std::string>& operands) {
  std::string s = "%y = prims." + std::string(info.name) + "(";
  for (size_t i = 0; i < operands.size(); ++i) s += (i ? ", " : "") + operands[i];
  return s + ")";
}

/// One elementwise case of `info` on `dtype`: operands of `shape`, filled by `fills`.
OpSpec plainCase(const ScalarOpInfo& info, DType dtype, const std::vector<int64_t>& shape,
                 const std::vector<Fill>& fills) {
  std::vector<std::pair<std::string, std::string>> inputs;
  std::vector<std::string> names;
  for (int k = 0; k < info.arity; ++k) {
    inputs.emplace_back(k ? "b" : "a", typeText(dtype, shape));
    names.push_back(k ? "%b" : "%a");
  }
  OpSpec spec{graphText(inputs, {body(info, names)}, "%y"), fills};
  if (ir::isFloating(dtype) && !exactInFloat(info.op)) spec.tolerance = ulps();
  if (info.op == ScalarOp::kMaximum || info.op == ScalarOp::kMinimum) spec.adjust = sameSignedZeros;
  return spec;
}

/// The operands behind a view: the graph reads transposed, offset-and-strided or broadcast data.
OpSpec viewCase(const ScalarOpInfo& info, DType dtype, const std::string& view, const std::vector<Fill>& fills) {
  const std::vector<int64_t> shape = {9, 17};
  std::vector<std::pair<std::string, std::string>> inputs;
  std::vector<std::string> lines, names;
  for (int k = 0; k < info.arity; ++k) {
    const std::string n = k ? "b" : "a", v = "%" + n + "v";
    // the first operand goes through the view; with two, the second is plain (transposed,
    // strided) or broadcast the other way (broadcast)
    if (view == "transposed" && k == 0) {
      inputs.emplace_back(n, typeText(dtype, {17, 9}));
      lines.push_back(v + " = prims.permute(%" + n + ") {dims = [1, 0]}");
    } else if (view == "offset_strided" && k == 0) {
      inputs.emplace_back(n, typeText(dtype, {11, 40}));
      lines.push_back(v + " = prims.slice(%" + n +
                      ") {limit_indices = [10, 37], start_indices = [1, 3], strides = [1, 2]}");
    } else if (view == "broadcast") {
      inputs.emplace_back(n, typeText(dtype, k == 0 ? std::vector<int64_t>{1, 17} : std::vector<int64_t>{9}));
      lines.push_back(v + " = prims.broadcast_in_dim(%" + n +
                      ") {broadcast_dimensions = " + (k == 0 ? "[0, 1]" : "[0]") + ", shape = [9, 17]}");
    } else {
      inputs.emplace_back(n, typeText(dtype, shape));
      names.push_back("%" + n);
      continue;
    }
    names.push_back(v);
  }
  lines.push_back(body(info, names));
  OpSpec spec{graphText(inputs, lines, "%y"), fills};
  if (ir::isFloating(dtype) && !exactInFloat(info.op)) spec.tolerance = ulps();
  if (info.op == ScalarOp::kMaximum || info.op == ScalarOp::kMinimum) spec.adjust = sameSignedZeros;
  return spec;
}

std::vector<Fill> fillsFor(const ScalarOpInfo& info, DType dtype) {
  std::vector<Fill> f;
  for (int k = 0; k < info.arity; ++k) {
    Fill base = dtype == DType::kBool   ? Fill::bools()
                : ir::isFloating(dtype) ? floatRange(info.op, k)
                                        : intRange(info.op, k);
    if (info.arity == 1)
      base = base.mixed();
    else
      base = k == 0 ? base.row() : base.col();
    f.push_back(base);
  }
  if (ir::isIntegral(dtype, false) &&
      (info.op == ScalarOp::kDiv || info.op == ScalarOp::kRemainder || info.op == ScalarOp::kFmod))
    f[1] = f[1].nonzero();  // the specials include 0: integer division by zero is an error, not a value
  return f;
}

/// The same fills with the special values sprinkled (1 in 8) instead of laid out first, so
/// short operands hold mostly random data.
std::vector<Fill> sprinkled(std::vector<Fill> fills) {
  for (Fill& f : fills) f = f.sprinkled();
  return fills;
}

void addScalarOp(Suite& s, const ScalarOpInfo& info, size_t index) {
  const std::string name = info.name;
  for (DType t : kAllTypes) {
    if (!prims::acceptsDType(info, t)) continue;
    const std::string prefix = name + "." + dt(t) + ".";
    const auto special = fillsFor(info, t), fills = sprinkled(special);
    // every pair of special values (binary) or every special value (unary), then random data
    addCase(s, prefix + "special_1025", plainCase(info, t, {1025}, special));
    // sizes around tile widths: f32 and add sweep them all, other dtypes take four each
    // (rotating, so the family covers every size in every dtype)
    std::vector<int64_t> sizes;
    if (t == DType::kF32 || info.op == ScalarOp::kAdd) {
      sizes = kTileSizes;
    } else {
      const size_t n = kTileSizes.size(), k = index + static_cast<size_t>(t) * 3;
      for (size_t j = 0; j < 4; ++j) sizes.push_back(kTileSizes[(k + j * 5) % n]);
    }
    for (int64_t n : sizes)
      if (n != 1025) addCase(s, prefix + "size_" + std::to_string(n), plainCase(info, t, {n}, fills));
    // views and degenerate shapes: every op in f32 and i32, a few ops in every dtype
    const bool views = t == DType::kF32 || t == DType::kI32 || info.op == ScalarOp::kAdd || info.op == ScalarOp::kNeg ||
                       info.op == ScalarOp::kEq || info.op == ScalarOp::kBitwiseAnd || info.op == ScalarOp::kMaximum;
    if (!views) continue;
    for (const char* view : {"transposed", "offset_strided", "broadcast"})
      addCase(s, prefix + view, viewCase(info, t, view, fills));
    addCase(s, prefix + "empty", plainCase(info, t, {0, 7}, fills));
    addCase(s, prefix + "size_1x1x1", plainCase(info, t, {1, 1, 1}, fills));
    addCase(s, prefix + "rank_0", plainCase(info, t, {}, fills));
  }
}

/// prims.where: pred ? a : b in every dtype; NaN in the unselected operand must not leak.
void addWhere(Suite& s) {
  for (DType t : kAllTypes) {
    const std::string prefix = "where." + dt(t) + ".";
    const Fill a = t == DType::kBool ? Fill::bools() : ir::isFloating(t) ? Fill::normal() : Fill::fullRange();
    const std::vector<Fill> special = {Fill::bools(), a.row(), a.col()}, fills = sprinkled(special);
    for (int64_t n : {int64_t{1025}, int64_t{7}, int64_t{33}, int64_t{4097}}) {
      const std::string ty = typeText(t, {n});
      addCase(s, prefix + (n == 1025 ? "special_1025" : "size_" + std::to_string(n)),
              {graphText({{"p", "bool[" + std::to_string(n) + "]"}, {"a", ty}, {"b", ty}},
                         {"%y = prims.where(%p, %a, %b)"}, "%y"),
               n == 1025 ? special : fills});
    }
    // a broadcast predicate and a transposed operand
    addCase(s, prefix + "broadcast_transposed",
            {graphText({{"p", "bool[9]"}, {"a", typeText(t, {17, 9})}, {"b", typeText(t, {9, 17})}},
                       {"%pv = prims.broadcast_in_dim(%p) {broadcast_dimensions = [0], shape = [9, 17]}",
                        "%av = prims.permute(%a) {dims = [1, 0]}", "%y = prims.where(%pv, %av, %b)"},
                       "%y"),
             fills});
    addCase(s, prefix + "empty",
            {graphText({{"p", "bool[0, 3]"}, {"a", typeText(t, {0, 3})}, {"b", typeText(t, {0, 3})}},
                       {"%y = prims.where(%p, %a, %b)"}, "%y"),
             fills});
  }
}

}  // namespace

void addElementwiseCases(Suite& s) {
  const auto& ops = prims::allScalarOps();
  for (size_t i = 0; i < ops.size(); ++i) addScalarOp(s, ops[i], i);
  addWhere(s);
}

// ---- convert_element_type --------------------------------------------------------------------

namespace {

/// The integer range of a dtype as doubles a float can hold without leaving it (i64: +-2^62).
std::pair<double, double> safeRange(DType t) {
  switch (t) {
    case DType::kU8: return {0, 255};
    case DType::kI8: return {-128, 127};
    case DType::kI16: return {-32768, 32767};
    case DType::kI32: return {-2147483648.0, 2147483647.0};
    default: return {-4611686018427387904.0, 4611686018427387904.0};
  }
}

/// Float sources of a float-to-int cast: values whose truncation is in the target's range
/// (out-of-range values are a separate case), half of them small with fractions to truncate.
Adjust inRangeForInt(DType src, DType dst) {
  return [src, dst](std::vector<exec::HostTensor>& in, std::mt19937_64& rng) {
    auto [lo, hi] = safeRange(dst);
    const double maxSrc = src == DType::kF16 ? 65504 : 1e300;
    lo = std::max(lo, -maxSrc), hi = std::min(hi, maxSrc);
    for (int64_t i = 0; i < in[0].numel(); ++i) {
      double v = i % 2 ? std::uniform_real_distribution<double>(lo, hi)(rng)
                       : std::normal_distribution<double>(0, 3)(rng) * (dst == DType::kU8 ? 0 : 1) +
                             (dst == DType::kU8 ? std::uniform_real_distribution<double>(0, 9)(rng) : 0);
      v = exec::roundToFloatType(v, src);
      if (std::trunc(v) > hi || std::trunc(v) < lo || std::isnan(v)) v = 0.5;
      in[0].setDouble(i, v);
    }
    in[0].setDouble(0, -0.0);
    in[0].setDouble(1, dst == DType::kU8 ? 0.75 : -0.75);  // truncation toward zero, not floor
  };
}

/// Narrowing float casts: values exactly halfway between two neighbours of the target
/// (round half to even), and just above and below a halfway point.
Adjust ties(DType src, DType dst) {
  return [src, dst](std::vector<exec::HostTensor>& in, std::mt19937_64& rng) {
    for (int64_t i = 0; i < in[0].numel(); ++i) {
      const double v = exec::roundToFloatType(std::normal_distribution<double>(0, 8)(rng), dst);
      const double step = ulpOf(v, dst);
      const double off = i % 3 == 0 ? 0.5 : i % 3 == 1 ? 0.625 : 0.375;  // the tie, just above, just below
      in[0].setDouble(i, exec::roundToFloatType(v + std::copysign(step * off, v), src));
    }
  };
}

}  // namespace

void addConvertCases(Suite& s) {
  for (DType src : kAllTypes)
    for (DType dst : kAllTypes) {
      if (src == dst) continue;
      const std::string name = "convert_element_type." + dt(src) + ".to_" + dt(dst);
      const std::string text = graphText({{"a", typeText(src, {1025})}},
                                         {"%y = prims.convert_element_type(%a) {dtype = " + dt(dst) + "}"}, "%y");
      const bool fsrc = ir::isFloating(src), fdst = ir::isFloating(dst);
      OpSpec spec{text,
                  {fsrc                  ? Fill::normal(3).mixed()
                   : src == DType::kBool ? Fill::bools()
                                         : Fill::fullRange().mixed()}};
      if (fsrc && ir::isIntegral(dst, false)) spec.adjust = inRangeForInt(src, dst);
      addCase(s, name, spec);
      if (fsrc && fdst && ir::dtypeSize(dst) <= ir::dtypeSize(src) && ulpOf(1, dst) > ulpOf(1, src))
        addCase(s, name + "_ties", {text, {Fill::normal()}, exact(), ties(src, dst)});
      if (fsrc && ir::isIntegral(dst, false))  // NaN, infinities, beyond the range: as documented (PyTorch's CPU cast)
        addCase(s, name + "_out_of_range", {text, {Fill::normal(1e12).mixed()}});
    }
}

}  // namespace plugsdk::conformance::op
