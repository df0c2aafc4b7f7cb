// prims.matmul as a kernel of the kernel IR, lowered like any other (codegen/nvptx.h): a grid
// over the result [..., M, N] with a loop over K, loads through the call's own stride and
// offset expressions, the products summed in f32 (f16, bf16, f32), f64, or i64 (integers and
// bool) and converted to the result's dtype. It runs what cuBLASLt does not take: integer
// dtypes, layouts without a unit stride, zero sizes, and every matmul where cuBLASLt is
// missing. The kernel is as fast as the core's own expansion of the op (a block per result
// element), not a tensor-core kernel.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/library/matmul_plan.h"
#include "plugsdk/kernel_view.hpp"

namespace plugsdk::cuda {

/// A plugsdk_kernel_t with the storage it points into.
struct BuiltKernel {
  plugsdk_kernel_t kernel{};
  std::vector<plugsdk_index_insn_t> pool;
  std::vector<plugsdk_index_expr_t> grid;
  std::vector<plugsdk_index_expr_t> loopSizes;
  std::vector<plugsdk_stmt_t> stmts;
  std::vector<plugsdk_kernel_arg_t> args;
  std::vector<const char*> symbolPtrs;
  std::vector<std::string> symbols;
  std::string name, text;
  sdk::KernelView view() const { return sdk::KernelView(kernel); }
};

/// The kernel for `call` (args a, b, result; the call's symbols); valid by KernelView::validate.
std::unique_ptr<BuiltKernel> matmulKernel(const MatmulCall& call);

/// out[i] = cast(in[i]) over i < n (args in, out; symbol n): a bias converted to the dtype
/// cuBLASLt's epilogue reads it in (an f32 parameter on a bf16 result under autocast).
std::unique_ptr<BuiltKernel> castKernel(uint32_t from, uint32_t to);

}  // namespace plugsdk::cuda
