// Reference kernels for the shape ops (view, permute, expand, flip, repeat, pad, tril, roll,
// ...): graphs are functional, so every view op copies. cat/slice/split: kernels_shape_split.cc.
#include "core/exec/kernels.h"
#include "core/exec/kernels_shape_util.h"
#include "core/ir/shape_rules.h"

namespace plugsdk::exec {

using namespace shape_kernels;

namespace {

using Outs = StatusOr<std::vector<HostTensor>>;

const HostTensor& in0(const RefKernelContext& ctx) { return *ctx.input(0); }

Outs one(HostTensor t) { return std::vector<HostTensor>{std::move(t)}; }

/// View-like ops: the same elements in the promised shape.
Outs sameElements(const RefKernelContext& ctx) { return one(reshaped(in0(ctx), ctx.outDType(), ctx.outShape())); }

Outs permuteKernel(const RefKernelContext& ctx) {
  const HostTensor& x = in0(ctx);
  ASSIGN_OR_RETURN(auto dims, ir::wrapDims(ctx.getInts("dims"), x.rank()));
  auto s = x.strides();
  std::vector<int64_t> strides;
  for (int64_t d : dims) strides.push_back(s[static_cast<size_t>(d)]);
  return one(stridedCopy(x, ctx.outDType(), ctx.outShape(), 0, strides));
}

Outs swapDims(const RefKernelContext& ctx, int64_t a, int64_t b) {
  const HostTensor& x = in0(ctx);
  auto s = x.strides();
  if (x.rank() > 0) std::swap(s[static_cast<size_t>(a)], s[static_cast<size_t>(b)]);
  return one(stridedCopy(x, ctx.outDType(), ctx.outShape(), 0, s));
}

Outs transposeKernel(const RefKernelContext& ctx) {
  ASSIGN_OR_RETURN(int64_t a, ir::wrapDim(ctx.getInt("dim0"), in0(ctx).rank()));
  ASSIGN_OR_RETURN(int64_t b, ir::wrapDim(ctx.getInt("dim1"), in0(ctx).rank()));
  return swapDims(ctx, a, b);
}

Outs tKernel(const RefKernelContext& ctx) { return swapDims(ctx, 0, in0(ctx).rank() == 2 ? 1 : 0); }

Outs expandKernel(const RefKernelContext& ctx) {
  const HostTensor& x = in0(ctx);
  const auto& shape = ctx.outShape();
  auto s = x.strides();
  size_t lead = shape.size() - static_cast<size_t>(x.rank());
  std::vector<int64_t> strides(shape.size(), 0);
  for (size_t j = 0; j < s.size(); ++j) {
    if (x.shape()[j] != 1) {
      if (x.shape()[j] != shape[lead + j])
        return invalidArgument("expand: dim " + std::to_string(j) + " of size " + std::to_string(x.shape()[j]) +
                               " cannot expand to " + std::to_string(shape[lead + j]));
      strides[lead + j] = s[j];
    }
  }
  return one(stridedCopy(x, ctx.outDType(), shape, 0, strides));
}

Outs flipKernel(const RefKernelContext& ctx) {
  const HostTensor& x = in0(ctx);
  ASSIGN_OR_RETURN(auto dims, ir::wrapDims(ctx.getInts("dims"), x.rank()));
  auto s = x.strides();
  int64_t offset = 0;
  if (x.rank() > 0) {
    for (int64_t d : dims) {
      auto ud = static_cast<size_t>(d);
      offset += (x.shape()[ud] - 1) * s[ud];
      s[ud] = -s[ud];
    }
  }
  return one(stridedCopy(x, ctx.outDType(), ctx.outShape(), offset, s));
}

Outs repeatKernel(const RefKernelContext& ctx) {
  const HostTensor& x = in0(ctx);
  const auto& shape = ctx.outShape();
  auto s = x.strides();
  size_t lead = shape.size() - static_cast<size_t>(x.rank());
  return one(indexMapCopy(x, shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t j = 0; j < s.size(); ++j) off += (idx[lead + j] % x.shape()[j]) * s[j];
    return off;
  }));
}

