// The reference kernel of prims.sdpa_backward: the gradients of attention with respect to
// query, key and value, recomputed from q, k, v and the mask in float64 (the forward's out
// and logsumexp inputs are not read, so the reference does not depend on how a device
// computed them).
#include <cmath>
#include <limits>
#include <vector>

#include "core/exec/kernels_nn_common.h"
#include "core/prims/scalar_ops.h"

namespace plugsdk::exec::nn {

void attentionBackward(const HostTensor& g, const HostTensor& q, const HostTensor& k, const HostTensor& v,
                       const HostTensor* mask, bool causal, double scale, const AttentionDropout& dropout,
                       HostTensor& dq, HostTensor& dk, HostTensor& dv) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double keep = 1.0 - dropout.p;
  const size_t r = q.shape().size();
  const int64_t L = q.shape()[r - 2], E = q.shape()[r - 1], S = k.shape()[r - 2], Ev = v.shape()[r - 1];
  std::vector<int64_t> full(q.shape().begin(), q.shape().end() - 2), maskStrides;
  const std::vector<int64_t> batch = full;
  full.push_back(L);
  full.push_back(S);
  if (mask) maskStrides = broadcastStrides(mask->shape(), full);
  std::vector<double> p(static_cast<size_t>(L * S)), kept(p.size()), ds(p.size());
  std::vector<int64_t> mi(full.size(), 0);
  forEachIndex(batch, [&](const std::vector<int64_t>& idx, int64_t b) {
    const int64_t qo = b * L * E, ko = b * S * E, vo = b * S * Ev, go = b * L * Ev;
    std::copy(idx.begin(), idx.end(), mi.begin());
    for (int64_t l = 0; l < L; ++l) {
      double* row = &p[static_cast<size_t>(l * S)];
      double mx = -kInf;
      for (int64_t j = 0; j < S; ++j) {
        double sc = 0;
        for (int64_t e = 0; e < E; ++e) sc += q.getDouble(qo + l * E + e) * k.getDouble(ko + j * E + e);
        sc *= scale;
        if (causal && j > l) sc = -kInf;
        if (mask) {
          mi[mi.size() - 2] = l;
          mi[mi.size() - 1] = j;
          const int64_t m = offsetOf(mi, maskStrides);
          if (mask->dtype() == ir::DType::kBool) {
            if (mask->getInt(m) == 0) sc = -kInf;
          } else {
            sc += mask->getDouble(m);
          }
        }
        row[j] = sc;
        if (sc > mx) mx = sc;
      }
      double sum = 0;
      for (int64_t j = 0; j < S; ++j) sum += (row[j] = mx == -kInf ? 0.0 : std::exp(row[j] - mx));
      for (int64_t j = 0; j < S; ++j) {
        row[j] = sum > 0 ? row[j] / sum : 0.0;  // a fully masked row has no weights
        const bool k1 = dropout.p <= 0 || prims::uniformAt(dropout.seed, (b * L + l) * S + j) < keep;
        kept[static_cast<size_t>(l * S + j)] = dropout.p > 0 ? (k1 ? 1.0 / keep : 0.0) : 1.0;
      }
      // dP = (dO v^T) * kept; D = sum_j P dP; dS = P (dP - D).
      double d = 0;
      for (int64_t j = 0; j < S; ++j) {
        double dp = 0;
        for (int64_t e = 0; e < Ev; ++e) dp += g.getDouble(go + l * Ev + e) * v.getDouble(vo + j * Ev + e);
        dp *= kept[static_cast<size_t>(l * S + j)];
        ds[static_cast<size_t>(l * S + j)] = dp;
        d += row[j] * dp;
      }
      for (int64_t j = 0; j < S; ++j)
        ds[static_cast<size_t>(l * S + j)] = row[j] * (ds[static_cast<size_t>(l * S + j)] - d);
    }
    for (int64_t l = 0; l < L; ++l)
      for (int64_t e = 0; e < E; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < S; ++j) acc += ds[static_cast<size_t>(l * S + j)] * k.getDouble(ko + j * E + e);
        dq.setDouble(qo + l * E + e, acc * scale);
      }
    for (int64_t j = 0; j < S; ++j) {
      for (int64_t e = 0; e < E; ++e) {
        double acc = 0;
        for (int64_t l = 0; l < L; ++l) acc += ds[static_cast<size_t>(l * S + j)] * q.getDouble(qo + l * E + e);
        dk.setDouble(ko + j * E + e, acc * scale);
      }
      for (int64_t e = 0; e < Ev; ++e) {  // dv = (P * kept)^T dO
        double acc = 0;
        for (int64_t l = 0; l < L; ++l)
          acc +=
              p[static_cast<size_t>(l * S + j)] * kept[static_cast<size_t>(l * S + j)] * g.getDouble(go + l * Ev + e);
        dv.setDouble(vo + j * Ev + e, acc);
      }
    }
  });
}

}  // namespace plugsdk::exec::nn
