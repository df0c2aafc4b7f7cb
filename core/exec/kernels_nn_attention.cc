// Reference kernels for scaled_dot_product_attention and its CPU flash form (with logsumexp),
// native_dropout (seeded counter-based mask) and nll_loss_forward, mse_loss, binary_cross_entropy.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/exec/kernels_nn_common.h"
#include "core/prims/scalar_ops.h"

namespace plugsdk::exec::nn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Offset of a (broadcast) operand's batch for the output batch index `idx`: a dim of size
/// `size` against the output's `osize` reads index idx / (osize / size), which is plain
/// broadcasting for size 1 or osize, and grouped-query head sharing otherwise.
int64_t batchOffset(const std::vector<int64_t>& idx, const std::vector<int64_t>& outBatch,
                    const std::vector<int64_t>& shape, int64_t matrixSize) {
  const size_t nb = shape.size() - 2, off = outBatch.size() - nb;
  int64_t o = 0;
  for (size_t i = 0; i < nb; ++i) o = o * shape[i] + idx[off + i] / (outBatch[off + i] / shape[i]);
  return o * matrixSize;
}

/// Attention for every index of the batch dims `ob` (q, k and v broadcast to them, see
/// batchOffset): out = softmax(scale * q k^T + mask) v, where a bool mask's false and, when
/// `causal`, the keys above the top-left aligned diagonal give -inf scores. A row whose
/// scores are all -inf gives zeros (PyTorch's safe softmax). With `lse`, each row's
/// logsumexp of the scores goes there as well (0 for a fully masked row, as PyTorch's CPU
/// flash kernel).
}  // namespace

void attention(const HostTensor& q, const HostTensor& k, const HostTensor& v, const HostTensor* mask, bool causal,
               double scale, const std::vector<int64_t>& ob, HostTensor& out, HostTensor* lse,
               const AttentionDropout& dropout) {
  const double keep = 1.0 - dropout.p;
  const int64_t L = q.shape()[q.shape().size() - 2], E = q.shape().back();
  const int64_t S = k.shape()[k.shape().size() - 2], Ev = v.shape().back();
  std::vector<int64_t> full = ob, maskStrides;
  full.push_back(L);
  full.push_back(S);
  if (mask) maskStrides = broadcastStrides(mask->shape(), full);
  std::vector<double> scores(static_cast<size_t>(S));
  std::vector<int64_t> mi(full.size(), 0);
  forEachIndex(ob, [&](const std::vector<int64_t>& idx, int64_t b) {
    const int64_t qo = batchOffset(idx, ob, q.shape(), L * E), ko = batchOffset(idx, ob, k.shape(), S * E);
    const int64_t vo = batchOffset(idx, ob, v.shape(), S * Ev);
    std::copy(idx.begin(), idx.end(), mi.begin());
    for (int64_t l = 0; l < L; ++l) {
      bool allMasked = true;
      double mx = -kInf;
      for (int64_t j = 0; j < S; ++j) {
        double sc = 0;
        for (int64_t e = 0; e < E; ++e) sc += q.getDouble(qo + l * E + e) * k.getDouble(ko + j * E + e);
        sc *= scale;
        if (causal && j > l) sc = -kInf;  // top-left aligned tril(ones(L, S))
        if (mask) {
          mi[mi.size() - 2] = l;
          mi[mi.size() - 1] = j;
          const int64_t m = offsetOf(mi, maskStrides);
          if (mask->dtype() == DType::kBool) {
            if (mask->getInt(m) == 0) sc = -kInf;
          } else {
            sc += mask->getDouble(m);
          }
        }
        scores[static_cast<size_t>(j)] = sc;
        if (sc != -kInf) allMasked = false;
        if (std::isnan(sc) || sc > mx) mx = std::isnan(mx) ? mx : sc;
      }
      const int64_t orow = (b * L + l) * Ev;
      if (allMasked) {
        if (lse) lse->setDouble(b * L + l, 0.0);
        continue;  // the output row stays zero
      }
      double sum = 0;
      for (double& sc : scores) sum += (sc = std::exp(sc - mx));
      if (lse) lse->setDouble(b * L + l, mx + std::log(sum));
      for (int64_t j = 0; j < S; ++j) {
        double& w = scores[static_cast<size_t>(j)];
        w /= sum;
        if (dropout.p > 0) w = prims::uniformAt(dropout.seed, (b * L + l) * S + j) < keep ? w / keep : 0.0;
      }
      for (int64_t e = 0; e < Ev; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < S; ++j) acc += scores[static_cast<size_t>(j)] * v.getDouble(vo + j * Ev + e);
        out.setDouble(orow + e, acc);
      }
    }
  });
}

