// A direct 2-d convolution in double, for tests that check scheduled programs against it:
// one output element at a time, stride 1, square kernel, zero padding `pad`.
#pragma once

#include <cstdint>

#include "core/exec/host_tensor.h"

namespace plugsdk::sched {

/// y[n, o, y0, x0] of x [N, C, H, W] (row-major) convolved with w [O, C, K, K].
inline double convAt(const exec::HostTensor& x, const exec::HostTensor& w, int64_t c, int64_t h, int64_t wd, int64_t k,
                     int64_t pad, int64_t n, int64_t o, int64_t y0, int64_t x0) {
  double acc = 0;
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t a = 0; a < k; ++a)
      for (int64_t b = 0; b < k; ++b) {
        const int64_t iy = y0 + a - pad, ix = x0 + b - pad;
        if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
        acc += x.getDouble(((n * c + ci) * h + iy) * wd + ix) * w.getDouble(((o * c + ci) * k + a) * k + b);
      }
  return acc;
}

}  // namespace plugsdk::sched
