// ATen-level ops that join or cut tensors along a dim: cat, stack, slice, select, narrow,
// split, split_with_sizes, chunk, unbind. Schemas and shape/dtype inference.
#include <algorithm>

#include "core/ops/aten_ops.h"
#include "core/ops/shape_internal.h"

namespace plugsdk::ops::shape_detail {

namespace {

const TensorType& self(const InferContext& ctx) { return *ctx.input(0); }

/// Constant slice bounds at least this large mean "to the end" (torch writes INT64_MAX for
/// x[a:]); no real dim is that long, so they clamp even against symbolic sizes.
constexpr int64_t kHugeBound = int64_t{1} << 62;

bool isLegacyEmpty(const TensorType& t) { return t.rank() == 1 && t.shape[0].constant() == 0; }

DType promoteAll(const InferContext& ctx) {
  DType r = ctx.input(0)->dtype;
  for (const TensorType* t : ctx.inputs()) r = ir::promoteTypes(r, t->dtype);
  return r;
}

TypesOr inferCat(const InferContext& ctx) {
  const auto& ins = ctx.inputs();
  if (ins.empty()) return ctx.error("expected a non-empty list of tensors");
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i]->rank() == 0)
      return ctx.error("zero-dimensional tensor (at position " + std::to_string(i) + ") cannot be concatenated");
  DType dtype = promoteAll(ctx);
  // Legacy rule kept by PyTorch: 1-D tensors of size 0 are skipped (whatever the others' shape).
  const TensorType* ref = nullptr;
  size_t refIndex = 0;
  for (size_t i = 0; i < ins.size() && !ref; ++i)
    if (!isLegacyEmpty(*ins[i])) ref = ins[i], refIndex = i;
  if (!ref) return one(makeType(dtype, {SymExpr(0)}));
  ASSIGN_OR_RETURN(int64_t dim, wrapDimIn(ctx, ctx.getInt("dim"), ref->rank()));
  Shape out = ref->shape;
  out[static_cast<size_t>(dim)] = SymExpr(0);
  for (size_t i = 0; i < ins.size(); ++i) {
    const TensorType& t = *ins[i];
    if (isLegacyEmpty(t) && ref->rank() != 1) continue;
    if (t.rank() != ref->rank())
      return ctx.error("tensors must have the same rank: tensor " + std::to_string(refIndex) + " has rank " +
                       std::to_string(ref->rank()) + ", tensor " + std::to_string(i) + " has rank " +
                       std::to_string(t.rank()));
    for (int64_t d = 0; d < t.rank(); ++d) {
      if (d == dim) continue;
      auto ud = static_cast<size_t>(d);
      auto eq = ir::proveEQ(t.shape[ud], ref->shape[ud], ctx.assumptions());
      if (!eq || !*eq)
        return ctx.error("sizes of tensors must match except in dimension " + std::to_string(dim) + ": tensor " +
                         std::to_string(refIndex) + " has size " + ref->shape[ud].toString() + " but tensor " +
                         std::to_string(i) + " has size " + t.shape[ud].toString() + " at dim " + std::to_string(d) +
                         (eq ? "" : " (not provably equal)"));
    }
    out[static_cast<size_t>(dim)] = out[static_cast<size_t>(dim)] + t.shape[static_cast<size_t>(dim)];
  }
  return one(makeType(dtype, std::move(out)));
}

TypesOr inferStack(const InferContext& ctx) {
  const auto& ins = ctx.inputs();
  if (ins.empty()) return ctx.error("expected a non-empty list of tensors");
  const TensorType& ref = *ins[0];
  for (size_t i = 1; i < ins.size(); ++i) {
    const TensorType& t = *ins[i];
    bool same = t.rank() == ref.rank();
    for (size_t d = 0; same && d < t.shape.size(); ++d) same = provedEQ(t.shape[d], ref.shape[d], ctx.assumptions());
    if (!same)
      return ctx.error("expects each tensor to be equal size, but got " + symsToString(ref.shape) + " at entry 0 and " +
                       symsToString(t.shape) + " at entry " + std::to_string(i));
  }
  ASSIGN_OR_RETURN(int64_t dim, wrapDimIn(ctx, ctx.getInt("dim"), ref.rank() + 1));
  Shape out = ref.shape;
  out.insert(out.begin() + dim, SymExpr(static_cast<int64_t>(ins.size())));
  return one(makeType(promoteAll(ctx), std::move(out)));
}

