// ATen-level indexing ops (index_select, gather, scatter*, embedding, index.Tensor,
// index_put): schemas and shape/dtype inference. Index values are checked by the kernels.
#include <algorithm>

#include "core/ops/aten_ops.h"
#include "core/ops/shape_internal.h"

namespace plugsdk::ops {

using namespace shape_detail;

namespace {

const TensorType& self(const InferContext& ctx) { return *ctx.input(0); }

/// Rank as gather/scatter see it: a 0-dim tensor counts as 1-dim.
int nonEmptyRank(const TensorType& t) { return std::max(t.rank(), 1); }
SymExpr sizeAt(const TensorType& t, int d) { return t.rank() == 0 ? SymExpr(1) : t.shape[static_cast<size_t>(d)]; }

TypesOr inferIndexSelect(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  const TensorType& index = *ctx.input(1);
  if (!isIndexDType(index.dtype))
    return ctx.error("index must be int32 or int64, got " + std::string(ir::dtypeName(index.dtype)));
  if (index.rank() > 1)
    return ctx.error("index must be a vector (rank <= 1), got rank " + std::to_string(index.rank()));
  ASSIGN_OR_RETURN(int64_t dim, wrapDimIn(ctx, ctx.getInt("dim"), t.rank()));
  if (t.rank() == 0) {
    if (auto n = index.numel().constant(); n && *n != 1)
      return ctx.error("a 0-dim self takes exactly one index, got " + std::to_string(*n));
    return one(makeType(t.dtype, {}));
  }
  Shape out = t.shape;
  out[static_cast<size_t>(dim)] = index.numel();
  return one(makeType(t.dtype, std::move(out)));
}

/// gather/scatter shape rules: same (non-empty) rank, and index no larger than `bound` in
/// every dim (`exceptDim` excluded). Undecidable comparisons pass; the kernel re-checks.
Status checkNoLarger(const InferContext& ctx, const TensorType& index, const TensorType& bound, const char* boundName,
                     int64_t exceptDim) {
  if (nonEmptyRank(index) != nonEmptyRank(bound))
    return ctx.error("index tensor must have the same number of dimensions as " + std::string(boundName) + " (" +
                     std::to_string(index.rank()) + " vs " + std::to_string(bound.rank()) + ")");
  for (int d = 0; d < nonEmptyRank(index); ++d) {
    if (d == exceptDim) continue;
    if (provedLT(sizeAt(bound, d), sizeAt(index, d), ctx.assumptions()))
      return ctx.error("index " + symsToString(index.shape) + " must be no larger than " + boundName + " " +
                       symsToString(bound.shape) +
                       (exceptDim >= 0 ? " apart from dimension " + std::to_string(exceptDim) : "") + " (dim " +
                       std::to_string(d) + ")");
  }
  return Status::ok();
}

bool provablyEmpty(const TensorType& t) { return t.numel().constant() == 0; }

TypesOr inferGather(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  const TensorType& index = *ctx.input(1);
  if (index.dtype != DType::kI64)
    return ctx.error("index must be int64, got " + std::string(ir::dtypeName(index.dtype)));
  ASSIGN_OR_RETURN(int64_t dim, wrapDimIn(ctx, ctx.getInt("dim"), t.rank()));
  if (!provablyEmpty(index)) RETURN_IF_ERROR(checkNoLarger(ctx, index, t, "self", dim));
  return one(makeType(t.dtype, index.shape));
}

/// scatter.src, scatter_add, scatter.reduce, scatter_reduce.two: (self, index, src).
TypesOr inferScatterSrc(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  const TensorType& index = *ctx.input(1);
  const TensorType& src = *ctx.input(2);
  if (index.dtype != DType::kI64)
    return ctx.error("index must be int64, got " + std::string(ir::dtypeName(index.dtype)));
  if (src.dtype != t.dtype)
    return ctx.error("self and src must have the same dtype, got " + std::string(ir::dtypeName(t.dtype)) + " and " +
                     std::string(ir::dtypeName(src.dtype)));
  ASSIGN_OR_RETURN(int64_t dim, wrapDimIn(ctx, ctx.getInt("dim"), t.rank()));
  if (!provablyEmpty(index)) {
    RETURN_IF_ERROR(checkNoLarger(ctx, index, t, "self", dim));
    RETURN_IF_ERROR(checkNoLarger(ctx, index, src, "src", -1));
  }
  return one(makeType(t.dtype, t.shape));
}

TypesOr inferScatterValue(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  const TensorType& index = *ctx.input(1);
  if (index.dtype != DType::kI64)
    return ctx.error("index must be int64, got " + std::string(ir::dtypeName(index.dtype)));
  ASSIGN_OR_RETURN(int64_t dim, wrapDimIn(ctx, ctx.getInt("dim"), t.rank()));
  if (!provablyEmpty(index)) RETURN_IF_ERROR(checkNoLarger(ctx, index, t, "self", dim));
  RETURN_IF_ERROR(checkScalarFits(ctx, ctx.attr("value"), t.dtype, "value"));
  return one(makeType(t.dtype, t.shape));
}

TypesOr inferScatterReduce(const InferContext& ctx) {
  std::string r = ctx.getString("reduce");
  if (r != "sum" && r != "prod" && r != "mean" && r != "amax" && r != "amin")
    return ctx.error("reduce must be one of \"sum\", \"prod\", \"mean\", \"amax\", \"amin\", got \"" + r + "\"");
  return inferScatterSrc(ctx);
}

TypesOr inferScatterLegacyReduce(const InferContext& ctx) {
  std::string r = ctx.getString("reduce");
  if (r != "add" && r != "multiply") return ctx.error("reduce must be \"add\" or \"multiply\", got \"" + r + "\"");
  return ctx.numInputs() == 3 ? inferScatterSrc(ctx) : inferScatterValue(ctx);
}

TypesOr inferEmbedding(const InferContext& ctx) {
  const TensorType& weight = *ctx.input(0);
  const TensorType& indices = *ctx.input(1);
  if (weight.rank() != 2) return ctx.error("weight must be 2-D, got rank " + std::to_string(weight.rank()));
  if (!isIndexDType(indices.dtype))
    return ctx.error("indices must be int32 or int64, got " + std::string(ir::dtypeName(indices.dtype)));
  Shape out = indices.shape;
  out.push_back(weight.shape[1]);
  return one(makeType(weight.dtype, std::move(out)));
}

/// index.Tensor / index_put: integer index tensors for the leading dims, broadcast together.
/// Returns the shape of the indexing result: broadcast shape + the dims not indexed.
StatusOr<Shape> indexedShape(const InferContext& ctx, const TensorType& t, size_t firstIndex) {
  std::vector<const TensorType*> idx(ctx.inputs().begin() + static_cast<std::ptrdiff_t>(firstIndex),
                                     ctx.inputs().end());
  if (idx.empty()) return ctx.error("at least one index tensor is required");
  if (static_cast<int>(idx.size()) > t.rank())
    return ctx.error("too many indices for a tensor of rank " + std::to_string(t.rank()) + " (got " +
                     std::to_string(idx.size()) + ")");
  for (size_t i = 0; i < idx.size(); ++i) {
    DType d = idx[i]->dtype;
    if (d == DType::kBool || d == DType::kU8)
      return ctx.error("index " + std::to_string(i) + " is a " + std::string(ir::dtypeName(d)) +
                       " mask: mask indexing has a data-dependent shape and is not supported (use integer indices)");
    if (!isIndexDType(d))
      return ctx.error("index " + std::to_string(i) + " must be int32 or int64, got " + std::string(ir::dtypeName(d)));
  }
  auto b = ir::broadcastAll(idx, ctx.assumptions());
  if (!b.isOk()) return b.status().withContext(ctx.schema().name + ": indices do not broadcast together");
  Shape out = *b;
  out.insert(out.end(), t.shape.begin() + static_cast<std::ptrdiff_t>(idx.size()), t.shape.end());
  return out;
}

TypesOr inferIndex(const InferContext& ctx) {
  ASSIGN_OR_RETURN(Shape out, indexedShape(ctx, self(ctx), 1));
  return one(makeType(self(ctx).dtype, std::move(out)));
}

TypesOr inferIndexPut(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  const TensorType& values = *ctx.input(1);
  if (values.dtype != t.dtype)
    return ctx.error("values must have self's dtype " + std::string(ir::dtypeName(t.dtype)) + ", got " +
                     std::string(ir::dtypeName(values.dtype)));
  ASSIGN_OR_RETURN(Shape target, indexedShape(ctx, t, 2));
  auto b = ir::broadcastShapes(values.shape, target, ctx.assumptions());
  bool fits = b.isOk() && b->size() == target.size();
  for (size_t i = 0; fits && i < target.size(); ++i) fits = provedEQ((*b)[i], target[i], ctx.assumptions());
  if (!fits)
    return ctx.error("shape mismatch: values of shape " + symsToString(values.shape) +
                     " cannot be broadcast to the indexing result of shape " + symsToString(target));
  return one(makeType(t.dtype, t.shape));
}

}  // namespace

Status registerIndexingOps(ir::OpRegistry& reg) {
  const std::string c = "indexing";
  RETURN_IF_ERROR(reg.add("aten.index_select(Tensor self, int dim, Tensor index) -> Tensor", inferIndexSelect, c,
                          "Entries of self at the int32/int64 index vector along dim."));
  RETURN_IF_ERROR(reg.add("aten.gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
                          inferGather, c,
                          "out[i][j] = self[index[i][j]][j] (for dim 0); the result has index's shape."));
  RETURN_IF_ERROR(reg.add("aten.scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", inferScatterSrc,
                          c, "A copy of self with src written at index along dim (last write wins)."));
  RETURN_IF_ERROR(reg.add("aten.scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
                          inferScatterValue, c, "A copy of self with value written at index along dim."));
  RETURN_IF_ERROR(
      reg.add("aten.scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor",
              inferScatterLegacyReduce, c, "scatter.src combining with \"add\" or \"multiply\"."));
  RETURN_IF_ERROR(
      reg.add("aten.scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor",
              inferScatterLegacyReduce, c, "scatter.value combining with \"add\" or \"multiply\"."));
  RETURN_IF_ERROR(reg.add("aten.scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", inferScatterSrc,
                          c, "A copy of self with src added at index along dim."));
  RETURN_IF_ERROR(
      reg.add("aten.scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, "
              "bool include_self=True) -> Tensor",
              inferScatterReduce, c, "Scatter reducing with sum, prod, mean, amax or amin."));
  RETURN_IF_ERROR(
      reg.add("aten.embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
              "bool sparse=False) -> Tensor",
              inferEmbedding, c, "Rows of weight at indices (padding_idx only matters for gradients)."));
  RETURN_IF_ERROR(reg.add("aten.index.Tensor(Tensor self, Tensor[] indices) -> Tensor", inferIndex, c,
                          "self[i0, i1, ...] with integer index tensors on the leading dims, broadcast together "
                          "(every index given; no None entries, no masks)."));
  RETURN_IF_ERROR(reg.add(
      "aten.index_put(Tensor self, Tensor values, Tensor[] indices, bool accumulate=False) -> Tensor", inferIndexPut, c,
      "A copy of self with values put at [i0, i1, ...] (accumulate adds). NOTE: values comes "
      "before indices, unlike ATen's (self, indices, values), since Tensor[] must be last."));
  return Status::ok();
}

}  // namespace plugsdk::ops
