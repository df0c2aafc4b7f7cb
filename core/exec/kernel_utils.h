// Small helpers shared by the reference kernels: index iteration over a shape and
// broadcast-aware element offsets. Header-only; kept simple and obviously correct.
#pragma once

#include <cstdint>
#include <vector>

#include "core/exec/host_tensor.h"

namespace plugsdk::exec {

/// Strides (in elements) to read `t` as if broadcast to `outShape`: 0 on broadcast dims.
/// `t`'s shape must be broadcast-compatible with `outShape` (inference checked it).
inline std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& shape, const std::vector<int64_t>& outShape) {
  std::vector<int64_t> contiguous(shape.size());
  int64_t run = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    contiguous[i] = run;
    run *= shape[i];
  }
  std::vector<int64_t> out(outShape.size(), 0);
  size_t off = outShape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) out[off + i] = shape[i] == 1 ? 0 : contiguous[i];
  return out;
}

/// Calls f(index, linear) for every multi-index of `shape` in row-major order.
template <typename F>
void forEachIndex(const std::vector<int64_t>& shape, F&& f) {
  int64_t n = shapeNumel(shape);
  if (n == 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    f(static_cast<const std::vector<int64_t>&>(idx), linear);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

/// Dot product of an index with strides.
inline int64_t offsetOf(const std::vector<int64_t>& idx, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * strides[i];
  return off;
}

}  // namespace plugsdk::exec
