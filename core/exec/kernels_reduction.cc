// Reference kernels for the reduction ops (float64 accumulation / exact wrapping integers):
// sum, mean, prod, amax/amin, max/min(.dim), argmax/argmin, var/std, any/all, cumsum, logsumexp.
#include <algorithm>
#include <cmath>
#include <functional>

#include "core/exec/kernels.h"
#include "core/exec/kernels_pointwise_util.h"
#include "core/ops/reduction_internal.h"

namespace plugsdk::exec {

namespace {

using pw::loadFloat;
using pw::loadInt;
using Outputs = StatusOr<std::vector<HostTensor>>;

Outputs single(HostTensor t) {
  std::vector<HostTensor> v;
  v.push_back(std::move(t));
  return v;
}

/// How input elements map to output elements: the reduced-dims mask, per-input-dim strides into
/// the output (0 on reduced dims), and the number of elements each output reduces.
struct ReducePlan {
  std::vector<bool> mask;
  std::vector<int64_t> outStrides;
  int64_t outNumel = 1;
  int64_t groupSize = 1;
};

StatusOr<ReducePlan> makePlan(const RefKernelContext& c, const HostTensor& x) {
  ReducePlan p;
  ASSIGN_OR_RETURN(p.mask, ops::red::reducedDims(c, x.rank()));
  p.outStrides.assign(static_cast<size_t>(x.rank()), 0);
  for (size_t d = static_cast<size_t>(x.rank()); d-- > 0;) {
    if (p.mask[d]) {
      p.groupSize *= x.shape()[d];
    } else {
      p.outStrides[d] = p.outNumel;
      p.outNumel *= x.shape()[d];
    }
  }
  return p;
}

/// Calls f(inputIndex, outputIndex) for every input element, in row-major input order.
template <typename F>
void forEachReduced(const HostTensor& x, const ReducePlan& p, F&& f) {
  pw::forEachStrided<1>(x.shape(), {p.outStrides}, [&](int64_t i, const std::array<int64_t, 1>& off) { f(i, off[0]); });
}

Status checkNonEmpty(const RefKernelContext& c, const HostTensor& x, const ReducePlan& p) {
  for (size_t d = 0; d < p.mask.size(); ++d)
    if (p.mask[d] && x.shape()[d] == 0)
      return c.error("cannot reduce over dim " + std::to_string(d) + " of size 0 (self is " + x.typeString() +
                     "): the reduction has no identity");
  return Status::ok();
}

/// sum / prod: inputs cast to the output dtype, then accumulated (floats in double, ints wrapping).
Outputs accumulateKernel(const RefKernelContext& c, bool product) {
  const HostTensor& x = *c.input(0);
  ASSIGN_OR_RETURN(ReducePlan p, makePlan(c, x));
  HostTensor out = c.makeOutput();
  DType dt = out.dtype();
  if (ir::isFloating(dt)) {
    std::vector<double> acc(static_cast<size_t>(p.outNumel), product ? 1.0 : 0.0);
    forEachReduced(x, p, [&](int64_t i, int64_t o) {
      double v = loadFloat(x, i, dt);
      acc[static_cast<size_t>(o)] = product ? acc[static_cast<size_t>(o)] * v : acc[static_cast<size_t>(o)] + v;
    });
    for (int64_t o = 0; o < p.outNumel; ++o) out.setDouble(o, acc[static_cast<size_t>(o)]);
  } else {
    std::vector<int64_t> acc(static_cast<size_t>(p.outNumel), product ? 1 : 0);
    forEachReduced(x, p, [&](int64_t i, int64_t o) {
      int64_t v = loadInt(x, i, dt);
      int64_t& a = acc[static_cast<size_t>(o)];
      a = product ? pw::wrapMul(a, v) : pw::wrapAdd(a, v);
    });
    for (int64_t o = 0; o < p.outNumel; ++o) out.setInt(o, acc[static_cast<size_t>(o)]);
  }
  return single(std::move(out));
}

Outputs meanKernel(const RefKernelContext& c) {
  const HostTensor& x = *c.input(0);
  ASSIGN_OR_RETURN(ReducePlan p, makePlan(c, x));
  HostTensor out = c.makeOutput();
  std::vector<double> acc(static_cast<size_t>(p.outNumel), 0.0);
  forEachReduced(x, p, [&](int64_t i, int64_t o) { acc[static_cast<size_t>(o)] += loadFloat(x, i, out.dtype()); });
  for (int64_t o = 0; o < p.outNumel; ++o)
    out.setDouble(o, acc[static_cast<size_t>(o)] / static_cast<double>(p.groupSize));
  return single(std::move(out));
}

/// Whether v replaces the running extreme `best` (NaN wins and sticks; ties keep the first).
bool betterF(double v, double best, bool isMax) {
  if (std::isnan(best)) return false;
  if (std::isnan(v)) return true;
  return isMax ? v > best : v < best;
}
bool betterI(int64_t v, int64_t best, bool isMax) { return isMax ? v > best : v < best; }

/// amax / amin / max / min over the reduced dims.
Outputs extremeKernel(const RefKernelContext& c, bool isMax) {
  const HostTensor& x = *c.input(0);
  ASSIGN_OR_RETURN(ReducePlan p, makePlan(c, x));
  RETURN_IF_ERROR(checkNonEmpty(c, x, p));
  HostTensor out = c.makeOutput();
  std::vector<bool> seen(static_cast<size_t>(p.outNumel), false);
  forEachReduced(x, p, [&](int64_t i, int64_t o) {
    bool first = !seen[static_cast<size_t>(o)];
    seen[static_cast<size_t>(o)] = true;
    if (x.isFloating()) {
      double v = x.doubles()[static_cast<size_t>(i)];
      if (first || betterF(v, out.doubles()[static_cast<size_t>(o)], isMax)) out.setDouble(o, v);
    } else {
      int64_t v = x.ints()[static_cast<size_t>(i)];
      if (first || betterI(v, out.ints()[static_cast<size_t>(o)], isMax)) out.setInt(o, v);
    }
  });
  return single(std::move(out));
}

/// Splits x around one dim: outer * n * inner, element (o, k, i) at (o * n + k) * inner + i.
struct DimSplit {
  int64_t outer = 1, n = 1, inner = 1;
};

DimSplit splitAt(const HostTensor& x, const std::vector<bool>& mask) {
  DimSplit s;
  bool all = true;
  for (bool m : mask) all = all && m;
  if (all) {  // every dim (or a rank-0 tensor): the flattened tensor
    s.n = x.numel();
    return s;
  }
  size_t d = 0;
  while (!mask[d]) ++d;
  for (size_t k = 0; k < mask.size(); ++k) {
    if (k < d)
      s.outer *= x.shape()[k];
    else if (k == d)
      s.n = x.shape()[k];
    else
      s.inner *= x.shape()[k];
  }
  return s;
}

/// max.dim / min.dim (values and indices) and argmax / argmin (indices only).
Outputs argExtremeKernel(const RefKernelContext& c, bool isMax, bool withValues) {
  const HostTensor& x = *c.input(0);
  ASSIGN_OR_RETURN(ReducePlan p, makePlan(c, x));
  RETURN_IF_ERROR(checkNonEmpty(c, x, p));
  std::vector<HostTensor> outs;
  for (size_t k = 0; k < c.numOutputs(); ++k) outs.push_back(c.makeOutput(k));
  HostTensor& indices = outs.back();
  DimSplit s = splitAt(x, p.mask);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      int64_t base = o * s.n * s.inner + i, best = 0;
      for (int64_t k = 1; k < s.n; ++k) {
        int64_t at = base + k * s.inner, cur = base + best * s.inner;
        bool better = x.isFloating()
                          ? betterF(x.doubles()[static_cast<size_t>(at)], x.doubles()[static_cast<size_t>(cur)], isMax)
                          : betterI(x.ints()[static_cast<size_t>(at)], x.ints()[static_cast<size_t>(cur)], isMax);
        if (better) best = k;
      }
      int64_t outIdx = o * s.inner + i;
      indices.setInt(outIdx, best);
      if (withValues) {
        int64_t src = base + best * s.inner;
        if (x.isFloating())
          outs[0].setDouble(outIdx, x.doubles()[static_cast<size_t>(src)]);
        else
          outs[0].setInt(outIdx, x.ints()[static_cast<size_t>(src)]);
      }
    }
  }
  return outs;
}

