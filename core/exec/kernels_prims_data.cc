// Reference kernels for the data and library prims: reductions, argmax/argmin, gather,
// scatter, iota, full, rand, matmul, convolution and sdpa.
#include <cmath>
#include <string>

#include "core/exec/kernels.h"
#include "core/exec/kernels_nn_common.h"
#include "core/exec/kernels_shape_util.h"
#include "core/prims/scalar_ops.h"

namespace plugsdk::exec {

namespace {

using Outs = StatusOr<std::vector<HostTensor>>;
using prims::ScalarOp;

Outs single(HostTensor t) {
  std::vector<HostTensor> v;
  v.push_back(std::move(t));
  return v;
}

/// Maps each input element to its output element: the input index with reduced dims dropped.
std::vector<int64_t> reducedStrides(const HostTensor& a, const std::vector<bool>& reduced) {
  std::vector<int64_t> st(a.shape().size(), 0);
  int64_t run = 1;
  for (size_t d = a.shape().size(); d-- > 0;) {
    if (reduced[d]) continue;
    st[d] = run;
    run *= a.shape()[d];
  }
  return st;
}

/// sum / prod / amax / amin over `dims`, combining in row-major order of the input.
Outs reduceKernel(const RefKernelContext& c, ScalarOp combine, double initF, int64_t initI) {
  const HostTensor& a = *c.input(0);
  std::vector<bool> reduced(a.shape().size(), false);
  for (int64_t d : c.getInts("dims")) reduced[static_cast<size_t>(d)] = true;
  const std::vector<int64_t> st = reducedStrides(a, reduced);
  HostTensor out = c.makeOutput();
  std::vector<double> accF(static_cast<size_t>(out.numel()), initF);
  std::vector<int64_t> accI(static_cast<size_t>(out.numel()), initI);
  const bool fp = a.isFloating();
  const bool extreme = combine == ScalarOp::kMaximum || combine == ScalarOp::kMinimum;
  std::vector<bool> seen(extreme ? static_cast<size_t>(out.numel()) : 0, false);
  forEachIndex(a.shape(), [&](const std::vector<int64_t>& idx, int64_t linear) {
    const auto o = static_cast<size_t>(offsetOf(idx, st));
    const auto l = static_cast<size_t>(linear);
    if (extreme && !seen[o]) {  // max / min start from the first element (no identity needed)
      seen[o] = true;
      if (fp)
        accF[o] = a.doubles()[l];
      else
        accI[o] = a.ints()[l];
      return;
    }
    if (fp)
      accF[o] = prims::evalFloat(combine, accF[o], a.doubles()[l]);
    else
      accI[o] = *prims::evalInt(combine, accI[o], a.ints()[l], a.dtype());
  });
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (fp)
      out.doubles()[static_cast<size_t>(i)] = accF[static_cast<size_t>(i)];
    else
      out.setInt(i, accI[static_cast<size_t>(i)]);
  }
  return single(std::move(out));
}

/// Index of the first max (or min) along dim; the first NaN wins.
Outs argKernel(const RefKernelContext& c, bool isMax) {
  const HostTensor& a = *c.input(0);
  const auto dim = static_cast<size_t>(c.getInt("dim"));
  const int64_t n = a.shape()[dim];
  const int64_t inner = nn::prodRange(a.shape(), dim + 1, a.shape().size());
  HostTensor out = c.makeOutput();
  for (int64_t o = 0; o < out.numel(); ++o) {
    const int64_t base = (o / inner) * n * inner + o % inner;
    int64_t best = 0;
    double bv = a.getDouble(base);
    for (int64_t j = 1; j < n && !std::isnan(bv); ++j) {
      const double v = a.getDouble(base + j * inner);
      if (std::isnan(v) || (isMax ? v > bv : v < bv)) {
        best = j;
        bv = v;
      }
    }
    if (!a.isFloating()) {  // exact integer comparison (doubles lose precision above 2^53)
      int64_t bi = a.ints()[static_cast<size_t>(base)];
      best = 0;
      for (int64_t j = 1; j < n; ++j) {
        const int64_t v = a.ints()[static_cast<size_t>(base + j * inner)];
        if (isMax ? v > bi : v < bi) {
          best = j;
          bi = v;
        }
      }
    }
    out.setInt(o, best);
  }
  return single(std::move(out));
}

/// The element offset in `a` that index position `idx` of `index` addresses along `dim`.
StatusOr<int64_t> indexedOffset(const RefKernelContext& c, const HostTensor& a, const HostTensor& index,
                                const std::vector<int64_t>& idx, int64_t linear, size_t dim,
                                const std::vector<int64_t>& ast) {
  const int64_t k = index.ints()[static_cast<size_t>(linear)];
  if (k < 0 || k >= a.shape()[dim])
    return c.error("index " + std::to_string(k) + " is out of range for dim " + std::to_string(dim) + " of size " +
                   std::to_string(a.shape()[dim]));
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += (d == dim ? k : idx[d]) * ast[d];
  return off;
}

Outs gatherKernel(const RefKernelContext& c) {
  const HostTensor &a = *c.input(0), &index = *c.input(1);
  const auto dim = static_cast<size_t>(c.getInt("dim"));
  const std::vector<int64_t> ast = a.strides();
  HostTensor out = c.makeOutput();
  Status status = Status::ok();
  forEachIndex(index.shape(), [&](const std::vector<int64_t>& idx, int64_t linear) {
    if (!status.isOk()) return;
    auto off = indexedOffset(c, a, index, idx, linear, dim, ast);
    if (!off.isOk()) {
      status = off.status();
      return;
    }
    if (out.isFloating())
      out.doubles()[static_cast<size_t>(linear)] = a.doubles()[static_cast<size_t>(*off)];
    else
      out.ints()[static_cast<size_t>(linear)] = a.ints()[static_cast<size_t>(*off)];
  });
  if (!status.isOk()) return status;
  return single(std::move(out));
}

Outs scatterKernel(const RefKernelContext& c) {
  const HostTensor &a = *c.input(0), &index = *c.input(1), &src = *c.input(2);
  const auto dim = static_cast<size_t>(c.getInt("dim"));
  const std::string reduce = c.getString("reduce");
  const ScalarOp op = reduce == "sum"    ? ScalarOp::kAdd
                      : reduce == "prod" ? ScalarOp::kMul
                      : reduce == "amax" ? ScalarOp::kMaximum
                                         : ScalarOp::kMinimum;
  const std::vector<int64_t> ast = a.strides(), sst = src.strides();
  HostTensor out = a;
  Status status = Status::ok();
  forEachIndex(index.shape(), [&](const std::vector<int64_t>& idx, int64_t linear) {
    if (!status.isOk()) return;
    auto off = indexedOffset(c, a, index, idx, linear, dim, ast);
    if (!off.isOk()) {
      status = off.status();
      return;
    }
    const auto o = static_cast<size_t>(*off);
    const auto s = static_cast<size_t>(offsetOf(idx, sst));
    if (out.isFloating())
      out.doubles()[o] = reduce == "none" ? src.doubles()[s] : prims::evalFloat(op, out.doubles()[o], src.doubles()[s]);
    else
      out.setInt(static_cast<int64_t>(o),
                 reduce == "none" ? src.ints()[s] : *prims::evalInt(op, out.ints()[o], src.ints()[s], a.dtype()));
  });
  if (!status.isOk()) return status;
  return single(std::move(out));
}

Outs iotaKernel(const RefKernelContext& c) {
  ASSIGN_OR_RETURN(int64_t start, c.evalInt("start"));
  ASSIGN_OR_RETURN(int64_t step, c.evalInt("step"));
  HostTensor out = c.makeOutput();
  for (int64_t i = 0; i < out.numel(); ++i) out.setInt(i, prims::wrapAdd(start, prims::wrapMul(i, step)));
  return single(std::move(out));
}

Outs fullKernel(const RefKernelContext& c) {
  HostTensor out = c.makeOutput();
  shape_kernels::fillWith(out, shape_kernels::scalarAs(c.attr("value"), out.dtype()));
  return single(std::move(out));
}

Outs randKernel(const RefKernelContext& c) {
  ASSIGN_OR_RETURN(int64_t offset, c.evalInt("offset"));
  const int64_t seed = c.getInt("seed");
  HostTensor out = c.makeOutput();
  const int bits = prims::precisionBits(out.dtype());
  for (int64_t i = 0; i < out.numel(); ++i)
    out.doubles()[static_cast<size_t>(i)] = prims::uniformAt(seed, offset + i, bits);
  return single(std::move(out));
}

template <typename T>
HostTensor matmulAs(const RefKernelContext& c) {
  const HostTensor &a = *c.input(0), &b = *c.input(1);
  const size_t r = a.shape().size();
  const int64_t m = a.shape()[r - 2], k = a.shape()[r - 1], n = b.shape()[r - 1];
  const int64_t batch = nn::prodRange(a.shape(), 0, r - 2);
  std::vector<T> prod = nn::batchedProduct(nn::elements<T>(a), nn::elements<T>(b), batch, m, k, n);
  HostTensor out = c.makeOutput();
  for (int64_t i = 0; i < out.numel(); ++i) nn::store(out, i, prod[static_cast<size_t>(i)]);
  return out;
}

Outs matmulKernel(const RefKernelContext& c) {
  return single(c.input(0)->isFloating() ? matmulAs<double>(c) : matmulAs<uint64_t>(c));
}

Outs sdpaKernel(const RefKernelContext& c) {
  const HostTensor &q = *c.input(0), &k = *c.input(1), &v = *c.input(2);
  HostTensor out = c.makeOutput(0), lse = c.makeOutput(1);
  const double scale = c.isNone("scale") ? 1.0 / std::sqrt(static_cast<double>(q.shape().back())) : c.getFloat("scale");
  std::vector<int64_t> ob(q.shape().begin(), q.shape().end() - 2);
  nn::attention(q, k, v, c.input(3), c.getBool("is_causal"), scale, ob, out, &lse,
                nn::AttentionDropout{c.getFloat("dropout_p"), c.getInt("seed")});
  return std::vector<HostTensor>{std::move(out), std::move(lse)};
}

Outs sdpaBackwardKernel(const RefKernelContext& c) {
  const HostTensor &g = *c.input(0), &q = *c.input(1), &k = *c.input(2), &v = *c.input(3);
  HostTensor dq = c.makeOutput(0), dk = c.makeOutput(1), dv = c.makeOutput(2);
  const double scale = c.isNone("scale") ? 1.0 / std::sqrt(static_cast<double>(q.shape().back())) : c.getFloat("scale");
  nn::attentionBackward(g, q, k, v, c.input(6), c.getBool("is_causal"), scale,
                        nn::AttentionDropout{c.getFloat("dropout_p"), c.getInt("seed")}, dq, dk, dv);
  return std::vector<HostTensor>{std::move(dq), std::move(dk), std::move(dv)};
}

}  // namespace

