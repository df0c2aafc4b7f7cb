// Shared by the op tier's families (op_elementwise.cc, op_structure.cc, op_reduction.cc,
// op_library.cc): a case is a small .pgraph (mostly one prim node, sometimes behind views),
// a Fill per graph input saying how its data is made from the case's seed (random ranges,
// the dtype's special values, integer edges), and a tolerance rule. The tolerance rules are
// documented in docs/conformance.md, "Tolerances"; keep the two in step.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "conformance/runner/check.h"

namespace plugsdk::conformance::op {

using ir::DType;

/// The dtypes the op tier sweeps. Unclaimed dtypes skip by themselves (checkGraph).
inline const std::vector<DType> kFloatTypes = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64};
inline const std::vector<DType> kIntTypes = {DType::kI64, DType::kI32, DType::kI16, DType::kI8, DType::kU8};
inline const std::vector<DType> kAllTypes = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI64,
                                             DType::kI32, DType::kI16, DType::kI8,   DType::kU8,  DType::kBool};

/// Sizes around the tile widths a device is likely to use (powers of two and one either side).
inline const std::vector<int64_t> kTileSizes = {1,  7,   8,   9,   15,  16,   17,   31,   33,   63,
                                                65, 127, 129, 255, 257, 1023, 1025, 4097, 65537};

/// How one input of a case is filled. The random part draws from `random` (normal: hi is
/// the scale; uniform and log-uniform over [lo, hi); ints over [lo, hi], or the dtype's
/// whole range when lo > hi); `specials` mixes in the dtype's special values (floats: NaN,
/// +-inf, +-0, denormals, the largest and smallest normals, rounding ties; integers: MIN,
/// MAX, -1, 0, 1 and their neighbours): kMixed puts them first, kRow and kCol lay out their
/// cartesian product over the first |S|^2 elements of two inputs, so a binary op sees every
/// pair; after that block (and everywhere for kSprinkled) one element in 8 is a special value.
struct Fill {
  enum class Random { kNormal, kUniform, kLogUniform, kInt, kBool };
  enum class Specials { kNone, kMixed, kRow, kCol, kSprinkled };
  Random random = Random::kNormal;
  double lo = 0, hi = 1;
  Specials specials = Specials::kNone;
  bool nonZero = false;    ///< integers: a 0 becomes 1 (divisors; integer division by zero is an error)
  bool noHuge = false;     ///< floats: no finite specials above 1e4 (sin, cos, tan need |x| <= ~100)
  bool noNegZero = false;  ///< floats: no -0.0 (max/min of +0 and -0 may return either)
  int sprinkle = 8;        ///< after the laid-out block, one element in `sprinkle` is special (0: none)

  static Fill normal(double scale = 1) { return {Random::kNormal, 0, scale}; }
  static Fill uniform(double lo, double hi) { return {Random::kUniform, lo, hi}; }
  static Fill logUniform(double lo, double hi) { return {Random::kLogUniform, lo, hi}; }
  static Fill ints(double lo, double hi) { return {Random::kInt, lo, hi}; }
  static Fill fullRange() { return {Random::kInt, 1, 0}; }
  static Fill bools() { return {Random::kBool}; }
  Fill with(Specials s) const {
    Fill f = *this;
    f.specials = s;
    return f;
  }
  Fill mixed() const { return with(Specials::kMixed); }
  Fill row() const { return with(Specials::kRow); }
  Fill col() const { return with(Specials::kCol); }
  Fill sprinkled() const { return specials == Specials::kNone ? *this : with(Specials::kSprinkled); }
  Fill nonzero() const {
    Fill f = *this;
    f.nonZero = true;
    return f;
  }
  Fill withoutHuge() const {
    Fill f = *this;
    f.noHuge = true;
    return f;
  }
  /// Specials in the laid-out block only (reductions: not every row should end in NaN).
  Fill blockOnly() const {
    Fill f = *this;
    f.sprinkle = 0;
    return f;
  }
  Fill withoutNegZero() const {
    Fill f = *this;
    f.noNegZero = true;
    return f;
  }
};

