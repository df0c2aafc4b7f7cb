// prims.sdpa on the CPU: attention fused per block of query rows. For each batch position
// and block of up to 64 queries, the scores S = scale * Q K^T come from the GEMM into a
// block-sized buffer, each row is masked, soft-maxed (its logsumexp kept) and dropped out
// in place, and P V comes from the GEMM again: the L x S score matrix is never formed.
// f64 runs the same algorithm row by row in double. Semantics as the reference
// (core/exec/kernels_nn_attention.cc): a bool mask's false and the causal upper triangle
// give -inf; a fully masked row gives zeros and lse 0; dropout keeps weight (i, j) iff
// uniformAt(seed, its row-major position in [..., L, S]) < 1 - p, scaled by 1 / (1 - p).
#include <oneapi/tbb/parallel_for.h>

#include <cmath>
#include <limits>
#include <memory>
#include <mutex>

#include "backends/cpu/library/library_ops.h"

namespace plugsdk::cpu {

namespace {

double uniformAt(int64_t seed, int64_t counter) {
  const uint64_t key = splitmix64(static_cast<uint64_t>(seed));
  return std::ldexp(static_cast<double>(splitmix64(key + static_cast<uint64_t>(counter)) >> 11), -53);
}

/// The element offset of the matrix of `t` (trailing two dims) at batch position `idx`
/// of the output's batch dims, broadcasting size-1 and missing leading dims.
int64_t batchOffset(const TensorRef& t, const std::vector<int64_t>& idx) {
  const size_t nb = t.shape.size() - 2, off = idx.size() - nb;
  int64_t o = t.offset;
  for (size_t d = 0; d < nb; ++d)
    if (t.shape[d] != 1) o += idx[off + d] * t.strides[d];
  return o;
}

constexpr int64_t kBlock = 64;

}  // namespace

sdk::Status runSdpa(const TensorRef& q, const TensorRef& k, const TensorRef& v, const TensorRef* mask,
                    const TensorRef& out, const TensorRef& lse, const Attributes& attrs, const LibraryContext& ctx) {
  const size_t r = out.shape.size();
  if (r < 2 || q.shape.size() < 2 || k.shape.size() < 2 || v.shape.size() < 2)
    return sdk::invalidArgument("sdpa operands need at least 2 dims");
  const int64_t L = q.shape[q.shape.size() - 2], E = q.shape.back(), S = k.shape[k.shape.size() - 2],
                Ev = v.shape.back();
  sdk::StatusOr<bool> causal = attrs.getBool("is_causal");
  if (!causal.isOk()) return causal.status();
  double scale = 1.0 / std::sqrt(static_cast<double>(E));
  if (!attrs.isNone("scale")) {
    sdk::StatusOr<double> s = attrs.getFloat("scale");
    if (!s.isOk()) return s.status();
    scale = *s;
  }
  double p = 0;
  int64_t seed = 0;
  if (attrs.has("dropout_p")) {
    sdk::StatusOr<double> d = attrs.getFloat("dropout_p");
    if (!d.isOk()) return d.status();
    p = *d;
  }
  if (attrs.has("seed")) {
    sdk::StatusOr<int64_t> s = attrs.getInt("seed");
    if (!s.isOk()) return s.status();
    seed = *s;
  }
  const double keep = 1.0 - p;
  std::vector<int64_t> ob(out.shape.begin(), out.shape.end() - 2);
  int64_t batches = 1;
  for (int64_t d : ob) batches *= d;
  const int64_t blocks = (L + kBlock - 1) / kBlock;
  const bool viaGemm = q.dtype != PLUGSDK_DTYPE_F64;
  const double kInf = std::numeric_limits<double>::infinity();
  // The mask's strides over [..., L, S] of the output (broadcast dims stride 0).
  std::vector<int64_t> mstr(r, 0);
  if (mask) {
    const size_t off = r - mask->shape.size();
    for (size_t d = 0; d < mask->shape.size(); ++d) mstr[off + d] = mask->shape[d] == 1 ? 0 : mask->strides[d];
  }
  sdk::Status failed = sdk::Status::ok();
  std::mutex failedMutex;
  ctx.arena->execute([&] {
    tbb::parallel_for(int64_t{0}, batches * blocks, [&](int64_t t) {
      const int64_t b = t / blocks, l0 = (t % blocks) * kBlock, lb = std::min(kBlock, L - l0);
      std::vector<int64_t> idx(ob.size());
      int64_t rest = b;
      for (size_t d = ob.size(); d-- > 0;) {
        idx[d] = rest % ob[d];
        rest /= ob[d];
      }
      const int64_t qo = batchOffset(q, idx), ko = batchOffset(k, idx), vo = batchOffset(v, idx);
      int64_t mo = mask ? mask->offset : 0, oo = out.offset, lo = lse.offset;
      for (size_t d = 0; d < ob.size(); ++d) {
        mo += idx[d] * mstr[d];
        oo += idx[d] * out.strides[d];
        lo += idx[d] * lse.strides[d];
      }
      std::vector<double> scores(static_cast<size_t>(lb * S));
      std::vector<float> sf, pv;
      if (viaGemm) {
        sf.resize(static_cast<size_t>(lb * S));
        pv.resize(static_cast<size_t>(lb * Ev));
        GemmProblem pr;
        pr.m = lb;
        pr.n = S;
        pr.k = E;
        pr.a = {q.base + (qo + l0 * q.strides[q.shape.size() - 2]) * dtypeBytes(q.dtype), gemmElementOf(q.dtype),
                q.strides[q.shape.size() - 2], q.strides.back(), 0};
        pr.b = {k.base + ko * dtypeBytes(k.dtype), gemmElementOf(k.dtype), k.strides.back(),
                k.strides[k.shape.size() - 2], 0};
        pr.c = sf.data();
        pr.ldc = S;
        sdk::Status st = gemm(*ctx.gemm, pr, GemmOptions{});
        if (!st.isOk()) {
          std::lock_guard<std::mutex> lock(failedMutex);
          failed = st;
          return;
        }
        for (size_t i = 0; i < sf.size(); ++i) scores[i] = sf[i];
      } else {
        for (int64_t i = 0; i < lb; ++i)
          for (int64_t j = 0; j < S; ++j) {
            double acc = 0;
            for (int64_t e = 0; e < E; ++e)
              acc += loadDouble(q.base, q.dtype, qo + (l0 + i) * q.strides[q.shape.size() - 2] + e * q.strides.back()) *
                     loadDouble(k.base, k.dtype, ko + j * k.strides[k.shape.size() - 2] + e * k.strides.back());
            scores[static_cast<size_t>(i * S + j)] = acc;
          }
      }
      std::vector<bool> empty(static_cast<size_t>(lb), false);
      for (int64_t i = 0; i < lb; ++i) {
        const int64_t l = l0 + i;
        double* row = scores.data() + i * S;
        bool allMasked = true;
        double mx = -kInf;
        for (int64_t j = 0; j < S; ++j) {
          double sc = row[j] * scale;
          if (*causal && j > l) sc = -kInf;
          if (mask) {
            const int64_t m = mo + l * mstr[r - 2] + j * mstr[r - 1];
            if (mask->dtype == PLUGSDK_DTYPE_BOOL) {
              if (loadInt(mask->base, mask->dtype, m) == 0) sc = -kInf;
            } else {
              sc += loadDouble(mask->base, mask->dtype, m);
            }
          }
          row[j] = sc;
          if (sc != -kInf) allMasked = false;
          if (std::isnan(sc) || sc > mx) mx = std::isnan(mx) ? mx : sc;
        }
        const int64_t lseAt = lo + l * lse.strides[r - 2];
        if (allMasked) {
          empty[static_cast<size_t>(i)] = true;
          storeDouble(lse.base, lse.dtype, lseAt, 0.0);
          for (int64_t j = 0; j < S; ++j) row[j] = 0;
          continue;
        }
        double sum = 0;
        for (int64_t j = 0; j < S; ++j) sum += (row[j] = std::exp(row[j] - mx));
        storeDouble(lse.base, lse.dtype, lseAt, mx + std::log(sum));
        for (int64_t j = 0; j < S; ++j) {
          double w = row[j] / sum;
          if (p > 0) w = uniformAt(seed, (b * L + l) * S + j) < keep ? w / keep : 0.0;
          row[j] = w;
        }
      }
      // out rows = P V.
      if (viaGemm) {
        for (size_t i = 0; i < sf.size(); ++i) sf[i] = static_cast<float>(scores[i]);
        GemmProblem pr;
        pr.m = lb;
        pr.n = Ev;
        pr.k = S;
        pr.a = {sf.data(), GemmElement::kF32, S, 1, 0};
        pr.b = {v.base + vo * dtypeBytes(v.dtype), gemmElementOf(v.dtype), v.strides[v.shape.size() - 2],
                v.strides.back(), 0};
        pr.c = pv.data();
        pr.ldc = Ev;
        sdk::Status st = gemm(*ctx.gemm, pr, GemmOptions{});
        if (!st.isOk()) {
          std::lock_guard<std::mutex> lock(failedMutex);
          failed = st;
          return;
        }
      }
      for (int64_t i = 0; i < lb; ++i)
        for (int64_t e = 0; e < Ev; ++e) {
          double acc = 0;
          if (viaGemm) {
            acc = pv[static_cast<size_t>(i * Ev + e)];
          } else {
            for (int64_t j = 0; j < S; ++j)
              acc += scores[static_cast<size_t>(i * S + j)] *
                     loadDouble(v.base, v.dtype, vo + j * v.strides[v.shape.size() - 2] + e * v.strides.back());
          }
          if (empty[static_cast<size_t>(i)]) acc = 0;
          storeDouble(out.base, out.dtype, oo + (l0 + i) * out.strides[r - 2] + e * out.strides[r - 1], acc);
        }
    });
  });
  return failed;
}

}  // namespace plugsdk::cpu
