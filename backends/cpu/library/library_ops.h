// The library ops themselves, on operands evaluated for one launch (library_call.h). Each
// writes every element of its outputs; the float paths compute in f32 with the GEMM
// (f16 / bf16 converted while packing), f64 and the integers in double / wrapping int64.
#pragma once

#include <vector>

#include "backends/cpu/library/elements.h"
#include "backends/cpu/library/library_call.h"

namespace plugsdk::cpu {

/// How the GEMM reads an operand of a float dtype (f32 for f32, f16 or bf16 storage).
inline GemmElement gemmElementOf(uint32_t dtype) {
  return dtype == PLUGSDK_DTYPE_F16    ? GemmElement::kF16
         : dtype == PLUGSDK_DTYPE_BF16 ? GemmElement::kBF16
                                       : GemmElement::kF32;
}

/// prims.matmul: out[..., M, N] = a[..., M, K] @ b[..., K, N] (equal batch dims).
sdk::Status runMatmul(const TensorRef& a, const TensorRef& b, const TensorRef& out, const LibraryContext& ctx);

/// prims.convolution (N-d, 1 to 3 spatial dims, groups, dilation, transposed).
sdk::Status runConvolution(const TensorRef& x, const TensorRef& w, const TensorRef& out, const Attributes& attrs,
                           const LibraryContext& ctx);

/// prims.sdpa: out and its row logsumexp lse; mask may be absent (base null).
sdk::Status runSdpa(const TensorRef& q, const TensorRef& k, const TensorRef& v, const TensorRef* mask,
                    const TensorRef& out, const TensorRef& lse, const Attributes& attrs, const LibraryContext& ctx);

}  // namespace plugsdk::cpu
