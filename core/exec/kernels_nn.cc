// Reference kernels for the nn ops (float64 / exact wrapping integers): registerNNKernels and
// the matrix products (mm, bmm, addmm, baddbmm, dot, mv). Other nn kernels: kernels_nn_*.cc.
#include "core/exec/kernels_nn_common.h"

namespace plugsdk::exec {

namespace nn {
namespace {

/// A Scalar attribute as the computation type: integer dtypes truncate it (as PyTorch's
/// Scalar::to<int64_t>), floating ones take it as a double.
template <typename T>
T scalarAs(const RefKernelContext& ctx, const std::string& name) {
  const ir::Attribute& a = ctx.attr(name);
  if constexpr (std::is_same_v<T, double>) {
    return ctx.getFloat(name);
  } else {
    if (auto i = a.asInt()) return wrapU(*i);
    if (auto b = a.asBool()) return *b ? 1u : 0u;
    return wrapU(doubleToIntType(a.asDouble().value_or(0.0), DType::kI64));
  }
}

/// The product shapes: (batch, n, m, p) for operand ranks 1-3 (vectors act as a row / column).
struct Dims {
  int64_t batch = 1, n = 1, m = 1, p = 1;
};

Dims productDims(const HostTensor& a, const HostTensor& b) {
  Dims d;
  const auto &as = a.shape(), &bs = b.shape();
  if (a.rank() == 3) {
    d.batch = as[0];
    d.n = as[1];
    d.m = as[2];
    d.p = bs[2];
  } else if (a.rank() == 2) {
    d.n = as[0];
    d.m = as[1];
    d.p = b.rank() == 2 ? bs[1] : 1;
  } else {  // dot
    d.m = as[0];
  }
  return d;
}

/// mm, bmm, dot, mv: the plain product.
template <typename T>
HostTensor plainProduct(const RefKernelContext& ctx) {
  const HostTensor &a = *ctx.input(0), &b = *ctx.input(1);
  Dims d = productDims(a, b);
  std::vector<T> c = batchedProduct(elements<T>(a), elements<T>(b), d.batch, d.n, d.m, d.p);
  HostTensor out = ctx.makeOutput();
  for (int64_t i = 0; i < out.numel(); ++i) store(out, i, c[static_cast<size_t>(i)]);
  return out;
}

/// addmm, baddbmm: beta * self + alpha * product; beta == 0 ignores self (NaN in self too).
template <typename T>
HostTensor addProduct(const RefKernelContext& ctx) {
  const HostTensor &self = *ctx.input(0), &a = *ctx.input(1), &b = *ctx.input(2);
  Dims d = productDims(a, b);
  std::vector<T> c = batchedProduct(elements<T>(a), elements<T>(b), d.batch, d.n, d.m, d.p);
  const T alpha = scalarAs<T>(ctx, "alpha"), beta = scalarAs<T>(ctx, "beta");
  HostTensor out = ctx.makeOutput();
  const std::vector<T> s = elements<T>(self);
  const auto strides = broadcastStrides(self.shape(), out.shape());
  forEachIndex(out.shape(), [&](const std::vector<int64_t>& idx, int64_t i) {
    T v = alpha * c[static_cast<size_t>(i)];
    if (beta != T(0)) v += beta * s[static_cast<size_t>(offsetOf(idx, strides))];
    store(out, i, v);
  });
  return out;
}

RefKernel product(bool add) {
  return [add](const RefKernelContext& ctx) -> StatusOr<std::vector<HostTensor>> {
    bool fp = ctx.input(add ? 1 : 0)->isFloating();
    if (add) return std::vector<HostTensor>{fp ? addProduct<double>(ctx) : addProduct<uint64_t>(ctx)};
    return std::vector<HostTensor>{fp ? plainProduct<double>(ctx) : plainProduct<uint64_t>(ctx)};
  };
}

}  // namespace

void registerMatmulKernels(RefKernelTable& t) {
  t.add("aten.mm", product(false));
  t.add("aten.bmm", product(false));
  t.add("aten.dot", product(false));
  t.add("aten.mv", product(false));
  t.add("aten.addmm", product(true));
  t.add("aten.baddbmm", product(true));
}

}  // namespace nn

void registerNNKernels(RefKernelTable& t) {
  nn::registerMatmulKernels(t);
  nn::registerConvPoolKernels(t);
  nn::registerNormKernels(t);
  nn::registerAttentionLossKernels(t);
}

}  // namespace plugsdk::exec
