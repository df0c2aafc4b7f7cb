// The op tier's reduction family: sum, prod, amax, amin, argmax and argmin over every
// non-empty subset of the axes of a rank-3 tensor (and of a rank-4 one for sum and amax),
// over long rows that cross tile boundaries, empty and size-1 dims, and views.
//
// Tolerances: sum and prod on small integers (sum) or +-1 with a few +-2 (prod) are exact in
// any order of accumulation in every dtype, so they must be exact: a skipped element or tile
// shows. On random data a device may accumulate in any order in the input dtype: per output
// |err| <= n u sum|x_i| (sum) or n u |prod x_i| (prod), n the number of reduced elements.
// amax, amin, argmax and argmin are exact, NaN propagation and first-index ties included.
#include <algorithm>
#include <cmath>

#include "conformance/runner/op_common.h"

namespace plugsdk::conformance::op {
namespace {

/// kLastExtreme: the unique extreme of every reduced group sits at its last position (where
/// a skipped tail would lose it).
enum class Data { kRandom, kExact, kSpecial, kTies, kLastExtreme };

/// The largest integer n such that every integer up to n is exact in a floating dtype.
double exactIntegers(DType t) { return 1.0 / unitRoundoff(t); }

/// Small-integer data for an exact sum of `n` terms: values in [-k, k] with n k within the
/// dtype's exact integers (f16: 2048, bf16: 256), so no partial sum, in any order, rounds.
Fill exactSumFill(DType t, int64_t n) {
  if (!ir::isFloating(t)) return Fill::fullRange().mixed();  // integers wrap: exact in any order
  const double k = std::floor(exactIntegers(t) / static_cast<double>(std::max<int64_t>(n, 1)));
  return Fill::ints(-std::clamp(k, 1.0, 3.0), std::clamp(k, 1.0, 3.0));
}

/// When even +-1 could exceed the exact integers (bf16, long sums): +-1 on about
/// exactIntegers / 2 of the n elements, zeros elsewhere (over 2x the mean is out of reach).
Adjust sparseSigns(DType t, int64_t n) {
  const double density = exactIntegers(t) / 2 / static_cast<double>(std::max<int64_t>(n, 1));
  if (!ir::isFloating(t) || density >= 1) return nullptr;
  return [density](std::vector<exec::HostTensor>& in, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(0, 1);
    for (int64_t i = 0; i < in[0].numel(); ++i) in[0].setDouble(i, u(rng) < density ? ((rng() & 1) ? 1.0 : -1.0) : 0.0);
  };
}

/// Integer products: odd factors, so the wrapped product stays odd and every factor counts
/// (even factors drive a wrapped product to 0 within a few terms).
void oddFactors(std::vector<exec::HostTensor>& in, std::mt19937_64& /*rng*/) {
  for (int64_t& v : in[0].ints()) v = exec::wrapToIntType(v | 1, in[0].dtype());
}

/// +-1 with an occasional +-2: every partial product is a power of two, exact in any order.
void plusMinusOne(std::vector<exec::HostTensor>& in, std::mt19937_64& rng) {
  exec::HostTensor& a = in[0];
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double sign = (rng() & 1) ? -1.0 : 1.0;
    a.setDouble(i, sign * (rng() % 61 == 0 ? 2.0 : 1.0));
  }
}

/// Data in [1, 50] with the group's extreme (100 for max, 0 for min) at the last index of
/// every reduced dim.
Adjust lastExtreme(bool max, const std::vector<int64_t>& dims) {
  return [max, dims](std::vector<exec::HostTensor>& in, std::mt19937_64& /*rng*/) {
    exec::HostTensor& a = in[0];
    const auto strides = a.strides();
    for (int64_t i = 0; i < a.numel(); ++i) {
      bool last = true;
      for (int64_t d : dims) {
        const auto k = static_cast<size_t>(d);
        last = last && (i / strides[k]) % a.shape()[k] == a.shape()[k] - 1;
      }
      if (last) a.setInt(i, max ? 100 : 0);
    }
  };
}

std::string reduce(const std::string& prim, const std::vector<int64_t>& dims) {
  if (prim == "argmax" || prim == "argmin")
    return "%y = prims." + prim + "(%a) {dim = " + std::to_string(dims[0]) + "}";
  return "%y = prims." + prim + "(%a) {dims = " + listText(dims) + "}";
}

/// One reduction case of `prim` on `dtype` over `dims` of `shape`, reading the input through
/// `view` lines (which end in %v) when given.
OpSpec reductionCase(const std::string& prim, DType t, const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& dims, Data data, const std::vector<std::string>& view = {},
                     const std::vector<int64_t>& viewShape = {}) {
  const std::vector<int64_t>& logical = view.empty() ? shape : viewShape;
  int64_t n = 1;
  for (int64_t d : dims) n *= logical[static_cast<size_t>(d)];
  std::vector<std::string> lines = view;
  std::string r = reduce(prim, dims);
  if (!view.empty()) r.replace(r.find("(%a)"), 4, "(%v)");
  lines.push_back(r);
  OpSpec spec{graphText({{"a", typeText(t, shape)}}, lines, "%y"), {}};
  const bool fl = ir::isFloating(t);
  if (prim == "sum") {
    spec.fills = {data == Data::kExact     ? exactSumFill(t, n)
                  : data == Data::kSpecial ? Fill::normal().mixed().withoutHuge().blockOnly()
                                           : Fill::normal()};
    if (fl && data != Data::kExact) spec.tolerance = absBound(static_cast<double>(std::max<int64_t>(n, 1)));
    if (data == Data::kExact) spec.adjust = sparseSigns(t, n);
  } else if (prim == "prod") {
    spec.fills = {fl ? Fill::uniform(0.5, 2) : Fill::fullRange().mixed()};
    if (fl && data == Data::kExact) spec.adjust = plusMinusOne;
    if (!fl) spec.adjust = oddFactors;
    if (fl && data != Data::kExact) spec.tolerance = absBound(static_cast<double>(std::max<int64_t>(n, 1)));
  } else {
    // extremes: every special (no -0.0: max(+0, -0) may return either), ties among them
    spec.fills = {t == DType::kBool ? Fill::bools()
                  : fl              ? Fill::normal().mixed().withoutNegZero().blockOnly()
                                    : Fill::fullRange().mixed().blockOnly()};
    if (data == Data::kTies) spec.fills = {t == DType::kBool ? Fill::bools() : Fill::ints(0, 3)};
    if (data == Data::kLastExtreme) {
      const bool max = prim == "amax" || prim == "argmax";
      spec.fills = {t != DType::kBool ? Fill::ints(1, 50) : max ? Fill::ints(0, 0) : Fill::ints(1, 1)};
      spec.adjust = lastExtreme(max, dims);
    }
  }
  return spec;
}

std::string dimsName(const std::vector<int64_t>& dims) {
  std::string s = "dims";
  for (int64_t d : dims) s += "_" + std::to_string(d);
  return s;
}

std::vector<std::vector<int64_t>> subsets(int rank) {
  std::vector<std::vector<int64_t>> out;
  for (int m = 1; m < (1 << rank); ++m) {
    std::vector<int64_t> dims;
    for (int d = 0; d < rank; ++d)
      if (m & (1 << d)) dims.push_back(d);
    out.push_back(dims);
  }
  return out;
}

bool accepts(const std::string& prim, DType t) {
  if (t != DType::kBool) return true;
  return prim == "amax" || prim == "amin";
}

}  // namespace

