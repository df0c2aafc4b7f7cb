// A fused epilogue (a kernel reading a matmul's result through its ACCUMULATOR argument)
// recognized as one cuBLASLt computes inside the GEMM: D = act(A B + C + bias), where bias is
// a vector read by the result's column, C (the residual) a matrix read at the result's own
// element, act none, relu or the tanh GELU, and D stored at the result's own element, in the
// dtype the epilogue stores. The activation is recognized by its values, not its spelling:
// the statements between the sum and the store are evaluated (in double) at probe points and
// compared with each activation, so any decomposition of relu or GELU matches. Floating casts
// in between are taken as exact (cuBLASLt keeps the sum in f32 until D is stored, as inductor
// does). Anything else (two stores, a row vector, a reduction) is left to the epilogue kernel
// itself (epilogue_kernel.h). Pure logic, tested without a GPU (tests/epilogue_test.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plugsdk/kernel_view.hpp"

namespace plugsdk::cuda {

enum class Activation { kNone, kRelu, kGeluTanh };

struct NativeEpilogue {
  Activation act = Activation::kNone;
  int bias = -1;      ///< the epilogue argument read as [..., i_last] (or by the asked dim), or -1
  int residual = -1;  ///< the argument read at the result's element, or -1
  int out = -1;       ///< the argument stored
  uint32_t outDtype = 0, biasDtype = 0, residualDtype = 0;
  std::string describe() const;  ///< "relu(acc + bias %b + residual %r) -> bf16 %z"
};

/// The cuBLASLt form of epilogue `k`, or nullopt with the reason in `*why`. The bias is read
/// by grid dim `biasDim` (-1: the last, a matmul's column; a convolution's channel is dim 1,
/// its result [N, K, ...] being the grid: cuDNN's fused form, conv.h).
std::optional<NativeEpilogue> matchNativeEpilogue(const sdk::KernelView& k, std::string* why, int biasDim = -1);

}  // namespace plugsdk::cuda
