// Reference kernels for the ops that join or cut tensors along a dim: cat, stack, slice,
// select, narrow, split, split_with_sizes, chunk, unbind.
#include <algorithm>

#include "core/exec/kernels.h"
#include "core/exec/kernels_shape_util.h"
#include "core/ir/shape_rules.h"

namespace plugsdk::exec::shape_kernels {

namespace {

using Outs = StatusOr<std::vector<HostTensor>>;

int64_t prodOf(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

/// Copies `count` elements of each of `outer` rows: in row o from offset o*inRow, to out
/// row o at offset o*outRow + at.
void copyBlocks(const HostTensor& in, HostTensor& out, int64_t outer, int64_t count, int64_t inRow, int64_t outRow,
                int64_t at) {
  bool fast = in.dtype() == out.dtype();
  for (int64_t o = 0; o < outer; ++o) {
    int64_t src = o * inRow, dst = o * outRow + at;
    if (fast && out.isFloating()) {
      std::copy_n(in.doubles().begin() + src, count, out.doubles().begin() + dst);
    } else if (fast) {
      std::copy_n(in.ints().begin() + src, count, out.ints().begin() + dst);
    } else {
      for (int64_t k = 0; k < count; ++k) copyElement(in, src + k, out, dst + k);
    }
  }
}

Outs catKernel(const RefKernelContext& ctx) {
  HostTensor out = ctx.makeOutput();
  const HostTensor* ref = nullptr;
  for (const HostTensor* t : ctx.inputs())
    if (!(t->rank() == 1 && t->numel() == 0)) {
      ref = t;
      break;
    }
  if (!ref) return std::vector<HostTensor>{std::move(out)};
  ASSIGN_OR_RETURN(int64_t dim, ir::wrapDim(ctx.getInt("dim"), ref->rank()));
  auto ud = static_cast<size_t>(dim);
  const auto& os = out.shape();
  int64_t outer = prodOf(os, 0, ud), inner = prodOf(os, ud + 1, os.size());
  int64_t at = 0;
  for (const HostTensor* t : ctx.inputs()) {
    if (t->rank() != ref->rank()) continue;  // a skipped 1-D empty tensor
    int64_t len = t->shape()[ud];
    copyBlocks(*t, out, outer, len * inner, len * inner, os[ud] * inner, at * inner);
    at += len;
  }
  if (at != os[ud]) return internalError("cat: inputs cover " + std::to_string(at) + " of " + std::to_string(os[ud]));
  return std::vector<HostTensor>{std::move(out)};
}

Outs stackKernel(const RefKernelContext& ctx) {
  HostTensor out = ctx.makeOutput();
  const HostTensor& ref = *ctx.input(0);
  ASSIGN_OR_RETURN(int64_t dim, ir::wrapDim(ctx.getInt("dim"), ref.rank() + 1));
  auto ud = static_cast<size_t>(dim);
  int64_t outer = prodOf(ref.shape(), 0, ud), inner = prodOf(ref.shape(), ud, ref.shape().size());
  int64_t n = static_cast<int64_t>(ctx.numInputs());
  for (int64_t i = 0; i < n; ++i) {
    const HostTensor& t = *ctx.input(static_cast<size_t>(i));
    if (t.shape() != ref.shape())
      return invalidArgument("stack: tensor " + std::to_string(i) + " has shape " + shapeString(t.shape()) +
                             ", tensor 0 " + shapeString(ref.shape()));
    copyBlocks(t, out, outer, inner, inner, n * inner, i * inner);
  }
  return std::vector<HostTensor>{std::move(out)};
}

/// The elements [start, start + len*step) step `step` along dim, other dims whole, in shape `shape`.
HostTensor sliceAlong(const HostTensor& x, const std::vector<int64_t>& shape, size_t dim, int64_t start, int64_t step,
                      bool dropDim) {
  auto s = x.strides();
  int64_t offset = start * s[dim];
  s[dim] *= step;
  if (dropDim) s.erase(s.begin() + static_cast<std::ptrdiff_t>(dim));
  return stridedCopy(x, x.dtype(), shape, offset, s);
}

Outs sliceKernel(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(int64_t dim, ir::wrapDim(ctx.getInt("dim"), x.rank()));
  auto ud = static_cast<size_t>(dim);
  int64_t n = x.shape()[ud];
  ASSIGN_OR_RETURN(int64_t step, ctx.evalInt("step"));
  auto bound = [&](const char* name, int64_t dflt) -> StatusOr<int64_t> {
    if (ctx.isNone(name)) return dflt;
    ASSIGN_OR_RETURN(int64_t v, ctx.evalInt(name));
    if (v < 0) v = v < -n ? 0 : v + n;
    return std::min(v, n);
  };
  ASSIGN_OR_RETURN(int64_t start, bound("start", 0));
  ASSIGN_OR_RETURN(int64_t end, bound("end", n));
  if (step <= 0) return invalidArgument("slice: step must be positive, got " + std::to_string(step));
  int64_t len = end > start ? (end - start - 1) / step + 1 : 0;
  if (len != ctx.outShape()[ud])
    return invalidArgument("slice: dim " + std::to_string(dim) + " of size " + std::to_string(n) + " sliced " +
                           std::to_string(start) + ":" + std::to_string(end) + ":" + std::to_string(step) + " has " +
                           std::to_string(len) + " elements, but the graph's type assumed " +
                           std::to_string(ctx.outShape()[ud]) + " (symbolic bounds assumed in range)");
  return std::vector<HostTensor>{sliceAlong(x, ctx.outShape(), ud, start, step, false)};
}

Outs selectKernel(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(int64_t dim, ir::wrapDim(ctx.getInt("dim"), x.rank()));
  auto ud = static_cast<size_t>(dim);
  int64_t n = x.shape()[ud];
  ASSIGN_OR_RETURN(int64_t index, ctx.evalInt("index"));
  if (index < -n || index >= n)
    return outOfRange("select: index " + std::to_string(index) + " out of range for dim " + std::to_string(dim) +
                      " of size " + std::to_string(n));
  if (index < 0) index += n;
  return std::vector<HostTensor>{sliceAlong(x, ctx.outShape(), ud, index, 1, true)};
}

Outs narrowKernel(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(int64_t dim, ir::wrapDim(ctx.getInt("dim"), x.rank()));
  auto ud = static_cast<size_t>(dim);
  int64_t n = x.shape()[ud];
  ASSIGN_OR_RETURN(int64_t start, ctx.evalInt("start"));
  ASSIGN_OR_RETURN(int64_t length, ctx.evalInt("length"));
  if (start < -n || start > n)
    return outOfRange("narrow: start " + std::to_string(start) + " out of range for dim of size " + std::to_string(n));
  if (start < 0) start += n;
  if (length < 0 || start + length > n)
    return outOfRange("narrow: start (" + std::to_string(start) + ") + length (" + std::to_string(length) +
                      ") exceeds dimension size (" + std::to_string(n) + ")");
  return std::vector<HostTensor>{sliceAlong(x, ctx.outShape(), ud, start, 1, false)};
}

/// split, split_with_sizes, chunk: consecutive pieces along dim with the promised sizes.
Outs piecesKernel(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(int64_t dim, ir::wrapDim(ctx.getInt("dim"), x.rank()));
  auto ud = static_cast<size_t>(dim);
  std::vector<HostTensor> outs;
  int64_t at = 0;
  for (size_t i = 0; i < ctx.numOutputs(); ++i) {
    int64_t len = ctx.outShape(i)[ud];
    if (at + len > x.shape()[ud])
      return invalidArgument(ctx.schema().name + ": pieces exceed dim " + std::to_string(dim) + " of size " +
                             std::to_string(x.shape()[ud]));
    outs.push_back(sliceAlong(x, ctx.outShape(i), ud, at, 1, false));
    at += len;
  }
  if (at != x.shape()[ud])
    return invalidArgument(ctx.schema().name + ": pieces cover " + std::to_string(at) + " of dim " +
                           std::to_string(dim) + " of size " + std::to_string(x.shape()[ud]));
  return outs;
}

Outs unbindKernel(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(int64_t dim, ir::wrapDim(ctx.getInt("dim"), x.rank()));
  auto ud = static_cast<size_t>(dim);
  if (static_cast<int64_t>(ctx.numOutputs()) != x.shape()[ud])
    return invalidArgument("unbind: " + std::to_string(ctx.numOutputs()) + " outputs for dim of size " +
                           std::to_string(x.shape()[ud]));
  std::vector<HostTensor> outs;
  for (size_t i = 0; i < ctx.numOutputs(); ++i)
    outs.push_back(sliceAlong(x, ctx.outShape(i), ud, static_cast<int64_t>(i), 1, true));
  return outs;
}

}  // namespace

void registerShapeSplitKernels(RefKernelTable& t) {
  t.add("aten.cat", catKernel);
  t.add("aten.stack", stackKernel);
  t.add("aten.slice.Tensor", sliceKernel);
  t.add("aten.select.int", selectKernel);
  t.add("aten.narrow", narrowKernel);
  t.add("aten.split.Tensor", piecesKernel);
  t.add("aten.split_with_sizes", piecesKernel);
  t.add("aten.chunk", piecesKernel);
  t.add("aten.unbind.int", unbindKernel);
}

}  // namespace plugsdk::exec::shape_kernels