void registerPrimDataKernels(RefKernelTable& t) {
  t.add("prims.sum", [](const RefKernelContext& c) { return reduceKernel(c, ScalarOp::kAdd, 0.0, 0); });
  t.add("prims.prod", [](const RefKernelContext& c) { return reduceKernel(c, ScalarOp::kMul, 1.0, 1); });
  t.add("prims.amax", [](const RefKernelContext& c) { return reduceKernel(c, ScalarOp::kMaximum, 0.0, 0); });
  t.add("prims.amin", [](const RefKernelContext& c) { return reduceKernel(c, ScalarOp::kMinimum, 0.0, 0); });
  t.add("prims.argmax", [](const RefKernelContext& c) { return argKernel(c, true); });
  t.add("prims.argmin", [](const RefKernelContext& c) { return argKernel(c, false); });
  t.add("prims.gather", gatherKernel);
  t.add("prims.scatter", scatterKernel);
  t.add("prims.iota", iotaKernel);
  t.add("prims.full", fullKernel);
  t.add("prims.rand", randKernel);
  t.add("prims.matmul", matmulKernel);
  t.add("prims.convolution", nn::convolutionKernel);
  t.add("prims.sdpa", sdpaKernel);
  t.add("prims.sdpa_backward", sdpaBackwardKernel);
}

}  // namespace plugsdk::exec