namespace {

/// The scale attribute, or 1 / sqrt(E) for none.
double attentionScale(const RefKernelContext& ctx, const HostTensor& q) {
  return ctx.isNone("scale") ? 1.0 / std::sqrt(static_cast<double>(q.shape().back())) : ctx.getFloat("scale");
}

Status refuseDropout(const RefKernelContext& ctx) {
  if (ctx.getFloat("dropout_p") > 0)
    return unimplemented(ctx.schema().name + ": dropout_p > 0 is unimplemented in the reference executor");
  return Status::ok();
}

StatusOr<std::vector<HostTensor>> sdpa(const RefKernelContext& ctx) {
  const HostTensor &q = *ctx.input(0), &k = *ctx.input(1), &v = *ctx.input(2);
  RETURN_IF_ERROR(refuseDropout(ctx));
  const auto& os = ctx.outShape();
  HostTensor out = ctx.makeOutput();
  attention(q, k, v, ctx.input(3), ctx.getBool("is_causal"), attentionScale(ctx, q),
            std::vector<int64_t>(os.begin(), os.end() - 2), out, nullptr);
  return std::vector<HostTensor>{std::move(out)};
}

/// (output, logsumexp) over [batch, heads]; the mask is floating (inference refuses bool).
StatusOr<std::vector<HostTensor>> flashAttentionCpu(const RefKernelContext& ctx) {
  const HostTensor &q = *ctx.input(0), &k = *ctx.input(1), &v = *ctx.input(2);
  RETURN_IF_ERROR(refuseDropout(ctx));
  HostTensor out = ctx.makeOutput(0), lse = ctx.makeOutput(1);
  attention(q, k, v, ctx.input(3), ctx.getBool("is_causal"), attentionScale(ctx, q), {q.shape()[0], q.shape()[1]}, out,
            &lse);
  return std::vector<HostTensor>{std::move(out), std::move(lse)};
}

/// Element i is kept iff u_i < 1 - p, where u_i = (splitmix64(splitmix64(seed) + i) >> 11) * 2^-53 is a
/// uniform double in [0, 1). Kept elements are scaled by 1 / (1 - p) (by 0 when p == 1, as PyTorch).
StatusOr<std::vector<HostTensor>> nativeDropout(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  HostTensor out = ctx.makeOutput(0), mask = ctx.makeOutput(1);
  const bool train = ctx.isNone("train") || ctx.getBool("train");
  if (!train) {
    for (int64_t i = 0; i < x.numel(); ++i) {
      out.setDouble(i, x.getDouble(i));
      mask.setInt(i, 1);
    }
    return std::vector<HostTensor>{std::move(out), std::move(mask)};
  }
  const double keep = 1.0 - ctx.getFloat("p");
  const double scale = keep == 0 ? 0.0 : 1.0 / keep;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double u = prims::uniformAt(ctx.getInt("seed"), i);
    const bool kept = u < keep;
    mask.setInt(i, kept ? 1 : 0);
    out.setDouble(i, x.getDouble(i) * (kept ? 1.0 : 0.0) * scale);
  }
  return std::vector<HostTensor>{std::move(out), std::move(mask)};
}

