// VJPs of the library prims. matmul's are two matmuls; convolution's is aten.convolution_
// backward (which decomposes into transposed and weight-gradient convolutions); sdpa's is
// prims.sdpa_backward, the flash-attention backward (the weights recomputed from q, k, the mask
// and the saved logsumexp, dropout's keep mask regenerated from the node's seed), or its
// expansion when the logsumexp output or a float mask needs a cotangent too.
#include "core/autograd/vjp_util.h"
#include "core/decomp/sdpa_backward.h"

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

/// prims.sdpa_backward when only the output has a cotangent and no float mask needs one (a
/// device may take it whole: a fused flash-attention backward); otherwise the same expansion
/// with the logsumexp's cotangent and the mask's (decomp/sdpa_backward.h).
Result sdpaVjp(Emitter& e, const VjpCall& c) {
  V mask = c.input(3);
  const bool maskGrad = c.needs(3) && mask && e.dtype(mask) != DType::kBool;
  if (c.cotangent(0) && !c.cotangent(1) && !maskGrad) {
    std::vector<V> g = e.apply("prims.sdpa_backward",
                               {c.cotangent(0), c.input(0), c.input(1), c.input(2), c.output(0), c.output(1), mask},
                               {{"dropout_p", c.attr("dropout_p")},
                                {"is_causal", c.attr("is_causal")},
                                {"scale", c.attr("scale")},
                                {"seed", c.attr("seed")}});
    if (!e.ok()) return e.status();
    return grads(e, c, {g[0], g[1], g[2], nullptr});
  }
  decomp::SdpaBackwardArgs a;
  a.gradOut = c.cotangent(0), a.gradLse = c.cotangent(1);
  a.q = c.input(0), a.k = c.input(1), a.v = c.input(2), a.out = c.output(0), a.lse = c.output(1), a.mask = mask;
  a.dropout = c.getFloat("dropout_p");
  a.seed = c.getInt("seed");
  a.causal = c.getBool("is_causal");
  const Attribute scale = c.attr("scale");
  a.scale = &scale;
  a.wantMaskGrad = maskGrad;
  ASSIGN_OR_RETURN(std::vector<V> g, decomp::sdpaBackward(e, a, false));
  V gm = g[3] ? e.convert(sumToShape(e, g[3], e.shape(mask)), e.dtype(mask)) : nullptr;
  return grads(e, c, {g[0], g[1], g[2], gm});
}

}  // namespace

void addLibraryVjps(VjpTable& t) {
  t.add("prims.matmul", matmulVjp);
  t.add("prims.convolution", convolutionVjp);
  t.add("prims.sdpa", sdpaVjp);
}

}  // namespace plugsdk::autograd
