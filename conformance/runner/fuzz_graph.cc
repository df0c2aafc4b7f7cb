// The graph fuzzer's generator (see fuzz_graph.h). It keeps its own model of every value
// (dtype, static shape, a bound on |value|, whether it is exact) and writes each node's output
// type from that model, so a disagreement with the core's inference shows up as a rejected
// graph. The bound and the exactness flag keep the graph numerically well-conditioned:
//  - a floating value's bound stays small (a larger one is scaled down by a power of two or
//    squashed by tanh), exp only sees bounded arguments, sqrt/rsqrt/reciprocal/div/log only
//    see |x| + 1 (log1p sees |x|), mul and matmul only multiply bounded values;
//  - only exact values (inputs and what exact ops make of them: views, neg, abs, relu,
//    max/min, clamp, power-of-two scaling in f32/f64, integer arithmetic, casts) are compared,
//    so a condition never flips on a rounding difference.
#include "conformance/runner/fuzz_graph.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "core/ir/dtype.h"

namespace plugsdk::conformance {
namespace {

using ir::DType;
using Shape = std::vector<int64_t>;

struct Val {
  std::string name;
  DType dtype;
  Shape shape;
  double mag;  ///< an upper estimate of max |value|
  bool exact;  ///< computed without rounding from the inputs
  bool input;
  int uses = 0;
  DType least = DType::kF64;  ///< the least precise float dtype it was computed through (f64: none)
};

/// Lower is less precise; integers count as exact, like f64.
int precisionRank(DType t) { return t == DType::kBF16 ? 0 : t == DType::kF16 ? 1 : t == DType::kF32 ? 2 : 3; }

/// The unit roundoff of a float dtype, and the fuzz tolerance of values computed through it
/// (fuzzTolerances in fuzz_check.h).
double unitRoundoff(DType t) {
  return t == DType::kBF16 ? 0x1p-8 : t == DType::kF16 ? 0x1p-11 : t == DType::kF32 ? 0x1p-24 : 0x1p-53;
}
double relativeTolerance(DType t) {
  return t == DType::kBF16 ? 8e-2 : t == DType::kF16 ? 1e-2 : t == DType::kF32 ? 1e-4 : 1e-10;
}

int64_t numel(const Shape& s) { return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>()); }

std::string shapeText(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

std::string typeText(DType dt, const Shape& s) { return std::string(ir::dtypeName(dt)) + shapeText(s); }

/// A float attribute that parses back as a float ("2.0", not "2").
std::string floatText(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

/// torch's result_type for tensor operands: dimensioned tensors first, zero-dim ones only
/// when they raise the category (written independently of core/ir/shape_rules.cc on purpose).
DType resultType(const std::vector<const Val*>& ops) {
  std::optional<DType> dim, zero;
  for (const Val* v : ops) {
    auto& acc = v->shape.empty() ? zero : dim;
    acc = acc ? ir::promoteTypes(*acc, v->dtype) : v->dtype;
  }
  if (!dim) return *zero;
  if (zero && ir::categoryOf(*zero) > ir::categoryOf(*dim)) return ir::promoteTypes(*dim, *zero);
  return *dim;
}

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1, y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[out.size() - 1 - i] = std::max(x, y);
  }
  return out;
}

class Generator {
 public:
  Generator(uint64_t seed, const plugin::DeviceCaps& caps, const FuzzOptions& o) : rng_(seed), caps_(caps), o_(o) {}

  std::string run(uint64_t seed) {
    chooseDtypes();
    makeInputs();
    const int ops = uniform(o_.minOps, std::max(o_.minOps, o_.maxOps));
    for (int i = 0; i < ops; ++i) step();
    if (body_.empty()) unary(0);
    return text(seed);
  }