StatusOr<std::vector<HostTensor>> nllLoss(const RefKernelContext& ctx) {
  const HostTensor &x = *ctx.input(0), &target = *ctx.input(1);
  const HostTensor* w = ctx.input(2);
  const int64_t reduction = ctx.getInt("reduction");
  ASSIGN_OR_RETURN(int64_t ignore, ctx.evalInt("ignore_index"));
  const int64_t classes = x.shape().back(), batch = x.rank() == 2 ? x.shape()[0] : 1;
  HostTensor out = ctx.makeOutput(0), total = ctx.makeOutput(1);
  auto classOf = [&](int64_t i, int64_t& t) -> Status {
    t = target.getInt(i);
    if (t != ignore && (t < 0 || t >= classes))
      return invalidArgument(ctx.schema().name + ": Target " + std::to_string(t) + " is out of bounds (" +
                             std::to_string(classes) + " classes).");
    return Status::ok();
  };
  if (reduction == 0 && x.rank() == 2) {
    for (int64_t i = 0; i < batch; ++i) {
      int64_t t;
      RETURN_IF_ERROR(classOf(i, t));
      if (t != ignore) out.setDouble(i, -x.getDouble(i * classes + t) * paramOr(w, t, 1.0));
    }
    return std::vector<HostTensor>{std::move(out), std::move(total)};  // total_weight stays 0
  }
  double sum = 0, weightSum = 0;
  for (int64_t i = 0; i < batch; ++i) {
    int64_t t;
    RETURN_IF_ERROR(classOf(i, t));
    if (t == ignore) continue;
    const double wt = paramOr(w, t, 1.0);
    weightSum += wt;
    sum -= x.getDouble(i * classes + t) * wt;
  }
  if (reduction == 1) sum /= weightSum;  // all ignored (or empty): 0 / 0 = NaN, as PyTorch
  out.setDouble(0, sum);
  total.setDouble(0, weightSum);
  return std::vector<HostTensor>{std::move(out), std::move(total)};
}

/// Elementwise loss over the broadcast of the inputs, then the reduction (mean of none = NaN).
template <typename F>
StatusOr<std::vector<HostTensor>> elementwiseLoss(const RefKernelContext& ctx, F loss) {
  std::vector<const HostTensor*> ins;
  std::vector<int64_t> shape;
  for (const HostTensor* t : ctx.inputs())
    if (t) {
      ins.push_back(t);
      if (t->shape().size() > shape.size()) shape.resize(t->shape().size(), 1);
    }
  for (const HostTensor* t : ins)
    for (size_t i = 0; i < t->shape().size(); ++i) {
      int64_t& d = shape[shape.size() - t->shape().size() + i];
      if (t->shape()[i] != 1) d = t->shape()[i];
    }
  std::vector<std::vector<int64_t>> strides;
  for (const HostTensor* t : ins) strides.push_back(broadcastStrides(t->shape(), shape));
  const int64_t reduction = ctx.getInt("reduction");
  HostTensor out = ctx.makeOutput();
  double sum = 0;
  Status status = Status::ok();
  std::vector<double> vals(ins.size());
  forEachIndex(shape, [&](const std::vector<int64_t>& idx, int64_t i) {
    if (!status.isOk()) return;
    for (size_t k = 0; k < ins.size(); ++k) vals[k] = ins[k]->getDouble(offsetOf(idx, strides[k]));
    auto l = loss(vals);
    if (!l.isOk()) {
      status = l.status();
      return;
    }
    if (reduction == 0)
      out.setDouble(i, *l);
    else
      sum += *l;
  });
  RETURN_IF_ERROR(status);
  if (reduction != 0) out.setDouble(0, reduction == 1 ? sum / static_cast<double>(shapeNumel(shape)) : sum);
  return std::vector<HostTensor>{std::move(out)};
}

StatusOr<std::vector<HostTensor>> mseLoss(const RefKernelContext& ctx) {
  return elementwiseLoss(ctx, [](const std::vector<double>& v) -> StatusOr<double> {
    const double d = v[0] - v[1];
    return d * d;
  });
}

StatusOr<std::vector<HostTensor>> bceLoss(const RefKernelContext& ctx) {
  const std::string name = ctx.schema().name;
  return elementwiseLoss(ctx, [&name](const std::vector<double>& v) -> StatusOr<double> {
    const double x = v[0], t = v[1];
    if (!(x >= 0 && x <= 1)) return invalidArgument(name + ": all elements of input should be between 0 and 1");
    if (!(t >= 0 && t <= 1)) return invalidArgument(name + ": all elements of target should be between 0 and 1");
    double l = (t - 1) * std::max(std::log1p(-x), -100.0) - t * std::max(std::log(x), -100.0);
    return v.size() > 2 ? l * v[2] : l;
  });
}

}  // namespace

void registerAttentionLossKernels(RefKernelTable& t) {
  t.add("aten.scaled_dot_product_attention", sdpa);
  t.add("aten._scaled_dot_product_flash_attention_for_cpu", flashAttentionCpu);
  t.add("aten.native_dropout", nativeDropout);
  t.add("aten.nll_loss_forward", nllLoss);
  t.add("aten.mse_loss", mseLoss);
  t.add("aten.binary_cross_entropy", bceLoss);
}

}  // namespace plugsdk::exec::nn