Outs constantPadKernel(const RefKernelContext& ctx) {
  const HostTensor& x = in0(ctx);
  ASSIGN_OR_RETURN(auto pad, ctx.evalInts("pad"));
  std::vector<int64_t> before(static_cast<size_t>(x.rank()), 0);
  for (size_t i = 0; i < pad.size() / 2; ++i) before[static_cast<size_t>(x.rank()) - 1 - i] = pad[2 * i];
  HostTensor fill = scalarAs(ctx.attr("value"), x.dtype());
  auto s = x.strides();
  return one(indexMapCopy(
      x, ctx.outShape(),
      [&](const std::vector<int64_t>& idx) -> int64_t {
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); ++d) {
          int64_t j = idx[d] - before[d];
          if (j < 0 || j >= x.shape()[d]) return -1;
          off += j * s[d];
        }
        return off;
      },
      &fill));
}

Outs triangleKernel(const RefKernelContext& ctx, bool lower) {
  const HostTensor& x = in0(ctx);
  int64_t diagonal = ctx.getInt("diagonal");
  HostTensor zero(x.dtype(), {});
  size_t r = static_cast<size_t>(x.rank());
  return one(indexMapCopy(
      x, x.shape(),
      [&](const std::vector<int64_t>& idx) -> int64_t {
        int64_t k = idx[r - 1] - idx[r - 2];
        bool keep = lower ? k <= diagonal : k >= diagonal;
        return keep ? offsetOf(idx, x.strides()) : -1;
      },
      &zero));
}

Outs rollKernel(const RefKernelContext& ctx) {
  const HostTensor& x = in0(ctx);
  ASSIGN_OR_RETURN(auto shifts, ctx.evalInts("shifts"));
  auto dims = ctx.getInts("dims");
  if (x.numel() == 0) return one(HostTensor(x.dtype(), x.shape()));
  if (dims.empty()) {
    int64_t n = x.numel(), shift = floorMod(shifts[0], n);
    return one(indexMapCopy(x, x.shape(), [&](const std::vector<int64_t>& idx) {
      return floorMod(offsetOf(idx, x.strides()) - shift, n);
    }));
  }
  std::vector<int64_t> total(static_cast<size_t>(x.rank()), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    ASSIGN_OR_RETURN(int64_t d, ir::wrapDim(dims[i], x.rank()));
    auto ud = static_cast<size_t>(d);
    total[ud] = floorMod(total[ud] + floorMod(shifts[i], x.shape()[ud]), x.shape()[ud]);
  }
  auto s = x.strides();
  return one(indexMapCopy(x, x.shape(), [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += floorMod(idx[d] - total[d], x.shape()[d]) * s[d];
    return off;
  }));
}

}  // namespace

void registerShapeKernels(RefKernelTable& t) {
  for (const char* op : {"aten.view", "aten._unsafe_view", "aten.reshape", "aten.flatten.using_ints",
                         "aten.unflatten.int", "aten.unsqueeze", "aten.squeeze", "aten.squeeze.dim",
                         "aten.squeeze.dims", "aten.clone", "aten.alias", "aten.detach"})
    t.add(op, sameElements);
  t.add("aten.permute", permuteKernel);
  t.add("aten.transpose.int", transposeKernel);
  t.add("aten.t", tKernel);
  t.add("aten.expand", expandKernel);
  t.add("aten.flip", flipKernel);
  t.add("aten.repeat", repeatKernel);
  t.add("aten.constant_pad_nd", constantPadKernel);
  t.add("aten.tril", [](const RefKernelContext& ctx) { return triangleKernel(ctx, true); });
  t.add("aten.triu", [](const RefKernelContext& ctx) { return triangleKernel(ctx, false); });
  t.add("aten.roll", rollKernel);
  registerShapeSplitKernels(t);
}

}  // namespace plugsdk::exec