void addReductionCases(Suite& s) {
  const std::vector<int64_t> rank3 = {5, 9, 17}, rank4 = {3, 4, 5, 9};
  for (const std::string prim : {"sum", "prod", "amax", "amin", "argmax", "argmin"}) {
    const bool arg = prim == "argmax" || prim == "argmin";
    const bool arith = prim == "sum" || prim == "prod";
    for (DType t : kAllTypes) {
      if (!accepts(prim, t)) continue;
      const std::string prefix = prim + "." + dt(t) + ".";
      const bool fl = ir::isFloating(t), full = t == DType::kF32;
      // every non-empty subset of a rank-3 tensor's axes (argmax/argmin: every axis); other
      // dtypes than f32 take a few
      for (const auto& dims : arg ? std::vector<std::vector<int64_t>>{{0}, {1}, {2}} : subsets(3)) {
        const bool few = dims == std::vector<int64_t>{2} || dims == std::vector<int64_t>{0, 2} || dims.size() == 3;
        if (!full && !few && !arg) continue;
        const std::string name = prefix + (arg ? "dim_" + std::to_string(dims[0]) : dimsName(dims));
        if (arith && fl) {
          addCase(s, name + "_exact", reductionCase(prim, t, rank3, dims, Data::kExact));
          addCase(s, name + "_random", reductionCase(prim, t, rank3, dims, Data::kRandom));
        } else {
          addCase(s, name, reductionCase(prim, t, rank3, dims, Data::kSpecial));
        }
        if (!arith && (arg || few))  // many equal extremes: the first index must win
          addCase(s, name + "_ties", reductionCase(prim, t, rank3, dims, Data::kTies));
        if (!arith && (full || dims.size() == 3))
          addCase(s, name + "_extreme_last", reductionCase(prim, t, rank3, dims, Data::kLastExtreme));
      }
      if (full && (prim == "sum" || prim == "amax"))
        for (const auto& dims : subsets(4))
          addCase(s, prefix + "rank_4_" + dimsName(dims),
                  reductionCase(prim, t, rank4, dims, prim == "sum" ? Data::kExact : Data::kSpecial));
      // long rows across tile boundaries (innermost and outer axis), empty and size-1 dims
      const Data d = arith && fl ? Data::kExact : Data::kSpecial;
      for (int64_t n : {int64_t{7}, int64_t{33}, int64_t{1025}, int64_t{65537}}) {
        if (!full && n == 7) continue;
        addCase(s, prefix + "row_" + std::to_string(n), reductionCase(prim, t, {3, n}, {1}, d));
        if (!arith)
          addCase(s, prefix + "row_" + std::to_string(n) + "_extreme_last",
                  reductionCase(prim, t, {3, n}, {1}, Data::kLastExtreme));
      }
      addCase(s, prefix + "column_129", reductionCase(prim, t, {129, 9}, {0}, d));
      if (arith) {
        addCase(s, prefix + "empty_dim", reductionCase(prim, t, {7, 0, 3}, {1}, d));
        addCase(s, prefix + "empty_kept", reductionCase(prim, t, {0, 5}, {1}, d));
      }
      if (!full && t != DType::kI32) continue;
      addCase(s, prefix + "size_1_dims",
              reductionCase(prim, t, {1, 17, 1}, arg ? std::vector<int64_t>{1} : std::vector<int64_t>{0, 1}, d));
      if (!arg) addCase(s, prefix + "rank_0", reductionCase(prim, t, {}, {}, d));
      // views: the reduction reads transposed and broadcast data
      addCase(s, prefix + "transposed",
              reductionCase(prim, t, {17, 33}, {1}, d, {"%v = prims.permute(%a) {dims = [1, 0]}"}, {33, 17}));
      addCase(
          s, prefix + "broadcast",
          reductionCase(prim, t, {17}, arg ? std::vector<int64_t>{1} : std::vector<int64_t>{0}, d,
                        {"%v = prims.broadcast_in_dim(%a) {broadcast_dimensions = [1], shape = [9, 17]}"}, {9, 17}));
      if (fl && prim == "sum")
        addCase(s, prefix + "row_1025_special", reductionCase(prim, t, {3, 1025}, {1}, Data::kSpecial));
    }
  }
}

}  // namespace plugsdk::conformance::op
