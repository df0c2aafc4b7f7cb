// Internal to the nn reference kernels (core/exec/kernels_nn*.cc): per-file registration
// functions and small helpers. Not part of the public executor API.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/exec/kernel_utils.h"
#include "core/exec/kernels.h"

namespace plugsdk::exec::nn {

void registerMatmulKernels(RefKernelTable& t);         // kernels_nn.cc
void registerConvPoolKernels(RefKernelTable& t);       // kernels_nn_conv.cc
void registerNormKernels(RefKernelTable& t);           // kernels_nn_norm.cc
void registerAttentionLossKernels(RefKernelTable& t);  // kernels_nn_attention.cc

/// aten.convolution's kernel (bias optional at input 2), shared with prims.convolution.
StatusOr<std::vector<HostTensor>> convolutionKernel(const RefKernelContext& ctx);

/// Dropout applied to attention weights: weight (row-major position i in [batch..., L, S]) is
/// kept iff uniformAt(seed, i) < 1 - p and then scaled by 1 / (1 - p).
struct AttentionDropout {
  double p = 0;
  int64_t seed = 0;
};

/// Attention over the batch dims `ob` (q, k, v broadcast to them): out = softmax(scale * q k^T
/// + mask) v, optionally its row logsumexp `lse` and dropout on the weights (kernels_nn_attention.cc).
void attention(const HostTensor& q, const HostTensor& k, const HostTensor& v, const HostTensor* mask, bool causal,
               double scale, const std::vector<int64_t>& ob, HostTensor& out, HostTensor* lse,
               const AttentionDropout& dropout = {});

/// prims.sdpa_backward: dq, dk, dv of the attention above (equal batch dims, no broadcast)
/// for the output's cotangent g, recomputed in float64 (kernels_nn_attention_backward.cc).
void attentionBackward(const HostTensor& g, const HostTensor& q, const HostTensor& k, const HostTensor& v,
                       const HostTensor* mask, bool causal, double scale, const AttentionDropout& dropout,
                       HostTensor& dq, HostTensor& dk, HostTensor& dv);

/// Integer arithmetic that wraps (two's complement) instead of overflowing: integer
/// kernels accumulate in uint64_t and store through HostTensor::setInt, which wraps to width.
inline uint64_t wrapU(int64_t v) { return static_cast<uint64_t>(v); }
inline int64_t wrapS(uint64_t v) { return static_cast<int64_t>(v); }

/// The elements of `t` as T: double for floating kernels, uint64_t (wrapping) for integer ones.
template <typename T>
std::vector<T> elements(const HostTensor& t) {
  std::vector<T> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if constexpr (std::is_same_v<T, double>)
      out[static_cast<size_t>(i)] = t.getDouble(i);
    else
      out[static_cast<size_t>(i)] = wrapU(t.getInt(i));
  }
  return out;
}

/// Stores `v` (double or wrapping uint64_t) into element i of `t`.
template <typename T>
void store(HostTensor& t, int64_t i, T v) {
  if constexpr (std::is_same_v<T, double>)
    t.setDouble(i, v);
  else
    t.setInt(i, wrapS(v));
}

/// c[batch][n, p] = sum_k a[batch][n, k] * b[batch][k, p], accumulated in k order.
template <typename T>
inline std::vector<T> batchedProduct(const std::vector<T>& a, const std::vector<T>& b, int64_t batch, int64_t n,
                                     int64_t m, int64_t p) {
  std::vector<T> c(static_cast<size_t>(batch * n * p), T(0));
  for (int64_t bi = 0; bi < batch; ++bi) {
    const T* ab = a.data() + bi * n * m;
    const T* bb = b.data() + bi * m * p;
    T* cb = c.data() + bi * n * p;
    for (int64_t i = 0; i < n; ++i) {
      T* crow = cb + i * p;
      for (int64_t k = 0; k < m; ++k) {
        const T av = ab[i * m + k];
        const T* brow = bb + k * p;
        for (int64_t j = 0; j < p; ++j) crow[j] += av * brow[j];  // no skipping of zeros: inf * 0 is NaN
      }
    }
  }
  return c;
}

/// Product of shape[b, e).
inline int64_t prodRange(const std::vector<int64_t>& shape, size_t b, size_t e) {
  int64_t n = 1;
  for (size_t i = b; i < e && i < shape.size(); ++i) n *= shape[i];
  return n;
}

/// Element (0-based) of the optional 1-D parameter `p`, or `fallback` when absent.
inline double paramOr(const HostTensor* p, int64_t i, double fallback) { return p ? p->getDouble(i) : fallback; }

}  // namespace plugsdk::exec::nn