/// Python-style clamp of a slice bound into [0, n] (negative bounds count from the end).
/// A comparison that cannot be decided assumes the bound is in range; the kernel re-checks.
SymExpr clampBound(const SymExpr& x, const SymExpr& n, const ir::SymAssumptions& as) {
  if (auto c = x.constant()) {
    if (*c >= kHugeBound) return n;
    if (*c <= -kHugeBound) return SymExpr(0);
    if (auto cn = n.constant()) return SymExpr(std::clamp<int64_t>(*c < 0 ? *c + *cn : *c, 0, *cn));
  }
  SymExpr v = x;
  if (provedLT(x, SymExpr(0), as)) {
    v = x + n;
    if (provedLT(v, SymExpr(0), as)) return SymExpr(0);
  }
  if (provedGE(v, n, as)) return n;
  return v;
}

TypesOr inferSlice(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  if (t.rank() == 0) return ctx.error("slice() cannot be applied to a 0-dim tensor");
  ASSIGN_OR_RETURN(int64_t dim, wrapDimIn(ctx, ctx.getInt("dim"), t.rank()));
  const ir::SymAssumptions& as = ctx.assumptions();
  SymExpr step = ctx.getSym("step");
  if (auto c = step.constant(); c && *c <= 0)
    return ctx.error("slice step must be positive, got " + std::to_string(*c));
  if (!provedGE(step, SymExpr(1), as)) return ctx.error("slice step " + step.toString() + " is not provably positive");
  const SymExpr& n = t.shape[static_cast<size_t>(dim)];
  SymExpr start = ctx.isNone("start") ? SymExpr(0) : clampBound(ctx.getSym("start"), n, as);
  SymExpr end = ctx.isNone("end") ? n : clampBound(ctx.getSym("end"), n, as);
  SymExpr len(0);
  auto cs = start.constant(), ce = end.constant(), cst = step.constant();
  if (cs && ce && cst)
    len = SymExpr(*ce > *cs ? (*ce - *cs - 1) / *cst + 1 : 0);  // no overflow for huge steps
  else if (!provedLT(end, start, as))
    len = SymExpr::floorDiv(end - start + step - SymExpr(1), step);
  Shape out = t.shape;
  out[static_cast<size_t>(dim)] = len;
  return one(makeType(t.dtype, std::move(out)));
}

TypesOr inferSelect(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  if (t.rank() == 0) return ctx.error("select() cannot be applied to a 0-dim tensor");
  ASSIGN_OR_RETURN(int64_t dim, wrapDimIn(ctx, ctx.getInt("dim"), t.rank()));
  const SymExpr& n = t.shape[static_cast<size_t>(dim)];
  SymExpr index = ctx.getSym("index");
  auto ci = index.constant();
  auto cn = n.constant();
  if (ci && cn && (*ci < -*cn || *ci >= *cn))
    return ctx.error("index " + std::to_string(*ci) + " out of range for dim " + std::to_string(dim) + " of size " +
                     std::to_string(*cn));
  bool outside =
      (!ci || *ci >= 0) ? provedGE(index, n, ctx.assumptions()) : provedLT(index + n, SymExpr(0), ctx.assumptions());
  if (outside)
    return ctx.error("index " + index.toString() + " out of range for dim " + std::to_string(dim) + " of size " +
                     n.toString());
  Shape out = t.shape;
  out.erase(out.begin() + dim);
  return one(makeType(t.dtype, std::move(out)));
}