/// The special values of a dtype, each exactly representable in it (see Fill).
std::vector<double> specialValues(DType t, const Fill& f);

/// A tensor of `dtype` and `shape` filled by `fill` from `rng`, every value already in the dtype.
exec::HostTensor makeTensor(DType dtype, const std::vector<int64_t>& shape, const Fill& fill, std::mt19937_64& rng);

/// Unit roundoff u = 2^-p of a floating dtype (p: its precision in bits, hidden bit included).
double unitRoundoff(DType t);
/// The ulp budget of a transcendental in `t` (docs/conformance.md: f32 and f64 4, f16 and bf16 1).
double ulpBudget(DType t);

/// Edits a case's inputs after filling (to keep them in the op's domain or to plant values),
/// drawing from the case's generator.
using Adjust = std::function<void(std::vector<exec::HostTensor>&, std::mt19937_64&)>;

/// Everything a tolerance rule may look at: the parsed graph and the case's inputs.
struct CaseData {
  const std::shared_ptr<const ir::Context>& ctx;
  const ir::Graph& graph;
  const std::vector<exec::HostTensor>& inputs;
};
using ToleranceRule = std::function<StatusOr<std::vector<Tolerance>>(const CaseData&)>;

/// 0 ulp, sign of zero and NaN included; integer and bool outputs are exact anyway.
ToleranceRule exact();
/// ulpBudget(output dtype) ulps on every output.
ToleranceRule ulps();
/// Per element |got - want| <= k * u(output dtype) * R_i, where R is the reference output of
/// the same graph on the inputs made non-negative (|x|) at `absInputs` (empty: all): the
/// classic a-priori bound for a sum of k - 1 terms (sum, matmul, convolution), e.g.
/// k = n for a sum of n elements (n - 1 roundings, plus one for the reference's rounding).
ToleranceRule absBound(double k, const std::vector<bool>& absInputs = {});
/// |got - want| <= s * max(1, max |reference|) on every output.
ToleranceRule relative(double s);

/// A case of the op tier: the graph text, a fill per graph input, an optional hook that
/// edits the inputs after filling (to keep them within the op's domain), and a tolerance.
struct OpSpec {
  std::string text;
  std::vector<Fill> fills;
  ToleranceRule tolerance = exact();
  Adjust adjust;
};

/// Registers `spec` as case "op.<name>".
void addCase(Suite& s, const std::string& name, OpSpec spec);

/// Runs one case: parse, fill, check on the device against the reference.
Outcome runOpCase(const CaseContext& c, const OpSpec& spec);

// ---- text helpers -------------------------------------------------------------------------------

/// "f32[2, 3]".
std::string typeText(DType t, const std::vector<int64_t>& shape);
/// "[1, 2]".
std::string listText(const std::vector<int64_t>& v);
/// "f32"
std::string dt(DType t);
/// A graph with the given inputs (name, type text), body lines (each "  %x = ..."), and
/// returned values.
std::string graphText(const std::vector<std::pair<std::string, std::string>>& inputs,
                      const std::vector<std::string>& body, const std::string& results);

// ---- the families ------------------------------------------------------------------------------

void addElementwiseCases(Suite& s);  ///< op_elementwise.cc: the 49 elementwise prims
void addConvertCases(Suite& s);      ///< op_elementwise.cc: convert_element_type, every dtype pair
void addStructureCases(Suite& s);    ///< op_structure.cc: the 8 structure prims, gather, scatter, iota, full, rand
void addReductionCases(Suite& s);    ///< op_reduction.cc: sum, prod, amax, amin, argmax, argmin
void addLibraryCases(Suite& s);      ///< op_library.cc: matmul, convolution, sdpa (prims and ATen)

}  // namespace plugsdk::conformance::op
