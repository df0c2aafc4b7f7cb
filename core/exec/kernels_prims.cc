// Reference kernels for the elementwise and structural prims (core/prims), evaluated through
// the shared scalar semantics of core/prims/scalar_ops.h.
#include <algorithm>
#include <string>

#include "core/exec/kernels.h"
#include "core/exec/kernels_shape_util.h"
#include "core/prims/scalar_ops.h"

namespace plugsdk::exec {

using namespace shape_kernels;

namespace {

using Outs = StatusOr<std::vector<HostTensor>>;

Outs single(HostTensor t) {
  std::vector<HostTensor> v;
  v.push_back(std::move(t));
  return v;
}

Outs scalarKernel(const RefKernelContext& c, prims::ScalarOp op) {
  const HostTensor& a = *c.input(0);
  const HostTensor* b = c.input(1);
  HostTensor out = c.makeOutput();
  if (a.isFloating()) {
    for (int64_t i = 0; i < out.numel(); ++i)
      out.setDouble(
          i, prims::evalFloat(op, a.doubles()[static_cast<size_t>(i)], b ? b->doubles()[static_cast<size_t>(i)] : 0.0));
    return single(std::move(out));
  }
  for (int64_t i = 0; i < out.numel(); ++i) {
    auto r = prims::evalInt(op, a.ints()[static_cast<size_t>(i)], b ? b->ints()[static_cast<size_t>(i)] : 0, a.dtype());
    if (!r) return c.error("integer division by zero (ZeroDivisionError)");
    out.setInt(i, *r);
  }
  return single(std::move(out));
}

Outs whereKernel(const RefKernelContext& c) {
  const HostTensor &p = *c.input(0), &a = *c.input(1), &b = *c.input(2);
  HostTensor out = c.makeOutput();
  for (int64_t i = 0; i < out.numel(); ++i) {
    const HostTensor& src = p.ints()[static_cast<size_t>(i)] != 0 ? a : b;
    if (out.isFloating())
      out.doubles()[static_cast<size_t>(i)] = src.doubles()[static_cast<size_t>(i)];
    else
      out.ints()[static_cast<size_t>(i)] = src.ints()[static_cast<size_t>(i)];
  }
  return single(std::move(out));
}

Outs convertKernel(const RefKernelContext& c) {
  const HostTensor& a = *c.input(0);
  HostTensor out = c.makeOutput();
  const DType to = out.dtype();
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (ir::isFloating(to)) {
      out.doubles()[static_cast<size_t>(i)] = roundToFloatType(a.getDouble(i), to);
    } else if (to == DType::kBool) {
      out.setInt(i, a.getDouble(i) != 0 ? 1 : 0);  // NaN is true
    } else if (a.isFloating()) {
      out.setInt(i, doubleToIntType(a.doubles()[static_cast<size_t>(i)], to));
    } else {
      out.setInt(i, a.ints()[static_cast<size_t>(i)]);  // wraps
    }
  }
  return single(std::move(out));
}

Outs broadcastInDimKernel(const RefKernelContext& c) {
  const HostTensor& a = *c.input(0);
  const std::vector<int64_t> bd = c.getInts("broadcast_dimensions");
  const std::vector<int64_t> st = a.strides();
  return single(indexMapCopy(a, c.outShape(), [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t i = 0; i < bd.size(); ++i)
      if (a.shape()[i] != 1) off += idx[static_cast<size_t>(bd[i])] * st[i];
    return off;
  }));
}

Outs reshapeKernel(const RefKernelContext& c) {
  const HostTensor& a = *c.input(0);
  HostTensor out = c.makeOutput();
  if (a.isFloating())
    std::copy(a.doubles().begin(), a.doubles().end(), out.doubles().begin());
  else
    std::copy(a.ints().begin(), a.ints().end(), out.ints().begin());
  return single(std::move(out));
}

Outs permuteKernel(const RefKernelContext& c) {
  const HostTensor& a = *c.input(0);
  const std::vector<int64_t> dims = c.getInts("dims");
  const std::vector<int64_t> st = a.strides();
  return single(indexMapCopy(a, c.outShape(), [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t i = 0; i < dims.size(); ++i) off += idx[i] * st[static_cast<size_t>(dims[i])];
    return off;
  }));
}

