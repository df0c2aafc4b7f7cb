// prims.matmul on the CPU: f32, f16 and bf16 through the blocked GEMM (f32 accumulate,
// operands read in place through their strides), f64 and the integers as plain loops in
// double and wrapping int64, parallel over rows.
#include <oneapi/tbb/parallel_for.h>

#include <memory>

#include "backends/cpu/library/library_ops.h"
#include "backends/cpu/runtime/launch.h"

namespace plugsdk::cpu {

namespace {

/// Calls fn(batch linear index, element offsets of a, b and out) for each batch position.
template <typename Fn>
void forEachBatch(const TensorRef& a, const TensorRef& b, const TensorRef& out, Fn&& fn) {
  const size_t nb = out.shape.size() - 2;
  int64_t total = 1;
  for (size_t d = 0; d < nb; ++d) total *= out.shape[d];
  std::vector<int64_t> idx(nb, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t oa = a.offset, ob = b.offset, oo = out.offset, rest = i;
    for (size_t d = nb; d-- > 0;) {
      idx[d] = rest % out.shape[d];
      rest /= out.shape[d];
      oa += idx[d] * a.strides[d];
      ob += idx[d] * b.strides[d];
      oo += idx[d] * out.strides[d];
    }
    fn(i, oa, ob, oo);
  }
}

}  // namespace

sdk::Status runMatmul(const TensorRef& a, const TensorRef& b, const TensorRef& out, const LibraryContext& ctx) {
  const size_t r = out.shape.size();
  if (r < 2 || a.shape.size() != r || b.shape.size() != r)
    return sdk::invalidArgument("matmul operands of unequal rank");
  const int64_t M = out.shape[r - 2], N = out.shape[r - 1], K = a.shape[r - 1];
  const bool floatPath = a.dtype == PLUGSDK_DTYPE_F32 || a.dtype == PLUGSDK_DTYPE_F16 || a.dtype == PLUGSDK_DTYPE_BF16;
  if (floatPath && isFloatDtype(out.dtype) && out.dtype != PLUGSDK_DTYPE_F64) {
    // C in f32: the output itself when it is a row-major f32 matrix, else a temporary.
    const bool direct = out.dtype == PLUGSDK_DTYPE_F32 && out.strides[r - 1] == 1 && out.strides[r - 2] == N;
    std::unique_ptr<float[]> temp;
    if (!direct) temp.reset(new (std::nothrow) float[static_cast<size_t>(M * N)]);
    if (!direct && !temp)
      return sdk::resourceExhausted("matmul: no memory for an f32 result of " + std::to_string(M * N));
    sdk::Status st = sdk::Status::ok();
    // A fused epilogue runs on each block of C as the GEMM finishes it (its grid is the
    // result's shape, so rows of batch entry i are outer points i * M + m).
    const bool fuse = direct && ctx.epilogue;
    forEachBatch(a, b, out, [&](int64_t batchIndex, int64_t oa, int64_t ob, int64_t oo) {
      if (!st.isOk()) return;
      GemmProblem pr;
      pr.m = M;
      pr.n = N;
      pr.k = K;
      pr.a = {a.base + oa * dtypeBytes(a.dtype), gemmElementOf(a.dtype), a.strides[r - 2], a.strides[r - 1], 0};
      pr.b = {b.base + ob * dtypeBytes(b.dtype), gemmElementOf(b.dtype), b.strides[r - 2], b.strides[r - 1], 0};
      pr.c = direct ? reinterpret_cast<float*>(out.base) + oo : temp.get();
      pr.ldc = N;
      GemmOptions opt;
      opt.arena = ctx.arena;
      if (fuse)
        opt.onBlockDone = [&, batchIndex](int64_t, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
          ctx.epilogue->runRange(batchIndex * M + m0, batchIndex * M + m1, n0, n1);
        };
      st = gemm(*ctx.gemm, pr, opt);
      if (!st.isOk() || direct) return;
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j)
          storeDouble(out.base, out.dtype, oo + i * out.strides[r - 2] + j * out.strides[r - 1], temp[i * N + j]);
    });
    if (fuse && st.isOk()) *ctx.epilogueDone = true;
    return st;
  }
  // f64 and the integers: one row of C per task.
  const bool fp = isFloatDtype(a.dtype);
  forEachBatch(a, b, out, [&](int64_t, int64_t oa, int64_t ob, int64_t oo) {
    ctx.arena->execute([&] {
      tbb::parallel_for(int64_t{0}, M, [&](int64_t i) {
        for (int64_t j = 0; j < N; ++j) {
          const int64_t at = oo + i * out.strides[r - 2] + j * out.strides[r - 1];
          if (fp) {
            double acc = 0;
            for (int64_t k = 0; k < K; ++k)
              acc += loadDouble(a.base, a.dtype, oa + i * a.strides[r - 2] + k * a.strides[r - 1]) *
                     loadDouble(b.base, b.dtype, ob + k * b.strides[r - 2] + j * b.strides[r - 1]);
            storeDouble(out.base, out.dtype, at, acc);
          } else {
            uint64_t acc = 0;
            for (int64_t k = 0; k < K; ++k)
              acc += static_cast<uint64_t>(loadInt(a.base, a.dtype, oa + i * a.strides[r - 2] + k * a.strides[r - 1])) *
                     static_cast<uint64_t>(loadInt(b.base, b.dtype, ob + k * b.strides[r - 2] + j * b.strides[r - 1]));
            storeInt(out.base, out.dtype, at, static_cast<int64_t>(acc));
          }
        }
      });
    });
  });
  return sdk::Status::ok();
}

}  // namespace plugsdk::cpu
