// Library prims: the ops backends want whole (and fuse epilogues into) rather than as loops:
// batched matmul, N-d convolution and scaled-dot-product attention.
#include <string>
#include <tuple>

#include "core/ops/aten_ops.h"
#include "core/prims/infer_util.h"
#include "core/prims/prims.h"

namespace plugsdk::prims {

namespace {

using detail::one;
using ir::DType;
using ir::InferContext;
using ir::Shape;
using ir::SymExpr;
using ir::TensorType;
using Types = StatusOr<std::vector<TensorType>>;

Status requireEqualDim(const InferContext& ctx, const SymExpr& a, const SymExpr& b, const std::string& what) {
  if (!detail::provedEQ(a, b, ctx.assumptions()))
    return ctx.error(what + " must be equal, got " + a.toString() + " and " + b.toString());
  return Status::ok();
}

Types inferMatmul(const InferContext& ctx) {
  const TensorType &a = *ctx.input(0), &b = *ctx.input(1);
  if (a.rank() < 2 || a.rank() != b.rank())
    return ctx.error("a and b must have the same rank >= 2 ([..., M, K] and [..., K, N]), got " + a.toString() +
                     " and " + b.toString());
  if (a.dtype != b.dtype || a.dtype == DType::kBool)
    return ctx.error("a and b must share a non-bool dtype, got " + a.toString() + " and " + b.toString());
  const size_t r = a.shape.size();
  for (size_t d = 0; d + 2 < r; ++d)
    RETURN_IF_ERROR(requireEqualDim(ctx, a.shape[d], b.shape[d], "batch dim " + std::to_string(d) + " of a and b"));
  RETURN_IF_ERROR(requireEqualDim(ctx, a.shape[r - 1], b.shape[r - 2], "K (a's last dim and b's dim -2)"));
  Shape out(a.shape.begin(), a.shape.end() - 1);
  out.push_back(b.shape[r - 1]);
  if (ctx.isNone("dtype")) return one(a.dtype, out);
  // An explicit result dtype: the operands' own, or f32 for f16/bf16 operands (the f32
  // accumulator, not rounded to the operands' dtype).
  const DType d = ctx.getDType("dtype");
  const bool half = a.dtype == DType::kF16 || a.dtype == DType::kBF16;
  if (d != a.dtype && !(half && d == DType::kF32))
    return ctx.error(std::string("dtype must be the operands' dtype, or f32 for f16/bf16 operands; got ") +
                     std::string(ir::dtypeName(d)) + " for " + a.toString());
  return one(d, out);
}

/// prims.sdpa's (output, logsumexp) types, its checks of query, key, value and the mask.
Types sdpaTypes(const InferContext& ctx, const TensorType& q, const TensorType& k, const TensorType& v,
                const TensorType* mask) {
  if (q.rank() < 2 || k.rank() != q.rank() || v.rank() != q.rank())
    return ctx.error("query, key and value must have one rank >= 2 ([..., L, E], [..., S, E], [..., S, Ev]), got " +
                     q.toString() + ", " + k.toString() + ", " + v.toString());
  if (!ir::isFloating(q.dtype) || k.dtype != q.dtype || v.dtype != q.dtype)
    return ctx.error("query, key and value must share a floating dtype, got " + q.toString() + ", " + k.toString() +
                     ", " + v.toString());
  const size_t r = q.shape.size();
  for (size_t d = 0; d + 2 < r; ++d) {
    RETURN_IF_ERROR(
        requireEqualDim(ctx, q.shape[d], k.shape[d], "batch dim " + std::to_string(d) + " of query and key"));
    RETURN_IF_ERROR(
        requireEqualDim(ctx, q.shape[d], v.shape[d], "batch dim " + std::to_string(d) + " of query and value"));
  }
  RETURN_IF_ERROR(requireEqualDim(ctx, q.shape[r - 1], k.shape[r - 1], "E (last dims of query and key)"));
  RETURN_IF_ERROR(requireEqualDim(ctx, k.shape[r - 2], v.shape[r - 2], "S (dim -2 of key and value)"));
  Shape weights(q.shape.begin(), q.shape.end() - 1);
  weights.push_back(k.shape[r - 2]);
  if (mask) {
    if (mask->dtype != DType::kBool && mask->dtype != q.dtype)
      return ctx.error("attn_mask must be bool (true = attend) or of the query's dtype, got " + mask->toString());
    if (mask->rank() != static_cast<int>(r))
      return ctx.error("attn_mask must have the weights' rank (broadcast it with prims.broadcast_in_dim), got " +
                       mask->toString() + " for weights " + ir::shapeToString(weights));
    for (size_t d = 0; d < r; ++d)
      RETURN_IF_ERROR(requireEqualDim(ctx, mask->shape[d], weights[d], "attn_mask dim " + std::to_string(d)));
    if (ctx.getBool("is_causal")) return ctx.error("attn_mask must be none when is_causal is true");
  }
  double p = ctx.getFloat("dropout_p");
  if (!(p >= 0.0 && p < 1.0)) return ctx.error("dropout_p must be in [0, 1), got " + ir::formatDouble(p));
  Shape out(q.shape.begin(), q.shape.end() - 1);
  out.push_back(v.shape[r - 1]);
  Shape lse(q.shape.begin(), q.shape.end() - 1);
  DType lseType = q.dtype == DType::kF64 ? DType::kF64 : DType::kF32;
  return std::vector<TensorType>{detail::tensorOf(q.dtype, out), detail::tensorOf(lseType, lse)};
}

Types inferSdpa(const InferContext& ctx) {
  return sdpaTypes(ctx, *ctx.input(0), *ctx.input(1), *ctx.input(2), ctx.input(3));
}

/// The gradients of prims.sdpa's output with respect to its query, key and value: grad_out
/// and out are [..., L, Ev], logsumexp [..., L] (the forward's own outputs), the mask and
/// the attributes the forward's.
Types inferSdpaBackward(const InferContext& ctx) {
  const TensorType &g = *ctx.input(0), &q = *ctx.input(1), &k = *ctx.input(2), &v = *ctx.input(3);
  const TensorType &o = *ctx.input(4), &lse = *ctx.input(5);
  ASSIGN_OR_RETURN(const std::vector<TensorType> forward, sdpaTypes(ctx, q, k, v, ctx.input(6)));
  if (g.dtype != q.dtype || o.dtype != q.dtype)
    return ctx.error("grad_out and out must have the query's dtype, got " + g.toString() + " and " + o.toString() +
                     " for " + q.toString());
  if (lse.dtype != forward[1].dtype)
    return ctx.error("logsumexp must be " + std::string(ir::dtypeName(forward[1].dtype)) + ", got " + lse.toString());
  for (const auto& [what, t, want] :
       {std::tuple{"grad_out", &g, &forward[0].shape}, std::tuple{"out", &o, &forward[0].shape},
        std::tuple{"logsumexp", &lse, &forward[1].shape}}) {
    if (t->rank() != static_cast<int>(want->size()))
      return ctx.error(std::string(what) + " must be " + ir::shapeToString(*want) + ", got " + t->toString());
    for (size_t d = 0; d < want->size(); ++d)
      RETURN_IF_ERROR(requireEqualDim(ctx, t->shape[d], (*want)[d], std::string(what) + " dim " + std::to_string(d)));
  }
  return std::vector<TensorType>{q, k, v};
}

}  // namespace

Status registerLibraryPrims(ir::OpRegistry& reg) {
  const char* lib = "prim.library";
  RETURN_IF_ERROR(reg.add("prims.matmul(Tensor a, Tensor b, *, ScalarType? dtype=None) -> Tensor", inferMatmul, lib,
                          "batched matrix product [..., M, K] x [..., K, N] -> [..., M, N] (equal batch dims; "
                          "transposes are strided views); f16/bf16 accumulate in at least f32 and round once "
                          "to dtype (none: the operands' dtype; f32: the accumulator unrounded)"));
  RETURN_IF_ERROR(
      reg.add("prims.convolution(Tensor input, Tensor weight, int[] stride, SymInt[] padding, int[] "
              "dilation, bool transposed, SymInt[] output_padding, int groups) -> Tensor",
              ops::nn::inferConvolution, lib,
              "N-d (1-3 spatial dims) convolution or transposed convolution with groups, as "
              "aten.convolution without bias (bias is an epilogue add)"));
  RETURN_IF_ERROR(
      reg.add("prims.sdpa(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, *, float "
              "dropout_p=0.0, bool is_causal=False, float? scale=None, int seed=0) -> (Tensor, Tensor)",
              inferSdpa, lib,
              "softmax(scale * q k^T + mask) v with its row logsumexp; bool mask true = attend; causal "
              "is top-left aligned; fully masked rows give 0 (lse 0); dropout keeps weight (i, j) iff "
              "rand(seed) at its row-major position in [..., L, S] is < 1 - p, scaled by 1 / (1 - p)"));
  RETURN_IF_ERROR(
      reg.add("prims.sdpa_backward(Tensor grad_out, Tensor query, Tensor key, Tensor value, Tensor out, Tensor "
              "logsumexp, Tensor? attn_mask=None, *, float dropout_p=0.0, bool is_causal=False, float? scale=None, "
              "int seed=0) -> (Tensor, Tensor, Tensor)",
              inferSdpaBackward, lib,
              "the gradients of prims.sdpa's output (grad_out) with respect to query, key and value, for the "
              "forward with these inputs and attributes; out and logsumexp are that forward's outputs (a backend "
              "may use them rather than recompute the weights); no gradient for the mask"));
  return Status::ok();
}

}  // namespace plugsdk::prims