TypesOr inferNarrow(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  if (t.rank() == 0) return ctx.error("narrow() cannot be applied to a 0-dim tensor");
  ASSIGN_OR_RETURN(int64_t dim, wrapDimIn(ctx, ctx.getInt("dim"), t.rank()));
  const SymExpr& n = t.shape[static_cast<size_t>(dim)];
  SymExpr start = ctx.getSym("start"), length = ctx.getSym("length");
  if (auto c = length.constant(); c && *c < 0)
    return ctx.error("length must be non-negative, got " + std::to_string(*c));
  auto cs = start.constant(), cn = n.constant(), cl = length.constant();
  if (cs && cn) {
    if (*cs < -*cn || *cs > *cn)
      return ctx.error("start " + std::to_string(*cs) + " out of range for dim " + std::to_string(dim) + " of size " +
                       std::to_string(*cn));
    int64_t s = *cs < 0 ? *cs + *cn : *cs;
    if (cl && s + *cl > *cn)
      return ctx.error("start (" + std::to_string(s) + ") + length (" + std::to_string(*cl) +
                       ") exceeds dimension size (" + std::to_string(*cn) + ")");
  } else if (provedLT(n, (cs && *cs < 0 ? SymExpr(0) : start) + length, ctx.assumptions())) {
    return ctx.error("start " + start.toString() + " + length " + length.toString() + " exceeds dimension size " +
                     n.toString());
  }
  Shape out = t.shape;
  out[static_cast<size_t>(dim)] = length;
  return one(makeType(t.dtype, std::move(out)));
}

/// Outputs for pieces of the given sizes along dim.
std::vector<TensorType> pieces(const TensorType& t, int64_t dim, const std::vector<SymExpr>& sizes) {
  std::vector<TensorType> out;
  for (const SymExpr& s : sizes) {
    Shape sh = t.shape;
    sh[static_cast<size_t>(dim)] = s;
    out.push_back(makeType(t.dtype, std::move(sh)));
  }
  return out;
}

/// Pieces of `size` each (the last one shorter) covering n; the count must be static.
StatusOr<std::vector<SymExpr>> evenPieces(const InferContext& ctx, const SymExpr& n, const SymExpr& size) {
  auto cn = n.constant(), cs = size.constant();
  if (cn && cs) {
    if (*cs == 0) {
      if (*cn != 0)
        return ctx.error("split_size can only be 0 if the dimension size is 0, but it is " + std::to_string(*cn));
      return std::vector<SymExpr>{SymExpr(0)};
    }
    int64_t count = std::max<int64_t>((*cn + *cs - 1) / *cs, 1);
    std::vector<SymExpr> out(static_cast<size_t>(count), size);
    out.back() = SymExpr(*cn - *cs * (count - 1));
    return out;
  }
  SymExpr q = SymExpr::floorDiv(n, size);
  if (auto cq = q.constant(); cq && *cq >= 1 && SymExpr::mod(n, size).isZero())
    return std::vector<SymExpr>(static_cast<size_t>(*cq), size);
  return ctx.error("the number of pieces of size " + size.toString() + " in a dim of size " + n.toString() +
                   " is not static (the op's output count must be known)");
}

TypesOr inferSplit(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  if (t.rank() == 0) return ctx.error("split() cannot be applied to a 0-dim tensor");
  ASSIGN_OR_RETURN(int64_t dim, wrapDimIn(ctx, ctx.getInt("dim"), t.rank()));
  SymExpr size = ctx.getSym("split_size");
  if (auto c = size.constant(); c && *c < 0)
    return ctx.error("split_size must be non-negative, got " + std::to_string(*c));
  ASSIGN_OR_RETURN(auto sizes, evenPieces(ctx, t.shape[static_cast<size_t>(dim)], size));
  return pieces(t, dim, sizes);
}

TypesOr inferSplitWithSizes(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  if (t.rank() == 0) return ctx.error("split_with_sizes() cannot be applied to a 0-dim tensor");
  ASSIGN_OR_RETURN(int64_t dim, wrapDimIn(ctx, ctx.getInt("dim"), t.rank()));
  auto sizes = ctx.getSyms("split_sizes");
  SymExpr total(0);
  for (const SymExpr& s : sizes) {
    RETURN_IF_ERROR(checkSize(ctx, s, "split size"));
    total = total + s;
  }
  const SymExpr& n = t.shape[static_cast<size_t>(dim)];
  auto eq = ir::proveEQ(total, n, ctx.assumptions());
  if (!eq || !*eq)
    return ctx.error("split_sizes " + symsToString(sizes) + " must sum exactly to " + n.toString() +
                     " (the size of dim " + std::to_string(dim) + ")" + (eq ? "" : ", not provably so"));
  return pieces(t, dim, sizes);
}