 private:
  // --- randomness ---
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(uniform(0, static_cast<int>(v.size()) - 1))];
  }
  bool claimed(DType t) const { return caps_.supports(t); }
  /// dim in [0, rank) written as itself or as its negative form.
  int64_t dimArg(int64_t d, int64_t rank) { return chance(0.3) ? d - rank : d; }

  /// Scaling by a power of two is exact unless it lands among the subnormals, which our
  /// values only reach in f16 and bf16 (where a correct device rounds there and the
  /// float64 reference does not).
  static bool scalesExactly(DType t) { return t == DType::kF32 || t == DType::kF64; }

  // --- dtypes and inputs ---
  void chooseDtypes() {
    std::vector<std::pair<DType, int>> floats = {
        {DType::kF32, 70}, {DType::kF64, 12}, {DType::kF16, 9}, {DType::kBF16, 9}};
    int total = 0;
    for (auto& [t, w] : floats) total += claimed(t) ? w : 0;
    ft_ = DType::kF32;
    if (o_.floatType) {
      ft_ = *o_.floatType;
    } else if (total > 0) {
      int r = uniform(0, total - 1);
      for (auto& [t, w] : floats) {
        if (!claimed(t)) continue;
        r -= w;
        if (r < 0) {
          ft_ = t;
          break;
        }
      }
    }
    // half types round every op's result: keep their values smaller (docs: tolerances)
    magLimit_ = ft_ == DType::kF16 || ft_ == DType::kBF16 ? 8 : 32;
    for (DType t : {DType::kI32, DType::kI64})
      if (claimed(t)) ints_.push_back(t);
  }

  Shape randomShape() {
    const int rank = std::vector<int>{0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4}[static_cast<size_t>(uniform(0, 10))];
    Shape s;
    int64_t budget = o_.maxElements;
    for (int i = 0; i < rank; ++i) {
      const int64_t hi = std::min<int64_t>(33, budget / std::max<int64_t>(1, 2 * (rank - i - 1)));
      const int64_t d = chance(0.15) ? 1 : uniform(1, static_cast<int>(std::max<int64_t>(1, hi)));
      s.push_back(d);
      budget = std::max<int64_t>(1, budget / d);
    }
    return s;
  }

  /// A shape that broadcasts with `base`: a suffix of it with some dims set to 1.
  Shape broadcastableTo(const Shape& base) {
    Shape s(base.begin() + uniform(0, static_cast<int>(base.size()) / 2), base.end());
    for (auto& d : s)
      if (chance(0.2)) d = 1;
    return s;
  }

  int addInput(DType dt, Shape shape) {
    const bool exactInts = !ir::isFloating(dt);
    vals_.push_back({"x" + std::to_string(numInputs_++), dt, std::move(shape), exactInts ? 2.0 : 5.0, true, true, 0,
                     ir::isFloating(dt) ? dt : DType::kF64});
    return static_cast<int>(vals_.size()) - 1;
  }

  void makeInputs() {
    base_ = randomShape();
    const int n = uniform(1, std::max(1, o_.maxInputs - 1));  // one left for a matmul weight
    for (int i = 0; i < n; ++i) {
      DType dt = ft_;
      const int r = uniform(0, 99);
      if (i > 0 && r < 15 && !ints_.empty()) dt = pick(ints_);
      if (i > 0 && r >= 15 && r < 20 && claimed(DType::kBool)) dt = DType::kBool;
      addInput(dt, i == 0 ? base_ : broadcastableTo(base_));
    }
  }

  // --- emission ---
  int emit(const std::string& op, const std::vector<int>& args, const std::string& attrs, DType dt, Shape shape,
           double mag, bool exact) {
    std::string line = "  %v" + std::to_string(numNodes_) + " = " + op + "(";
    for (size_t i = 0; i < args.size(); ++i) {
      line += (i ? ", %" : "%") + vals_[static_cast<size_t>(args[i])].name;
      vals_[static_cast<size_t>(args[i])].uses++;
    }
    line += ")" + (attrs.empty() ? "" : " {" + attrs + "}") + " : " + typeText(dt, shape) + "\n";
    body_ += line;
    DType least = ir::isFloating(dt) ? dt : DType::kF64;
    for (int a : args)
      if (precisionRank(v(a).least) < precisionRank(least)) least = v(a).least;
    vals_.push_back({"v" + std::to_string(numNodes_++), dt, std::move(shape), mag, exact, false, 0, least});
    return static_cast<int>(vals_.size()) - 1;
  }
  const Val& v(int i) const { return vals_[static_cast<size_t>(i)]; }

  /// Recent values most of the time: long chains are what fusion works on.
  int pickOperand() {
    const int n = static_cast<int>(vals_.size());
    const int r = uniform(0, 9);
    if (r < 5) return n - 1;
    if (r < 8) return uniform(std::max(0, n - 5), n - 1);
    return uniform(0, n - 1);
  }

  /// A floating version of x (integers and bools converted to the graph's float type).
  int toFloat(int x) {
    if (ir::isFloating(v(x).dtype)) return x;
    // small integers convert exactly even to bf16
    return emit("aten._to_copy", {x}, "dtype = " + std::string(ir::dtypeName(ft_)), ft_, v(x).shape, v(x).mag,
                v(x).exact && v(x).mag <= 256);
  }

  /// x with |x| <= limit: scaled by a power of two (stays exact) or squashed by tanh.
  int tame(int x, double limit) {
    if (v(x).mag <= limit || !ir::isFloating(v(x).dtype)) return x;
    if (chance(0.3)) return emit("aten.tanh", {x}, "", v(x).dtype, v(x).shape, 1, false);
    const int k = static_cast<int>(std::ceil(std::log2(v(x).mag / limit)));
    const double c = std::ldexp(1.0, -k);
    return emit("aten.mul.Scalar", {x}, "other = " + floatText(c), v(x).dtype, v(x).shape, v(x).mag * c,
                v(x).exact && scalesExactly(v(x).dtype));
  }

  /// |x| + 1 (>= 1, for dividing by and taking reciprocals of).
  int absPlusOne(int x) {
    const int a = emit("aten.abs", {x}, "", v(x).dtype, v(x).shape, v(x).mag, v(x).exact);
    return emit("aten.add.Scalar", {a}, "other = 1.0", v(a).dtype, v(a).shape, v(a).mag + 1, false);
  }

  void step() {
    const int r = uniform(0, 99);
    if (r < 28)
      unary(pickOperand());
    else if (r < 55)
      binary(pickOperand());
    else if (r < 70)
      view(pickOperand());
    else if (r < 79)
      reduction(pickOperand());
    else if (r < 82)
      softmax(pickOperand());
    else if (r < 86)
      where(pickOperand());
    else if (r < 89)
      cat(pickOperand());
    else if (r < 92 && o_.matmul)
      matmul(pickOperand());
    else if (r < 94)
      siblings(pickOperand());
    else if (r < 97)
      castProbe(pickOperand());
    else
      normalize(pickOperand());
  }

  // --- pointwise ---
  int unary(int x) {
    if (v(x).dtype == DType::kBool) return emit("aten.logical_not", {x}, "", DType::kBool, v(x).shape, 1, true);
    if (!ir::isFloating(v(x).dtype)) {
      const Val& a = v(x);
      switch (uniform(0, 2)) {
        case 0: return emit("aten.neg", {x}, "", a.dtype, a.shape, a.mag, true);
        case 1: return emit("aten.abs", {x}, "", a.dtype, a.shape, a.mag, true);
        default: return emit("aten.clamp", {x}, "min = 0, max = 1", a.dtype, a.shape, 1, true);
      }
    }
    x = tame(x, magLimit_);
    const Val a = v(x);
    const DType dt = a.dtype;
    switch (uniform(0, 20)) {
      case 0: return emit("aten.neg", {x}, "", dt, a.shape, a.mag, a.exact);
      case 1: return emit("aten.abs", {x}, "", dt, a.shape, a.mag, a.exact);
      case 2: return emit("aten.relu", {x}, "", dt, a.shape, a.mag, a.exact);
      case 3: return emit("aten.sigmoid", {x}, "", dt, a.shape, 1, false);
      case 4: return emit("aten.tanh", {x}, "", dt, a.shape, 1, false);
      case 5: return emit("aten.sin", {x}, "", dt, a.shape, 1, false);
      case 6: return emit("aten.cos", {x}, "", dt, a.shape, 1, false);
      case 7: {
        const int y = tame(x, 5);
        return emit("aten.exp", {y}, "", dt, a.shape, std::exp(v(y).mag), false);
      }
      case 8: return emit("aten.erf", {x}, "", dt, a.shape, 1, false);
      case 9: return emit("aten.gelu", {x}, chance(0.5) ? "approximate = \"tanh\"" : "", dt, a.shape, a.mag, false);
      case 10: return emit("aten.silu", {x}, "", dt, a.shape, a.mag, false);
      case 11:
        return emit("aten.leaky_relu", {x}, "negative_slope = 0.125", dt, a.shape, a.mag, a.exact && scalesExactly(dt));
      case 12: return emit("aten.hardtanh", {x}, "", dt, a.shape, 1, a.exact);
      case 13: return emit("aten.clamp", {x}, "min = -0.5, max = 2.0", dt, a.shape, 2, a.exact);
      case 14: {
        const double c = pick(std::vector<double>{0.5, -2.0, 3.0, 0.1});
        const bool pow2 = c == 0.5 || c == -2.0;
        return emit("aten.mul.Scalar", {x}, "other = " + floatText(c), dt, a.shape, a.mag * std::fabs(c),
                    a.exact && pow2 && scalesExactly(dt));
      }
      case 15: {
        const double c = pick(std::vector<double>{1.0, -0.5, 2.5});
        return emit("aten.add.Scalar", {x}, "other = " + floatText(c), dt, a.shape, a.mag + std::fabs(c), false);
      }
      case 16: {
        const int y = tame(x, 4);
        return emit("aten.pow.Tensor_Scalar", {y}, "exponent = 2", dt, a.shape, v(y).mag * v(y).mag, false);
      }
      case 17: {  // log of |x| + 1, as log1p(|x|) or log(|x| + 1)
        if (chance(0.5)) {
          const int b = emit("aten.abs", {x}, "", dt, a.shape, a.mag, a.exact);
          return emit("aten.log1p", {b}, "", dt, a.shape, std::log1p(a.mag), false);
        }
        return emit("aten.log", {absPlusOne(x)}, "", dt, a.shape, std::log1p(a.mag), false);
      }
      case 18:  // of |x| + 1: near 0 sqrt turns a rounding error e into sqrt(e)
        return emit("aten.sqrt", {absPlusOne(x)}, "", dt, a.shape, std::sqrt(a.mag + 1), false);
      case 19: return emit("aten.rsqrt", {absPlusOne(x)}, "", dt, a.shape, 1, false);
      default: return emit("aten.reciprocal", {absPlusOne(x)}, "", dt, a.shape, 1, false);
    }
  }

  /// A second operand for x: an existing value that broadcasts with it, or a new input.
  std::optional<int> partner(int x, bool needExact) {
    std::vector<int> same, bcast;
    for (int i = 0; i < static_cast<int>(vals_.size()); ++i) {
      if (i == x || (needExact && !v(i).exact)) continue;
      auto s = broadcast(v(x).shape, v(i).shape);
      if (!s || numel(*s) > o_.maxElements) continue;
      (v(i).shape == v(x).shape ? same : bcast).push_back(i);
    }
    if (numInputs_ < o_.maxInputs && chance(0.25)) {
      DType dt = ft_;
      if (!ints_.empty() && chance(0.2)) dt = pick(ints_);
      return addInput(dt, broadcastableTo(v(x).shape));
    }
    if (!same.empty() && (bcast.empty() || chance(0.6))) return pick(same);
    if (!bcast.empty()) return pick(bcast);
    return std::nullopt;
  }

  int binary(int x) {
    auto yo = partner(x, false);
    if (!yo) return unary(x);
    int y = *yo;
    const bool anyBool = v(x).dtype == DType::kBool || v(y).dtype == DType::kBool;
    const Shape shape = *broadcast(v(x).shape, v(y).shape);
    if (v(x).dtype == DType::kBool && v(y).dtype == DType::kBool) {
      const char* op = chance(0.5) ? "aten.logical_and" : "aten.logical_or";
      return emit(op, {x, y}, "", DType::kBool, shape, 1, true);
    }
    const bool ints = !ir::isFloating(v(x).dtype) && !ir::isFloating(v(y).dtype);
    if (!ints) x = tame(x, magLimit_), y = tame(y, magLimit_);
    const Val a = v(x), b = v(y);
    if (ints && a.mag + b.mag > 1000) return unary(x);  // integers stay far from overflow
    const DType dt = resultType({&a, &b});
    const bool exact = a.exact && b.exact && !ir::isFloating(dt);
    switch (uniform(0, 6)) {
      case 0:
        if (!anyBool) return emit("aten.sub.Tensor", {x, y}, "", dt, shape, a.mag + b.mag, exact);
        [[fallthrough]];
      case 1: return emit("aten.add.Tensor", {x, y}, "", dt, shape, a.mag + b.mag, exact);
      case 2:
        if (a.mag * b.mag <= (ints ? 1000 : 4 * magLimit_))
          return emit("aten.mul.Tensor", {x, y}, "", dt, shape, std::max(1.0, a.mag) * std::max(1.0, b.mag), exact);
        return emit("aten.add.Tensor", {x, y}, "", dt, shape, a.mag + b.mag, exact);
      case 3:
        if (!anyBool) return emit("aten.maximum", {x, y}, "", dt, shape, std::max(a.mag, b.mag), a.exact && b.exact);
        [[fallthrough]];
      case 4:
        if (!anyBool) return emit("aten.minimum", {x, y}, "", dt, shape, std::max(a.mag, b.mag), a.exact && b.exact);
        [[fallthrough]];
      case 5: {  // x / (|y| + 1); a true division: integers give the default float
        if (anyBool) return emit("aten.add.Tensor", {x, y}, "", dt, shape, a.mag + b.mag, exact);
        int d = y;
        if (ir::isFloating(b.dtype)) {
          d = absPlusOne(y);
        } else {
          const int ab = emit("aten.abs", {y}, "", b.dtype, b.shape, b.mag, true);
          d = emit("aten.add.Scalar", {ab}, "other = 1", b.dtype, b.shape, b.mag + 1, true);
        }
        const Val dv = v(d);
        DType q = resultType({&a, &dv});
        if (!ir::isFloating(q)) q = DType::kF32;
        if (!claimed(q)) return emit("aten.add.Tensor", {x, y}, "", dt, shape, a.mag + b.mag, exact);
        return emit("aten.div.Tensor", {x, d}, "", q, shape, a.mag, false);
      }
      default: return compare(x);
    }
  }

  /// A bool value from comparing exact values (or x itself when it is a bool).
  int compare(int x) {
    if (v(x).dtype == DType::kBool) return x;
    if (!claimed(DType::kBool) || !v(x).exact) return unary(x);
    auto yo = partner(x, true);
    const char* ops[] = {"aten.gt", "aten.lt", "aten.ge", "aten.le", "aten.eq", "aten.ne"};
    const std::string op = ops[uniform(0, 5)];
    if (!yo || v(*yo).dtype == DType::kBool || chance(0.3)) {
      const std::string other = ir::isFloating(v(x).dtype) ? floatText(pick(std::vector<double>{0.0, 0.5, -1.0}))
                                                           : std::to_string(uniform(0, 2));
      return emit(op + ".Scalar", {x}, "other = " + other, DType::kBool, v(x).shape, 1, true);
    }
    return emit(op + ".Tensor", {x, *yo}, "", DType::kBool, *broadcast(v(x).shape, v(*yo).shape), 1, true);
  }

  int where(int x) {
    if (!claimed(DType::kBool) || v(x).dtype == DType::kBool) return unary(x);
    // the condition: an exact value compared, broadcasting with x
    int c = -1;
    for (int i = static_cast<int>(vals_.size()) - 1; i >= 0 && c < 0; --i)
      if (v(i).exact && v(i).dtype != DType::kBool && broadcast(v(i).shape, v(x).shape) && chance(0.5)) c = i;
    if (c < 0) c = x;
    if (!v(c).exact) return unary(x);
    const int cond = compare(c);
    auto yo = partner(x, false);
    int y = yo && v(*yo).dtype != DType::kBool ? *yo : -1;
    if (y < 0) {
      const int f = toFloat(x);
      y = emit("aten.mul.Scalar", {f}, "other = -0.5", v(f).dtype, v(f).shape, v(f).mag / 2, v(f).exact);
    }
    const auto s1 = broadcast(v(cond).shape, v(x).shape);
    const auto s = s1 ? broadcast(*s1, v(y).shape) : std::nullopt;
    if (!s || numel(*s) > o_.maxElements) return unary(x);
    const Val a = v(x), b = v(y);
    return emit("aten.where.self", {cond, x, y}, "", resultType({&a, &b}), *s, std::max(a.mag, b.mag),
                a.exact && b.exact);
  }

  // --- views ---
  int view(int x) {
    const Val a = v(x);
    const int64_t r = static_cast<int64_t>(a.shape.size());
    auto same = [&](const std::string& op, const std::string& attrs, Shape s) {
      return emit(op, {x}, attrs, a.dtype, std::move(s), a.mag, a.exact);
    };
    switch (uniform(0, 8)) {
      case 0:
        if (r >= 2) {
          std::vector<int64_t> perm(static_cast<size_t>(r));
          std::iota(perm.begin(), perm.end(), 0);
          std::shuffle(perm.begin(), perm.end(), rng_);
          Shape s;
          for (int64_t p : perm) s.push_back(a.shape[static_cast<size_t>(p)]);
          return same("aten.permute", "dims = " + shapeText(perm), s);
        }
        [[fallthrough]];
      case 1:
        if (r >= 2) {
          const int64_t d0 = uniform(0, static_cast<int>(r) - 1), d1 = (d0 + uniform(1, static_cast<int>(r) - 1)) % r;
          Shape s = a.shape;
          std::swap(s[static_cast<size_t>(d0)], s[static_cast<size_t>(d1)]);
          return same("aten.transpose.int",
                      "dim0 = " + std::to_string(dimArg(d0, r)) + ", dim1 = " + std::to_string(dimArg(d1, r)), s);
        }
        [[fallthrough]];
      case 2:
        for (int64_t d = 0; d < r; ++d)
          if (a.shape[static_cast<size_t>(d)] >= 2) {
            const int64_t n = a.shape[static_cast<size_t>(d)];
            const int64_t start = uniform(0, static_cast<int>(n) - 1);
            const bool toEnd = chance(0.3);
            const int64_t end = toEnd ? n : uniform(static_cast<int>(start) + 1, static_cast<int>(n));
            const int64_t stepBy = chance(0.3) ? 2 : 1;
            Shape s = a.shape;
            s[static_cast<size_t>(d)] = (end - start + stepBy - 1) / stepBy;
            const std::string startText = std::to_string(chance(0.3) ? start - n : start);
            const std::string endText = toEnd ? "9223372036854775807" : std::to_string(end);
            return same("aten.slice.Tensor",
                        "dim = " + std::to_string(dimArg(d, r)) + ", start = " + startText + ", end = " + endText +
                            ", step = " + std::to_string(stepBy),
                        s);
          }
        [[fallthrough]];
      case 3: {  // expand size-1 dims (and maybe a new leading one)
        Shape s = a.shape, size;
        if (chance(0.4)) s.insert(s.begin(), uniform(2, 4));
        const size_t lead = s.size() - a.shape.size();
        for (size_t i = 0; i < s.size(); ++i) {
          if (i >= lead && s[i] == 1 && chance(0.7)) s[i] = uniform(2, 6);
          size.push_back(i >= lead && s[i] == a.shape[i - lead] && chance(0.5) ? -1 : s[i]);
        }
        if (s != a.shape && numel(s) <= o_.maxElements) return same("aten.expand", "size = " + shapeText(size), s);
        [[fallthrough]];
      }
      case 4: {  // reshape: flatten, merge two dims, or split one
        Shape s;
        const int how = uniform(0, 2);
        if (how == 0 || r < 2) {
          s = {numel(a.shape)};
          if (r == 1 || (r == 0 && chance(0.5))) s = {1, numel(a.shape)};
        } else if (how == 1) {
          const size_t d = static_cast<size_t>(uniform(0, static_cast<int>(r) - 2));
          s = a.shape;
          s[d] *= s[d + 1];
          s.erase(s.begin() + static_cast<std::ptrdiff_t>(d) + 1);
        } else {
          s = a.shape;
          const size_t d = static_cast<size_t>(uniform(0, static_cast<int>(r) - 1));
          int64_t f = 1;
          for (int64_t k = 2; k < s[d]; ++k)
            if (s[d] % k == 0 && chance(0.5)) f = k;
          s.insert(s.begin() + static_cast<std::ptrdiff_t>(d), f);
          s[d + 1] /= f;
        }
        Shape size = s;
        if (!size.empty() && chance(0.3)) size[static_cast<size_t>(uniform(0, static_cast<int>(size.size()) - 1))] = -1;
        const bool useView = chance(0.5);
        return same(useView ? "aten.view" : "aten.reshape",
                    std::string(useView ? "size" : "shape") + " = " + shapeText(size), s);
      }
      case 5:
        if (r >= 1) {
          const int64_t d = uniform(0, static_cast<int>(r) - 1), n = a.shape[static_cast<size_t>(d)];
          const int64_t i = uniform(static_cast<int>(-n), static_cast<int>(n) - 1);
          Shape s = a.shape;
          s.erase(s.begin() + d);
          return same("aten.select.int", "dim = " + std::to_string(dimArg(d, r)) + ", index = " + std::to_string(i), s);
        }
        [[fallthrough]];
      case 6: {
        const int64_t d = uniform(0, static_cast<int>(r));
        Shape s = a.shape;
        s.insert(s.begin() + d, 1);
        return same("aten.unsqueeze", "dim = " + std::to_string(dimArg(d, r + 1)), s);
      }
      case 7:
        for (int64_t d = 0; d < r; ++d)
          if (a.shape[static_cast<size_t>(d)] == 1) {
            Shape s = a.shape;
            s.erase(s.begin() + d);
            return same("aten.squeeze.dim", "dim = " + std::to_string(dimArg(d, r)), s);
          }
        [[fallthrough]];
      default:
        if (r >= 1) {
          std::vector<int64_t> dims;
          for (int64_t d = 0; d < r; ++d)
            if (chance(0.5)) dims.push_back(dimArg(d, r));
          if (dims.empty()) dims.push_back(r - 1);
          return same("aten.flip", "dims = " + shapeText(dims), a.shape);
        }
        return unary(x);
    }
  }

  /// A cast to another claimed float type (and mostly back): it rounds once, to nearest
  /// even, which is exact for an exact operand, so a device whose casts truncate fails.
  int castProbe(int x) {
    x = tame(toFloat(x), magLimit_);
    std::vector<DType> others;
    for (DType t : {DType::kF16, DType::kBF16, DType::kF32})
      if (claimed(t) && t != v(x).dtype) others.push_back(t);
    if (others.empty()) return unary(x);
    const DType t = pick(others);
    const int c =
        emit("aten._to_copy", {x}, "dtype = " + std::string(ir::dtypeName(t)), t, v(x).shape, v(x).mag, v(x).exact);
    if (chance(0.3)) return c;
    return emit("aten._to_copy", {c}, "dtype = " + std::string(ir::dtypeName(ft_)), ft_, v(c).shape, v(c).mag,
                v(c).exact);
  }

  // --- reductions and normalizations ---
  /// A non-empty random subset of [0, rank), ascending.
  std::vector<int64_t> someDims(int64_t rank) {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      if (chance(0.4)) dims.push_back(d);
    if (dims.empty()) dims.push_back(uniform(0, static_cast<int>(rank) - 1));
    return dims;
  }

  int reduction(int x) {
    const int64_t r = static_cast<int64_t>(v(x).shape.size());
    if (r == 0 || v(x).dtype == DType::kBool) return unary(x);
    if (ir::isFloating(v(x).dtype)) x = tame(x, magLimit_);
    const Val a = v(x);
    const std::vector<int64_t> dims = someDims(r);
    const bool keep = chance(0.4);
    Shape s;
    int64_t count = 1;
    std::vector<int64_t> dimArgs;
    for (int64_t d = 0; d < r; ++d) {
      const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
      if (reduced) count *= a.shape[static_cast<size_t>(d)], dimArgs.push_back(dimArg(d, r));
      if (!reduced || keep) s.push_back(reduced ? 1 : a.shape[static_cast<size_t>(d)]);
    }
    const std::string attrs = "dim = " + shapeText(dimArgs) + (keep ? ", keepdim = true" : "");
    const int kind = uniform(0, 3);
    if (kind == 0) return emit("aten.amax", {x}, attrs, a.dtype, s, a.mag, a.exact);
    if (kind == 1) return emit("aten.amin", {x}, attrs, a.dtype, s, a.mag, a.exact);
    if (!ir::isFloating(a.dtype)) {  // integer sums are exact, in i64
      if (!claimed(DType::kI64) || a.mag * static_cast<double>(count) > 2000) return unary(x);
      return emit("aten.sum.dim_IntList", {x}, attrs, DType::kI64, s, a.mag * static_cast<double>(count), true);
    }
    // A sum adds up the rounding errors its operands carry, and they can be coherent (x minus
    // its own rounded mean sums to about 0 plus count times the mean's error), while the
    // tolerance only scales with the result: sum only while count x |x| x u stays well within
    // it, else take the mean (whose error is the operands' average error).
    const double u = a.exact ? unitRoundoff(DType::kF32) : unitRoundoff(a.least);
    const bool sumOk = static_cast<double>(count) * a.mag * u * 2 <= relativeTolerance(a.least);
    if (kind == 2 && sumOk)
      return emit("aten.sum.dim_IntList", {x}, attrs, a.dtype, s, a.mag * static_cast<double>(count), false);
    return emit("aten.mean.dim", {x}, attrs, a.dtype, s, a.mag, false);
  }

  int softmax(int x) {
    x = tame(toFloat(x), magLimit_);
    const Val a = v(x);
    const int64_t r = static_cast<int64_t>(a.shape.size());
    if (r == 0) return unary(x);
    const int64_t d = uniform(0, static_cast<int>(r) - 1), n = a.shape[static_cast<size_t>(d)];
    const std::string attrs = "dim = " + std::to_string(dimArg(d, r)) + ", half_to_float = false";
    if (chance(0.7)) return emit("aten._softmax", {x}, attrs, a.dtype, a.shape, 1, false);
    return emit("aten._log_softmax", {x}, attrs, a.dtype, a.shape, 2 * a.mag + std::log(static_cast<double>(n)) + 1,
                false);
  }

  /// x minus (or divided by) a reduction of x over one dim, kept: a reduction whose result
  /// broadcasts back over its own input (softmax's shape, the fusion kind that matters).
  int normalize(int x) {
    x = tame(toFloat(x), magLimit_);
    const Val a = v(x);
    const int64_t r = static_cast<int64_t>(a.shape.size());
    if (r == 0) return unary(x);
    const int64_t d = uniform(0, static_cast<int>(r) - 1);
    Shape s = a.shape;
    s[static_cast<size_t>(d)] = 1;
    const std::string attrs = "dim = [" + std::to_string(dimArg(d, r)) + "], keepdim = true";
    const bool max = chance(0.5);
    const int red = emit(max ? "aten.amax" : "aten.mean.dim", {x}, attrs, a.dtype, s, a.mag, max && a.exact);
    if (chance(0.7)) return emit("aten.sub.Tensor", {x, red}, "", a.dtype, a.shape, 2 * a.mag, false);
    return emit("aten.div.Tensor", {x, absPlusOne(red)}, "", a.dtype, a.shape, a.mag, false);
  }

  /// Two pointwise ops over one input (a horizontal fusion), sometimes joined again.
  int siblings(int x) {
    const int a = unary(x), b = unary(x);
    if (chance(0.5) || v(a).shape != v(b).shape) return b;
    const Val va = v(a), vb = v(b);
    if (va.dtype == DType::kBool || vb.dtype == DType::kBool) return b;
    return emit("aten.add.Tensor", {a, b}, "", resultType({&va, &vb}), va.shape, va.mag + vb.mag,
                va.exact && vb.exact && !ir::isFloating(resultType({&va, &vb})));
  }

  int cat(int x) {
    const Val a = v(x);
    const int64_t r = static_cast<int64_t>(a.shape.size());
    if (r == 0 || 2 * numel(a.shape) > o_.maxElements) return unary(x);
    const int64_t d = uniform(0, static_cast<int>(r) - 1);
    int y = -1;
    for (int i = 0; i < static_cast<int>(vals_.size()) && y < 0; ++i) {
      const Val& b = v(i);
      if (i == x || b.dtype != a.dtype || b.shape.size() != a.shape.size() || !chance(0.5)) continue;
      bool ok = numel(a.shape) + numel(b.shape) <= o_.maxElements;
      for (int64_t k = 0; k < r; ++k)
        ok = ok && (k == d || b.shape[static_cast<size_t>(k)] == a.shape[static_cast<size_t>(k)]);
      if (ok) y = i;
    }
    if (y < 0) y = unary(x);
    if (v(y).dtype != a.dtype || v(y).shape.size() != a.shape.size()) return y;
    Shape s = a.shape;
    s[static_cast<size_t>(d)] += v(y).shape[static_cast<size_t>(d)];
    return emit("aten.cat", {x, y}, "dim = " + std::to_string(dimArg(d, r)), a.dtype, s, std::max(a.mag, v(y).mag),
                a.exact && v(y).exact);
  }

  /// mm (or bmm for rank 3) of x with a new weight input or with x transposed.
  int matmul(int x) {
    x = tame(toFloat(x), 4);
    Val a = v(x);
    const bool batched = a.shape.size() == 3;
    if (!batched && a.shape.size() != 2) {
      const int64_t last = a.shape.empty() ? 1 : a.shape.back();
      const Shape s = {numel(a.shape) / last, last};
      x = emit("aten.reshape", {x}, "shape = " + shapeText(s), a.dtype, s, a.mag, a.exact);
      a = v(x);
    }
    const size_t m = batched ? 1 : 0;
    const int64_t k = a.shape[m + 1];
    int y;
    if (numInputs_ < o_.maxInputs && chance(0.6)) {
      Shape w = {k, uniform(1, 33)};
      if (batched) w.insert(w.begin(), a.shape[0]);
      y = addInput(a.dtype, w);  // mm and bmm take one dtype
    } else {
      Shape w = a.shape;
      std::swap(w[m], w[m + 1]);
      y = emit("aten.transpose.int", {x}, batched ? "dim0 = 1, dim1 = 2" : "dim0 = 0, dim1 = 1", a.dtype, w, a.mag,
               a.exact);
    }
    Shape s = a.shape;
    s[m + 1] = v(y).shape[m + 1];
    if (numel(s) > o_.maxElements) return unary(x);
    return emit(batched ? "aten.bmm" : "aten.mm", {x, y}, "", a.dtype, s,
                static_cast<double>(k) * a.mag * std::max(v(y).mag, 1.0), false);
  }

  // --- the text ---
  std::string text(uint64_t seed) {
    std::vector<std::string> outs;
    for (const Val& x : vals_)
      if (!x.input && x.uses == 0) outs.push_back("%" + x.name);
    if (outs.size() > 6) outs.erase(outs.begin(), outs.end() - 6);
    std::vector<const Val*> inner;
    for (const Val& x : vals_)
      if (!x.input && x.uses > 0) inner.push_back(&x);
    if (!inner.empty() && chance(0.25)) outs.push_back("%" + pick(inner)->name);
    std::string sig;
    for (const Val& x : vals_)
      if (x.input) sig += (sig.empty() ? "%" : ", %") + x.name + ": " + typeText(x.dtype, x.shape);
    std::string ret;
    for (const std::string& o : outs) ret += (ret.empty() ? " " : ", ") + o;
    return "# plugsdk-fuzz graph, seed " + std::to_string(seed) + "\ngraph @fuzz(" + sig + ") {\n" + body_ +
           "  return" + ret + "\n}\n";
  }
  std::mt19937_64 rng_;
  const plugin::DeviceCaps& caps_;
  FuzzOptions o_;
  DType ft_ = DType::kF32;
  double magLimit_ = 32;
  std::vector<DType> ints_;
  Shape base_;
  std::vector<Val> vals_;
  std::string body_;
  int numInputs_ = 0, numNodes_ = 0;
};

}  // namespace

std::string randomGraph(uint64_t seed, const plugin::DeviceCaps& caps, const FuzzOptions& options) {
  return Generator(seed, caps, options).run(seed);
}

}  // namespace plugsdk::conformance