/// var / std: two passes in double; divisor max(0, N - correction), correction none = 1.
Outputs varKernel(const RefKernelContext& c, bool takeSqrt) {
  const HostTensor& x = *c.input(0);
  ASSIGN_OR_RETURN(ReducePlan p, makePlan(c, x));
  HostTensor out = c.makeOutput();
  double correction = c.isNone("correction") ? 1.0 : pw::scalarDouble(c.attr("correction"));
  auto n = static_cast<size_t>(p.outNumel);
  std::vector<double> mean(n, 0.0), m2(n, 0.0);
  forEachReduced(x, p,
                 [&](int64_t i, int64_t o) { mean[static_cast<size_t>(o)] += x.doubles()[static_cast<size_t>(i)]; });
  for (double& m : mean) m /= static_cast<double>(p.groupSize);
  forEachReduced(x, p, [&](int64_t i, int64_t o) {
    double d = x.doubles()[static_cast<size_t>(i)] - mean[static_cast<size_t>(o)];
    m2[static_cast<size_t>(o)] += d * d;
  });
  double divisor = std::max(0.0, static_cast<double>(p.groupSize) - correction);
  for (size_t o = 0; o < n; ++o) {
    double v = m2[o] / divisor;
    out.setDouble(static_cast<int64_t>(o), takeSqrt ? std::sqrt(v) : v);
  }
  return single(std::move(out));
}