TypesOr inferChunk(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  if (t.rank() == 0) return ctx.error("chunk() cannot be applied to a 0-dim tensor");
  ASSIGN_OR_RETURN(int64_t dim, wrapDimIn(ctx, ctx.getInt("dim"), t.rank()));
  int64_t chunks = ctx.getInt("chunks");
  if (chunks <= 0) return ctx.error("chunks must be positive, got " + std::to_string(chunks));
  const SymExpr& n = t.shape[static_cast<size_t>(dim)];
  if (n.constant() == 0) return pieces(t, dim, std::vector<SymExpr>(static_cast<size_t>(chunks), SymExpr(0)));
  SymExpr size = n.constant() ? SymExpr((*n.constant() + chunks - 1) / chunks) : SymExpr::floorDiv(n, SymExpr(chunks));
  if (!n.constant() && !SymExpr::mod(n, SymExpr(chunks)).isZero())
    return ctx.error("the chunk sizes of a dim of size " + n.toString() + " in " + std::to_string(chunks) +
                     " chunks are not static (the size must be a known multiple of chunks)");
  ASSIGN_OR_RETURN(auto sizes, evenPieces(ctx, n, size));
  return pieces(t, dim, sizes);
}

TypesOr inferUnbind(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  if (t.rank() == 0) return ctx.error("unbind() cannot be applied to a 0-dim tensor");
  ASSIGN_OR_RETURN(int64_t dim, wrapDimIn(ctx, ctx.getInt("dim"), t.rank()));
  auto n = t.shape[static_cast<size_t>(dim)].constant();
  if (!n)
    return ctx.error("the size of dim " + std::to_string(dim) + " (" + t.shape[static_cast<size_t>(dim)].toString() +
                     ") must be static: it is the number of outputs");
  Shape sh = t.shape;
  sh.erase(sh.begin() + dim);
  return std::vector<TensorType>(static_cast<size_t>(*n), makeType(t.dtype, sh));
}

}  // namespace

Status registerShapeSplitOps(ir::OpRegistry& reg) {
  const std::string c = "shape";
  RETURN_IF_ERROR(reg.add("aten.cat(Tensor[] tensors, int dim=0) -> Tensor", inferCat, c,
                          "Concatenates along dim with type promotion (1-D empty tensors are skipped)."));
  RETURN_IF_ERROR(reg.add("aten.stack(Tensor[] tensors, int dim=0) -> Tensor", inferStack, c,
                          "Stacks equal-shaped tensors along a new dim, with type promotion."));
  RETURN_IF_ERROR(reg.add(
      "aten.slice.Tensor(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor",
      inferSlice, c, "self[start:end:step] along dim, bounds clamped as in Python."));
  RETURN_IF_ERROR(reg.add("aten.select.int(Tensor self, int dim, SymInt index) -> Tensor", inferSelect, c,
                          "The slice at index along dim (the dim is removed)."));
  RETURN_IF_ERROR(reg.add("aten.narrow(Tensor self, int dim, SymInt start, SymInt length) -> Tensor", inferNarrow, c,
                          "length elements from start along dim."));
  RETURN_IF_ERROR(reg.add("aten.split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]", inferSplit, c,
                          "Pieces of split_size along dim (the last may be shorter)."));
  RETURN_IF_ERROR(reg.add("aten.split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]",
                          inferSplitWithSizes, c, "Pieces of the given sizes along dim."));
  RETURN_IF_ERROR(reg.add("aten.chunk(Tensor self, int chunks, int dim=0) -> Tensor[]", inferChunk, c,
                          "At most chunks equal pieces along dim."));
  RETURN_IF_ERROR(reg.add("aten.unbind.int(Tensor self, int dim=0) -> Tensor[]", inferUnbind, c,
                          "Every slice along dim (the dim is removed)."));
  return Status::ok();
}

}  // namespace plugsdk::ops::shape_detail