Outs sliceKernel(const RefKernelContext& c) {
  const HostTensor& a = *c.input(0);
  ASSIGN_OR_RETURN(std::vector<int64_t> start, c.evalInts("start_indices"));
  ASSIGN_OR_RETURN(std::vector<int64_t> limit, c.evalInts("limit_indices"));
  std::vector<int64_t> step = c.getInts("strides");
  if (step.empty()) step.assign(start.size(), 1);
  for (size_t d = 0; d < start.size(); ++d)
    if (start[d] < 0 || limit[d] < start[d] || limit[d] > a.shape()[d])
      return c.error("dim " + std::to_string(d) + ": need 0 <= start <= limit <= size, got " +
                     std::to_string(start[d]) + ", " + std::to_string(limit[d]) + ", " + std::to_string(a.shape()[d]));
  const std::vector<int64_t> st = a.strides();
  return single(indexMapCopy(a, c.outShape(), [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (start[d] + idx[d] * step[d]) * st[d];
    return off;
  }));
}

Outs revKernel(const RefKernelContext& c) {
  const HostTensor& a = *c.input(0);
  std::vector<bool> flip(a.shape().size(), false);
  for (int64_t d : c.getInts("dims")) flip[static_cast<size_t>(d)] = true;
  const std::vector<int64_t> st = a.strides();
  return single(indexMapCopy(a, c.outShape(), [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (flip[d] ? a.shape()[d] - 1 - idx[d] : idx[d]) * st[d];
    return off;
  }));
}

Outs padKernel(const RefKernelContext& c) {
  const HostTensor& a = *c.input(0);
  ASSIGN_OR_RETURN(std::vector<int64_t> low, c.evalInts("low"));
  std::vector<int64_t> interior = c.getInts("interior");
  if (interior.empty()) interior.assign(low.size(), 0);
  const HostTensor fill = scalarAs(c.attr("padding_value"), a.dtype());
  const std::vector<int64_t> st = a.strides();
  return single(indexMapCopy(
      a, c.outShape(),
      [&](const std::vector<int64_t>& idx) -> int64_t {
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); ++d) {
          const int64_t p = idx[d] - low[d], every = interior[d] + 1;
          if (p < 0 || p % every != 0 || p / every >= a.shape()[d]) return -1;
          off += p / every * st[d];
        }
        return off;
      },
      &fill));
}

Outs concatKernel(const RefKernelContext& c) {
  const size_t dim = static_cast<size_t>(c.getInt("dim"));
  HostTensor out = c.makeOutput();
  const std::vector<int64_t> ost = out.strides();
  int64_t base = 0;
  for (const HostTensor* t : c.inputs()) {
    forEachIndex(t->shape(), [&](const std::vector<int64_t>& idx, int64_t linear) {
      int64_t off = 0;
      for (size_t d = 0; d < idx.size(); ++d) off += (d == dim ? idx[d] + base : idx[d]) * ost[d];
      if (out.isFloating())
        out.doubles()[static_cast<size_t>(off)] = t->doubles()[static_cast<size_t>(linear)];
      else
        out.ints()[static_cast<size_t>(off)] = t->ints()[static_cast<size_t>(linear)];
    });
    base += t->shape()[dim];
  }
  return single(std::move(out));
}

Outs asStridedKernel(const RefKernelContext& c) {
  const HostTensor& a = *c.input(0);
  ASSIGN_OR_RETURN(std::vector<int64_t> stride, c.evalInts("stride"));
  ASSIGN_OR_RETURN(int64_t offset, c.evalInt("storage_offset"));
  HostTensor out = c.makeOutput();
  int64_t bad = -1;
  forEachIndex(out.shape(), [&](const std::vector<int64_t>& idx, int64_t linear) {
    const int64_t off = offset + offsetOf(idx, stride);
    if (off >= a.numel())
      bad = off;
    else if (a.isFloating())
      out.doubles()[static_cast<size_t>(linear)] = a.doubles()[static_cast<size_t>(off)];
    else
      out.ints()[static_cast<size_t>(linear)] = a.ints()[static_cast<size_t>(off)];
  });
  if (bad >= 0)
    return c.error("the view reads element " + std::to_string(bad) + " of an input with " + std::to_string(a.numel()) +
                   " elements");
  return single(std::move(out));
}

}  // namespace

void registerPrimKernels(RefKernelTable& t) {
  for (const prims::ScalarOpInfo& info : prims::allScalarOps()) {
    prims::ScalarOp op = info.op;
    t.add(std::string("prims.") + info.name, [op](const RefKernelContext& c) { return scalarKernel(c, op); });
  }
  t.add("prims.where", whereKernel);
  t.add("prims.convert_element_type", convertKernel);
  t.add("prims.broadcast_in_dim", broadcastInDimKernel);
  t.add("prims.reshape", reshapeKernel);
  t.add("prims.permute", permuteKernel);
  t.add("prims.slice", sliceKernel);
  t.add("prims.rev", revKernel);
  t.add("prims.pad", padKernel);
  t.add("prims.concat", concatKernel);
  t.add("prims.as_strided", asStridedKernel);
  registerPrimDataKernels(t);
}

}  // namespace plugsdk::exec
