// VJPs of the library prims. matmul's are two matmuls; convolution's is aten.convolution_
// backward (which decomposes into transposed and weight-gradient convolutions); sdpa's is the
// flash-attention backward: the weights P are recomputed from q, k, the mask and the saved
// logsumexp (never stored), dropout's keep mask is regenerated from the node's seed (prims.rand
// is counter-based), and the logsumexp output and a float mask get their cotangents too.
#include <cmath>
#include <limits>

#include "core/autograd/vjp_util.h"

namespace plugsdk::autograd {
namespace {

using namespace vjp;  // NOLINT(google-build-using-namespace): the rule files' vocabulary

V mT(Emitter& e, V x) { return e.transpose(x, -2, -1); }

/// Whether v is a rank-2 transpose (a prims.permute [1, 0]): nn.Linear's weight as used.
bool isTransposed2d(V v) {
  const ir::Node* n = v->producer();
  if (!n || n->op() != "prims.permute" || !n->attr("dims")) return false;
  return n->attr("dims")->asIntList() == std::vector<int64_t>{1, 0};
}

/// ga = g b^T and gb = a^T g. An operand that is itself a transpose (y = x W^T) gets its
/// gradient computed transposed, gb = (g^T a)^T: the permute VJP's transpose then cancels it
/// (Emitter::permute folds the pair) and the weight's gradient leaves the GEMM in its own
/// layout, with no transpose kernel after it.
Result matmulVjp(Emitter& e, const VjpCall& c) {
  V a = c.input(0), b = c.input(1), g = c.cotangent();
  // A matmul with an f32 result from f16/bf16 operands: its gradients in the operands' dtype.
  g = e.convert(g, e.dtype(a));
  V ga = nullptr, gb = nullptr;
  if (c.needs(0))
    ga = isTransposed2d(a) ? mT(e, e.op("prims.matmul", {b, mT(e, g)})) : e.op("prims.matmul", {g, mT(e, b)});
  if (c.needs(1))
    gb = isTransposed2d(b) ? mT(e, e.op("prims.matmul", {mT(e, g), a})) : e.op("prims.matmul", {mT(e, a), g});
  return grads(e, c, {ga, gb});
}

Result convolutionVjp(Emitter& e, const VjpCall& c) {
  V x = c.input(0), w = c.input(1), g = c.cotangent();
  std::vector<V> outs =
      e.apply("aten.convolution_backward", {g, x, w},
              {{"bias_sizes", Attribute::none()},
               {"stride", c.attr("stride")},
               {"padding", c.attr("padding")},
               {"dilation", c.attr("dilation")},
               {"transposed", c.attr("transposed")},
               {"output_padding", c.attr("output_padding")},
               {"groups", c.attr("groups")},
               {"output_mask", Attribute::fromInts(std::vector<int64_t>{c.needs(0), c.needs(1), 0})}});
  if (!e.ok()) return e.status();
  return grads(e, c, {outs[0], outs[1]});
}

/// Scores = scale * q k^T with the causal and explicit masks applied, P = exp(scores - lse)
/// (0 where masked and on fully masked rows, whose lse is 0 and scores -inf). With dropout,
/// out = (P * keep / (1 - p)) v, and D = rowsum(dO * out) = rowsum(P * dP) either way, so
/// dS = P * (dP - D) + P * dlse; dq = scale dS k, dk = scale dS^T q, dv = P_dropped^T dO.
Result sdpaVjp(Emitter& e, const VjpCall& c) {
  V q = c.input(0), k = c.input(1), v = c.input(2), mask = c.input(3);
  V go = c.cotangent(0), glse = c.cotangent(1);
  const DType dt = e.dtype(q), acc = dt == DType::kF16 || dt == DType::kBF16 ? DType::kF32 : dt;
  const Shape& qs = e.shape(q);
  const size_t r = qs.size();
  if (c.isNone("scale") && !qs[r - 1].isConstant())
    return unimplemented("prims.sdpa with a symbolic embedding size and no explicit scale has no gradient rule");
  const double scale =
      c.isNone("scale") ? 1.0 / std::sqrt(static_cast<double>(*qs[r - 1].constant())) : c.getFloat("scale");
  const SymExpr &l = qs[r - 2], &s = e.shape(k)[r - 2];
  // f16 / bf16 operands stay in their dtype for the matmuls, which return f32 (a mixed
  // prims.matmul: tensor cores, where f32 copies of q, k, v ran as f32 GEMMs -- vit_b_16's
  // attention backward was 5 ms of a 29 ms step). Everything else runs in `acc`; P and dS are
  // rounded to the operands' dtype only as the second matmuls' operands, as flash attention's
  // backward does (eager's bf16 SDPA backward).
  auto mm = [&](V a, V b) { return e.matmul(e.convert(a, dt), e.convert(b, dt), acc); };
  // f16 / bf16 keys padded with zero rows to a multiple of 8, as the forward's expansion does
  // (core/decomp/rules_library.cc): the rows of the scores, P and dS then start 16-byte
  // aligned, and the GEMMs read P^T and dS^T as transposed views. Unpadded (vit_b_16's
  // S = 197), the backward's elementwise kernel wrote P^T and dS^T itself, reading the f32
  // scores across their rows: 164 us a layer on the H200. The padded keys' scores are -inf,
  // so P and dS are 0 there; the gradients of k and v drop the padded rows. Not with dropout:
  // its generator is indexed by positions in the unpadded scores.
  const int64_t align = 8;
  const double dropout = c.getFloat("dropout_p");
  const bool pads = acc != dt && dropout == 0 && s.isConstant() && *s.constant() % align != 0;
  const SymExpr sp = pads ? SymExpr(*s.constant() + align - *s.constant() % align) : s;
  auto padKeys = [&](V x) {
    if (!pads) return x;
    std::vector<SymExpr> low(r, SymExpr(0)), high(r, SymExpr(0));
    high[r - 2] = sp - s;
    return e.pad(x, low, high, ir::Attribute::fromFloat(0.0));
  };
  auto unpadKeys = [&](V x) { return pads && x ? e.sliceDim(x, -2, SymExpr(0), s) : x; };
  const V kp = padKeys(k), vp = padKeys(v);
  V sc = e.mul(mm(q, mT(e, kp)), e.scalar(scale, acc));
  if (!e.ok()) return e.status();
  const Shape scores = e.shape(sc);
  Shape unpadded = scores;
  unpadded.back() = s;
  const V negInf = e.scalar(-std::numeric_limits<double>::infinity(), acc), zero = e.scalar(0.0, acc);
  if (pads) {
    V padded = e.binary("ge", e.broadcastInDim(e.iota(sp), scores, {static_cast<int64_t>(r) - 1}),
                        e.scalar(static_cast<double>(*s.constant()), DType::kI64));
    sc = e.where(padded, negInf, sc);
  }
  if (c.getBool("is_causal")) {
    V above = e.binary("gt", e.broadcastInDim(e.iota(sp), {l, sp}, {1}), e.broadcastInDim(e.iota(l), {l, sp}, {0}));
    sc = e.where(above, negInf, sc);
  }
  if (mask) {
    V m = e.broadcastTo(mask, unpadded);
    if (pads) {  // the padded keys are -inf already: any value works
      std::vector<SymExpr> low(r, SymExpr(0)), high(r, SymExpr(0));
      high[r - 1] = sp - s;
      m = e.pad(m, low, high,
                e.dtype(mask) == DType::kBool ? ir::Attribute::fromBool(false) : ir::Attribute::fromFloat(0.0));
    }
    sc = e.dtype(mask) == DType::kBool ? e.where(m, sc, negInf) : e.add(sc, e.convert(m, acc));
  }
  V p = e.unary("exp", e.sub(sc, e.unsqueeze(e.convert(c.output(1), acc), -1)));
  V ds = nullptr, gv = nullptr;
  if (go) {
    V dp = mm(go, mT(e, vp));
    go = e.convert(go, acc);
    V pd = p;
    if (dropout > 0) {
      const double keep = 1.0 - dropout;
      std::vector<SymExpr> shape(scores.begin(), scores.end());
      V u = e.op("prims.rand", {},
                 {{"shape", Attribute::fromInts(shape)},
                  {"seed", c.attr("seed")},
                  {"dtype", Attribute::fromDType(DType::kF64)}});
      V kept = e.binary("lt", u, e.scalar(keep, DType::kF64));
      V inv = e.scalar(1.0 / keep, acc);
      pd = e.where(kept, e.mul(p, inv), zero);
      dp = e.where(kept, e.mul(dp, inv), zero);
    }
    V d = e.sum(e.mul(go, e.convert(c.output(0), acc)), {-1}, true);
    ds = e.mul(p, e.sub(dp, d));
    if (c.needs(2)) gv = unpadKeys(mm(mT(e, pd), go));
  }
  if (glse) {
    V extra = e.mul(p, e.unsqueeze(e.convert(glse, acc), -1));
    ds = ds ? e.add(ds, extra) : extra;
  }
  V sv = e.scalar(scale, acc);
  V gq = c.needs(0) ? e.mul(mm(ds, kp), sv) : nullptr;
  V gk = c.needs(1) ? e.mul(unpadKeys(mm(mT(e, ds), q)), sv) : nullptr;
  V gm = c.needs(3) && mask && e.dtype(mask) != DType::kBool
             ? sumToShape(e, pads ? e.sliceDim(ds, -1, SymExpr(0), s) : ds, e.shape(mask))
             : nullptr;
  return grads(e, c,
               {e.convert(gq, dt), e.convert(gk, dt), gv ? e.convert(gv, dt) : zerosLike(e, c.input(2)),
                gm ? e.convert(gm, e.dtype(mask)) : nullptr});
}

}  // namespace

void addLibraryVjps(VjpTable& t) {
  t.add("prims.matmul", matmulVjp);
  t.add("prims.convolution", convolutionVjp);
  t.add("prims.sdpa", sdpaVjp);
}

}  // namespace plugsdk::autograd