Outputs anyAllKernel(const RefKernelContext& c, bool isAny) {
  const HostTensor& x = *c.input(0);
  ASSIGN_OR_RETURN(ReducePlan p, makePlan(c, x));
  HostTensor out = c.makeOutput();
  std::vector<int64_t> acc(static_cast<size_t>(p.outNumel), isAny ? 0 : 1);
  forEachReduced(x, p, [&](int64_t i, int64_t o) {
    bool nz = x.getDouble(i) != 0.0;  // NaN is nonzero
    int64_t& a = acc[static_cast<size_t>(o)];
    a = isAny ? (a || nz) : (a && nz);
  });
  for (int64_t o = 0; o < p.outNumel; ++o) out.setInt(o, acc[static_cast<size_t>(o)]);
  return single(std::move(out));
}

Outputs cumsumKernel(const RefKernelContext& c) {
  const HostTensor& x = *c.input(0);
  ASSIGN_OR_RETURN(ReducePlan p, makePlan(c, x));
  HostTensor out = c.makeOutput();
  DType dt = out.dtype();
  DimSplit s = splitAt(x, p.mask);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      double accF = 0;
      int64_t accI = 0;
      for (int64_t k = 0; k < s.n; ++k) {
        int64_t at = (o * s.n + k) * s.inner + i;
        if (ir::isFloating(dt)) {
          accF += loadFloat(x, at, dt);
          out.setDouble(at, accF);
        } else {
          accI = pw::wrapAdd(accI, loadInt(x, at, dt));
          out.setInt(at, accI);
        }
      }
    }
  }
  return single(std::move(out));
}

/// log(sum(exp(x - m))) + m with m the group max (0 when infinite), as PyTorch computes it.
Outputs logsumexpKernel(const RefKernelContext& c) {
  const HostTensor& x = *c.input(0);
  ASSIGN_OR_RETURN(ReducePlan p, makePlan(c, x));
  HostTensor out = c.makeOutput();
  DType dt = out.dtype();
  auto n = static_cast<size_t>(p.outNumel);
  std::vector<double> mx(n, -INFINITY), sum(n, 0.0);
  forEachReduced(x, p, [&](int64_t i, int64_t o) {
    double v = loadFloat(x, i, dt);
    double& m = mx[static_cast<size_t>(o)];
    if (betterF(v, m, true)) m = v;
  });
  for (double& m : mx)
    if (std::isinf(m)) m = 0.0;
  forEachReduced(x, p, [&](int64_t i, int64_t o) {
    sum[static_cast<size_t>(o)] += std::exp(loadFloat(x, i, dt) - mx[static_cast<size_t>(o)]);
  });
  for (size_t o = 0; o < n; ++o) out.setDouble(static_cast<int64_t>(o), std::log(sum[o]) + mx[o]);
  return single(std::move(out));
}

}  // namespace

void registerReductionKernels(RefKernelTable& t) {
  for (const char* n : {"aten.sum.dim_IntList", "aten.sum"})
    t.add(n, [](const RefKernelContext& c) { return accumulateKernel(c, false); });
  for (const char* n : {"aten.prod.dim_int", "aten.prod"})
    t.add(n, [](const RefKernelContext& c) { return accumulateKernel(c, true); });
  for (const char* n : {"aten.mean.dim", "aten.mean"}) t.add(n, meanKernel);
  for (const char* n : {"aten.amax", "aten.max"})
    t.add(n, [](const RefKernelContext& c) { return extremeKernel(c, true); });
  for (const char* n : {"aten.amin", "aten.min"})
    t.add(n, [](const RefKernelContext& c) { return extremeKernel(c, false); });
  t.add("aten.max.dim", [](const RefKernelContext& c) { return argExtremeKernel(c, true, true); });
  t.add("aten.min.dim", [](const RefKernelContext& c) { return argExtremeKernel(c, false, true); });
  t.add("aten.argmax", [](const RefKernelContext& c) { return argExtremeKernel(c, true, false); });
  t.add("aten.argmin", [](const RefKernelContext& c) { return argExtremeKernel(c, false, false); });
  t.add("aten.var.correction", [](const RefKernelContext& c) { return varKernel(c, false); });
  t.add("aten.std.correction", [](const RefKernelContext& c) { return varKernel(c, true); });
  for (const char* n : {"aten.any.dim", "aten.any"})
    t.add(n, [](const RefKernelContext& c) { return anyAllKernel(c, true); });
  for (const char* n : {"aten.all.dim", "aten.all"})
    t.add(n, [](const RefKernelContext& c) { return anyAllKernel(c, false); });
  t.add("aten.cumsum", cumsumKernel);
  t.add("aten.logsumexp", logsumexpKernel);
}

}  // namespace plugsdk::exec
