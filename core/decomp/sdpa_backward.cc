// The flash-attention backward in prims (sdpa_backward.h): the weights P are recomputed from
// q, k, the mask and the saved logsumexp (never stored), dropout's keep mask is regenerated
// from the seed (prims.rand is counter-based), and D = rowsum(dO * out) = rowsum(P * dP), so
// dS = P * (dP - D) + P * dlse; dq = scale dS k, dk = scale dS^T q, dv = P_dropped^T dO.
#include "core/decomp/sdpa_backward.h"

#include <cmath>
#include <limits>

#include "core/decomp/decompose.h"
#include "core/decomp/rules_util.h"
#include "core/decomp/sdpa_scores.h"

namespace plugsdk::decomp {

using ir::Attribute;
using ir::DType;
using ir::Shape;
using ir::SymExpr;

StatusOr<std::vector<V>> sdpaBackward(Emitter& e, const SdpaBackwardArgs& a, bool declines) {
  V q = a.q, k = a.k, v = a.v, mask = a.mask, go = a.gradOut, glse = a.gradLse;
  const DType dt = e.dtype(q), acc = dt == DType::kF16 || dt == DType::kBF16 ? DType::kF32 : dt;
  const Shape& qs = e.shape(q);
  const size_t r = qs.size();
  const bool noScale = !a.scale || a.scale->isNone();
  if (noScale && !qs[r - 1].isConstant()) {
    const char* why = "prims.sdpa with a symbolic embedding size and no explicit scale has no gradient rule";
    return declines ? e.decline(why) : unimplemented(why);
  }
  const double scale = noScale ? 1.0 / std::sqrt(static_cast<double>(*qs[r - 1].constant())) : *a.scale->asDouble();
  const SymExpr& s = e.shape(k)[r - 2];
  auto mT = [&](V x) { return e.transpose(x, -2, -1); };
  // f16 / bf16 operands stay in their dtype for the matmuls, which return f32 (a mixed
  // prims.matmul: tensor cores, where f32 copies of q, k, v ran as f32 GEMMs -- vit_b_16's
  // attention backward was 5 ms of a 29 ms step). Everything else runs in `acc`; P and dS are
  // rounded to the operands' dtype only as the second matmuls' operands, as flash attention's
  // backward does (eager's bf16 SDPA backward).
  auto mm = [&](V x, V y) { return e.matmul(e.convert(x, dt), e.convert(y, dt), acc); };
  // f16 / bf16 keys padded with zero rows to a multiple of 8, as the forward's expansion does
  // (rules_library.cc): the rows of the scores, P and dS then start 16-byte aligned, and the
  // GEMMs read P^T and dS^T as transposed views. Unpadded (vit_b_16's S = 197), the
  // backward's elementwise kernel wrote P^T and dS^T itself, reading the f32 scores across
  // their rows: 164 us a layer on the H200. The padded keys' scores are -inf, so P and dS are
  // 0 there; the gradients of k and v drop the padded rows. Not with dropout: its generator is
  // indexed by positions in the unpadded scores.
  const int64_t align = 8;
  const bool pads = acc != dt && a.dropout == 0 && s.isConstant() && *s.constant() % align != 0;
  const SymExpr sp = pads ? SymExpr(*s.constant() + align - *s.constant() % align) : s;
  auto padKeys = [&](V x) { return padDim(e, x, -2, sp - s); };
  auto unpadKeys = [&](V x) { return pads && x ? e.sliceDim(x, -2, SymExpr(0), s) : x; };
  const V kp = padKeys(k), vp = padKeys(v);
  V sc = e.mul(mm(q, mT(kp)), e.scalar(scale, acc));
  if (!e.ok()) return e.status();
  const Shape scores = e.shape(sc);
  const V zero = e.scalar(0.0, acc);
  sc = maskScores(e, sc, s, sp, a.causal, mask, acc);
  V p = e.unary("exp", e.sub(sc, e.unsqueeze(e.convert(a.lse, acc), -1)));
  V ds = nullptr, gv = nullptr;
  if (go) {
    V dp = mm(go, mT(vp));
    go = e.convert(go, acc);
    V pd = p;
    if (a.dropout > 0) {
      const double keep = 1.0 - a.dropout;
      std::vector<SymExpr> shape(scores.begin(), scores.end());
      V u = e.op("prims.rand", {},
                 {{"shape", Attribute::fromInts(shape)},
                  {"seed", Attribute::fromInt(a.seed)},
                  {"dtype", Attribute::fromDType(DType::kF64)}});
      V kept = e.binary("lt", u, e.scalar(keep, DType::kF64));
      V inv = e.scalar(1.0 / keep, acc);
      pd = e.where(kept, e.mul(p, inv), zero);
      dp = e.where(kept, e.mul(dp, inv), zero);
    }
    V d = e.sum(e.mul(go, e.convert(a.out, acc)), {-1}, true);
    ds = e.mul(p, e.sub(dp, d));
    gv = unpadKeys(mm(mT(pd), go));
  }
  if (glse) {
    V extra = e.mul(p, e.unsqueeze(e.convert(glse, acc), -1));
    ds = ds ? e.add(ds, extra) : extra;
  }
  V sv = e.scalar(scale, acc);
  V gq = e.mul(mm(ds, kp), sv);
  V gk = e.mul(unpadKeys(mm(mT(ds), q)), sv);
  V gm = a.wantMaskGrad && mask ? (pads ? e.sliceDim(ds, -1, SymExpr(0), s) : ds) : nullptr;
  if (!gv) gv = e.full(e.shape(v), 0.0, dt);
  if (!e.ok()) return e.status();
  return std::vector<V>{e.convert(gq, dt), e.convert(gk, dt), e.convert(gv, dt), gm};
}

namespace {

using rules::Result;

Result sdpaBackwardRule(Emitter& e, const DecompCall& c) {
  SdpaBackwardArgs a;
  a.gradOut = c.input(0);
  a.q = c.input(1), a.k = c.input(2), a.v = c.input(3), a.out = c.input(4), a.lse = c.input(5), a.mask = c.input(6);
  a.dropout = c.getFloat("dropout_p");
  a.seed = c.getInt("seed");
  a.causal = c.getBool("is_causal");
  const Attribute scale = c.isNone("scale") ? Attribute::none() : Attribute::fromFloat(c.getFloat("scale"));
  a.scale = &scale;
  ASSIGN_OR_RETURN(std::vector<V> g, sdpaBackward(e, a, true));
  return e.done({g[0], g[1], g[2]});
}

}  // namespace

void addSdpaBackwardRule(DecompTable& t) { t.add("prims.sdpa_backward", sdpaBackwardRule); }

}  // namespace plugsdk::decomp
