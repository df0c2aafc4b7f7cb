// Structural prims: broadcast_in_dim, reshape, permute, slice, rev, pad, concat and
// as_strided. None computes anything; the scheduler turns each into index arithmetic.
#include <string>

#include "core/prims/infer_util.h"
#include "core/prims/prims.h"

namespace plugsdk::prims {

namespace {

using detail::one;
using ir::InferContext;
using ir::Shape;
using ir::SymExpr;
using ir::TensorType;
using Types = StatusOr<std::vector<TensorType>>;

Types inferBroadcastInDim(const InferContext& ctx) {
  const TensorType& a = *ctx.input(0);
  Shape shape = ctx.getSyms("shape");
  std::vector<int64_t> bd = ctx.getInts("broadcast_dimensions");
  if (static_cast<int>(bd.size()) != a.rank())
    return ctx.error("broadcast_dimensions needs one entry per input dim (" + std::to_string(a.rank()) + "), got " +
                     std::to_string(bd.size()));
  for (size_t i = 0; i < bd.size(); ++i) {
    if (bd[i] < 0 || bd[i] >= static_cast<int64_t>(shape.size()))
      return ctx.error("broadcast_dimensions entry " + std::to_string(bd[i]) + " is out of range for the output rank " +
                       std::to_string(shape.size()));
    if (i > 0 && bd[i] <= bd[i - 1]) return ctx.error("broadcast_dimensions must be strictly increasing");
    const SymExpr& in = a.shape[i];
    const SymExpr& out = shape[static_cast<size_t>(bd[i])];
    if (in != SymExpr(1) && !detail::provedEQ(in, out, ctx.assumptions()))
      return ctx.error("input dim " + std::to_string(i) + " of size " + in.toString() + " cannot broadcast to " +
                       out.toString() + " (sizes must be equal or 1)");
  }
  for (const SymExpr& s : shape) RETURN_IF_ERROR(detail::checkNonNegative(ctx, s, "shape entry"));
  return one(a.dtype, shape);
}

Types inferReshape(const InferContext& ctx) {
  const TensorType& a = *ctx.input(0);
  Shape shape = ctx.getSyms("shape");
  for (const SymExpr& s : shape) RETURN_IF_ERROR(detail::checkNonNegative(ctx, s, "shape entry"));
  if (!detail::provedEQ(ir::numelOf(shape), a.numel(), ctx.assumptions()))
    return ctx.error("shape " + ir::shapeToString(shape) + " does not hold the " + a.numel().toString() +
                     " elements of " + a.toString() + " (not provably equal)");
  return one(a.dtype, shape);
}

Types inferPermute(const InferContext& ctx) {
  const TensorType& a = *ctx.input(0);
  std::vector<int64_t> dims = ctx.getInts("dims");
  if (static_cast<int>(dims.size()) != a.rank())
    return ctx.error("dims must be a permutation of the " + std::to_string(a.rank()) + " input dims");
  RETURN_IF_ERROR(detail::checkDims(ctx, dims, a.rank(), "dims"));
  Shape out;
  for (int64_t d : dims) out.push_back(a.shape[static_cast<size_t>(d)]);
  return one(a.dtype, out);
}

Types inferSlice(const InferContext& ctx) {
  const TensorType& a = *ctx.input(0);
  Shape start = ctx.getSyms("start_indices"), limit = ctx.getSyms("limit_indices");
  std::vector<int64_t> strides = ctx.getInts("strides");
  if (strides.empty()) strides.assign(static_cast<size_t>(a.rank()), 1);
  if (static_cast<int>(start.size()) != a.rank() || static_cast<int>(limit.size()) != a.rank() ||
      static_cast<int>(strides.size()) != a.rank())
    return ctx.error("start_indices, limit_indices and strides need one entry per dim (" + std::to_string(a.rank()) +
                     ")");
  Shape out;
  const auto& as = ctx.assumptions();
  for (size_t d = 0; d < start.size(); ++d) {
    const std::string dim = "dim " + std::to_string(d);
    if (strides[d] < 1) return ctx.error(dim + ": stride " + std::to_string(strides[d]) + " must be >= 1");
    if (detail::provedLT(start[d], 0, as) || detail::provedLT(limit[d], start[d], as) ||
        detail::provedLT(a.shape[d], limit[d], as))
      return ctx.error(dim + ": need 0 <= start <= limit <= size, got start " + start[d].toString() + ", limit " +
                       limit[d].toString() + ", size " + a.shape[d].toString());
    out.push_back(SymExpr::floorDiv(limit[d] - start[d] + (strides[d] - 1), strides[d]));
  }
  return one(a.dtype, out);
}

Types inferRev(const InferContext& ctx) {
  const TensorType& a = *ctx.input(0);
  RETURN_IF_ERROR(detail::checkDims(ctx, ctx.getInts("dims"), a.rank(), "dims"));
  return one(a.dtype, a.shape);
}

Types inferPad(const InferContext& ctx) {
  const TensorType& a = *ctx.input(0);
  Shape low = ctx.getSyms("low"), high = ctx.getSyms("high");
  std::vector<int64_t> interior = ctx.getInts("interior");
  if (interior.empty()) interior.assign(static_cast<size_t>(a.rank()), 0);
  if (static_cast<int>(low.size()) != a.rank() || static_cast<int>(high.size()) != a.rank() ||
      static_cast<int>(interior.size()) != a.rank())
    return ctx.error("low, high and interior need one entry per dim (" + std::to_string(a.rank()) + ")");
  Shape out;
  for (size_t d = 0; d < low.size(); ++d) {
    const std::string dim = "dim " + std::to_string(d);
    RETURN_IF_ERROR(detail::checkNonNegative(ctx, low[d], dim + ": low padding"));
    RETURN_IF_ERROR(detail::checkNonNegative(ctx, high[d], dim + ": high padding"));
    if (interior[d] < 0) return ctx.error(dim + ": interior padding must be >= 0 (use prims.slice to crop)");
    SymExpr n = a.shape[d];
    SymExpr grown = n;
    if (interior[d] > 0) {
      if (n.constant() == 0)
        grown = 0;
      else if (detail::provedGE(n, 1, ctx.assumptions()))
        grown = n + (n - 1) * interior[d];
      else
        return ctx.error(dim + ": interior padding needs a size that is provably >= 1, got " + n.toString());
    }
    out.push_back(low[d] + grown + high[d]);
  }
  if (ctx.attr("padding_value").kind() == ir::Attribute::Kind::kFloat && !ir::isFloating(a.dtype))
    return ctx.error("a floating padding_value cannot pad " + a.toString());
  return one(a.dtype, out);
}

Types inferConcat(const InferContext& ctx) {
  if (ctx.numInputs() == 0) return ctx.error("needs at least one tensor");
  const TensorType& a = *ctx.input(0);
  int64_t dim = ctx.getInt("dim");
  if (dim < 0 || dim >= a.rank())
    return ctx.error("dim " + std::to_string(dim) + " is out of range for rank " + std::to_string(a.rank()));
  Shape out = a.shape;
  for (size_t i = 1; i < ctx.numInputs(); ++i) {
    const TensorType& t = *ctx.input(i);
    if (t.dtype != a.dtype || t.rank() != a.rank())
      return ctx.error("tensors must share dtype and rank, got " + a.toString() + " and " + t.toString());
    for (int d = 0; d < a.rank(); ++d) {
      if (d == dim) continue;
      if (!detail::provedEQ(t.shape[static_cast<size_t>(d)], a.shape[static_cast<size_t>(d)], ctx.assumptions()))
        return ctx.error("tensor " + std::to_string(i) + " differs from tensor 0 in dim " + std::to_string(d) + ": " +
                         t.toString() + " vs " + a.toString());
    }
    out[static_cast<size_t>(dim)] = out[static_cast<size_t>(dim)] + t.shape[static_cast<size_t>(dim)];
  }
  return one(a.dtype, out);
}

Types inferAsStrided(const InferContext& ctx) {
  const TensorType& a = *ctx.input(0);
  Shape size = ctx.getSyms("size"), stride = ctx.getSyms("stride");
  SymExpr offset = ctx.getSym("storage_offset");
  if (size.size() != stride.size()) return ctx.error("size and stride must have the same length");
  SymExpr last = offset;
  for (size_t d = 0; d < size.size(); ++d) {
    RETURN_IF_ERROR(detail::checkNonNegative(ctx, size[d], "size entry"));
    RETURN_IF_ERROR(detail::checkNonNegative(ctx, stride[d], "stride entry"));
    last = last + (size[d] - 1) * stride[d];
  }
  RETURN_IF_ERROR(detail::checkNonNegative(ctx, offset, "storage_offset"));
  if (detail::provedGE(last, a.numel(), ctx.assumptions()) &&
      !detail::provedEQ(ir::numelOf(size), 0, ctx.assumptions()))
    return ctx.error("the view reaches element " + last.toString() + " of a tensor with " + a.numel().toString() +
                     " elements");
  return one(a.dtype, size);
}

}  // namespace

Status registerStructurePrims(ir::OpRegistry& reg) {
  const char* cat = "prim.structure";
  RETURN_IF_ERROR(reg.add("prims.broadcast_in_dim(Tensor a, SymInt[] shape, int[] broadcast_dimensions) -> Tensor",
                          inferBroadcastInDim, cat,
                          "input dim i becomes output dim broadcast_dimensions[i] (strictly increasing); size-1 "
                          "input dims and output dims not listed repeat the data"));
  RETURN_IF_ERROR(reg.add("prims.reshape(Tensor a, SymInt[] shape) -> Tensor", inferReshape, cat,
                          "the same elements in row-major order under a new shape (equal numel, no -1)"));
  RETURN_IF_ERROR(
      reg.add("prims.permute(Tensor a, int[] dims) -> Tensor", inferPermute, cat, "output dim i is input dim dims[i]"));
  RETURN_IF_ERROR(
      reg.add("prims.slice(Tensor a, SymInt[] start_indices, SymInt[] limit_indices, int[] strides=[]) "
              "-> Tensor",
              inferSlice, cat,
              "elements start, start+stride, ... below limit in every dim (0 <= start <= limit <= size, "
              "stride >= 1; [] strides = all 1)"));
  RETURN_IF_ERROR(reg.add("prims.rev(Tensor a, int[] dims) -> Tensor", inferRev, cat, "reverses the listed dims"));
  RETURN_IF_ERROR(
      reg.add("prims.pad(Tensor a, Scalar padding_value, SymInt[] low, SymInt[] high, int[] interior=[]) "
              "-> Tensor",
              inferPad, cat,
              "low/high elements of padding_value before/after each dim and interior ones between "
              "elements (all >= 0; crop with prims.slice)"));
  RETURN_IF_ERROR(reg.add("prims.concat(Tensor[] tensors, int dim) -> Tensor", inferConcat, cat,
                          "joins tensors of one dtype and rank along dim"));
  RETURN_IF_ERROR(
      reg.add("prims.as_strided(Tensor a, SymInt[] size, SymInt[] stride, SymInt storage_offset=0) -> "
              "Tensor",
              inferAsStrided, cat,
              "a view of a's row-major elements: out[i] = a.flat[storage_offset + sum(i_d * stride_d)] "
              "(windows for pooling; every element read must exist)"));
  return Status::ok();
}

}  // namespace plugsdk::prims
