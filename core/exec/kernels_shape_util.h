// Helpers shared by the reference kernels of the shape, indexing and creation ops: strided
// copies, element copies with promotion, and Scalar attributes converted to a dtype.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/exec/host_tensor.h"
#include "core/exec/kernel_utils.h"
#include "core/exec/reference_executor.h"

namespace plugsdk::exec::shape_kernels {

/// Registered from kernels_shape_split.cc and kernels_indexing*.cc.
void registerShapeSplitKernels(RefKernelTable& t);

/// Calls f(outLinear, inOffset) for every element of `shape` in row-major order, where
/// inOffset = offset + sum(index[d] * strides[d]) (strides may be 0 or negative).
template <typename F>
void forEachStrided(const std::vector<int64_t>& shape, int64_t offset, const std::vector<int64_t>& strides, F&& f) {
  int64_t n = shapeNumel(shape);
  if (n == 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t off = offset;
  for (int64_t linear = 0; linear < n; ++linear) {
    f(linear, off);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) {
        off += strides[d];
        break;
      }
      off -= strides[d] * (shape[d] - 1);  // never steps past the last element it visits
      idx[d] = 0;
    }
  }
}

/// Copies in[from] to out[to]. The dtypes are equal, or out's is a promotion of in's (an
/// integer or bool stored into a floating type is rounded to that type, as a cast does).
inline void copyElement(const HostTensor& in, int64_t from, HostTensor& out, int64_t to) {
  auto f = static_cast<size_t>(from), t = static_cast<size_t>(to);
  if (out.isFloating()) {
    out.doubles()[t] =
        in.isFloating() ? in.doubles()[f] : roundToFloatType(static_cast<double>(in.ints()[f]), out.dtype());
  } else if (in.isFloating()) {
    out.setDouble(to, in.doubles()[f]);
  } else {
    out.ints()[t] = wrapToIntType(in.ints()[f], out.dtype());
  }
}

/// An output of `dtype` and `shape` whose element i is in[offset + strided index of i].
inline HostTensor stridedCopy(const HostTensor& in, DType dtype, const std::vector<int64_t>& shape, int64_t offset,
                              const std::vector<int64_t>& strides) {
  HostTensor out(dtype, shape);
  if (dtype == in.dtype() && out.isFloating()) {
    auto& o = out.doubles();
    const auto& s = in.doubles();
    forEachStrided(shape, offset, strides,
                   [&](int64_t i, int64_t j) { o[static_cast<size_t>(i)] = s[static_cast<size_t>(j)]; });
  } else if (dtype == in.dtype()) {
    auto& o = out.ints();
    const auto& s = in.ints();
    forEachStrided(shape, offset, strides,
                   [&](int64_t i, int64_t j) { o[static_cast<size_t>(i)] = s[static_cast<size_t>(j)]; });
  } else {
    forEachStrided(shape, offset, strides, [&](int64_t i, int64_t j) { copyElement(in, j, out, i); });
  }
  return out;
}

/// The same elements under a new shape (same element count).
inline HostTensor reshaped(const HostTensor& in, DType dtype, const std::vector<int64_t>& shape) {
  HostTensor out(dtype, shape);
  if (dtype == in.dtype()) {
    out.doubles() = in.doubles();
    out.ints() = in.ints();
  } else {
    for (int64_t i = 0; i < out.numel(); ++i) copyElement(in, i, out, i);
  }
  return out;
}

/// A Scalar attribute (int, float or bool) converted to `dtype` as PyTorch fills a tensor:
/// floats rounded to the type's precision, integers wrapped, floats truncated to integers.
/// Returned as a one-element tensor of that dtype (use its doubles() or ints()).
inline HostTensor scalarAs(const ir::Attribute& a, DType dtype) {
  HostTensor t(dtype, {});
  if (auto i = a.asInt()) {
    if (t.isFloating())
      t.doubles()[0] = roundToFloatType(static_cast<double>(*i), dtype);
    else
      t.setInt(0, *i);
  } else if (auto b = a.asBool()) {
    t.setInt(0, *b ? 1 : 0);
  } else {
    double v = a.asDouble().value_or(0.0);
    if (t.isFloating())
      t.doubles()[0] = roundToFloatType(v, dtype);
    else
      t.setDouble(0, v);
  }
  return t;
}

/// Fills every element of t with element 0 of the one-element `value` (same dtype).
inline void fillWith(HostTensor& t, const HostTensor& value) {
  if (t.isFloating())
    std::fill(t.doubles().begin(), t.doubles().end(), value.doubles()[0]);
  else
    std::fill(t.ints().begin(), t.ints().end(), value.ints()[0]);
}

/// Sets t[i] = value[0] (same dtype).
inline void setFrom(HostTensor& t, int64_t i, const HostTensor& value) {
  if (t.isFloating())
    t.doubles()[static_cast<size_t>(i)] = value.doubles()[0];
  else
    t.ints()[static_cast<size_t>(i)] = value.ints()[0];
}

/// An output of in's dtype and `shape` whose element at multi-index idx is in[srcOf(idx)],
/// or `fill`'s element 0 where srcOf returns a negative offset.
template <typename F>
HostTensor indexMapCopy(const HostTensor& in, const std::vector<int64_t>& shape, F&& srcOf,
                        const HostTensor* fill = nullptr) {
  HostTensor out(in.dtype(), shape);
  bool fp = out.isFloating();
  forEachIndex(shape, [&](const std::vector<int64_t>& idx, int64_t linear) {
    int64_t src = srcOf(idx);
    auto o = static_cast<size_t>(linear);
    if (src < 0) {
      if (fill) setFrom(out, linear, *fill);
    } else if (fp) {
      out.doubles()[o] = in.doubles()[static_cast<size_t>(src)];
    } else {
      out.ints()[o] = in.ints()[static_cast<size_t>(src)];
    }
  });
  return out;
}

/// Python-style non-negative modulus.
inline int64_t floorMod(int64_t a, int64_t n) {
  int64_t r = a % n;
  return r < 0 ? r + n : r;
}

}  // namespace plugsdk::exec::shape_kernels
