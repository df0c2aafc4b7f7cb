// ATen-level shape ops (view, permute, expand, squeeze, flip, repeat, pad, tril, roll, ...):
// schemas and shape/dtype inference. cat/stack/slice/split live in shape_split.cc.
#include "core/ops/aten_ops.h"
#include "core/ops/shape_internal.h"

namespace plugsdk::ops {

using namespace shape_detail;

namespace {

const TensorType& self(const InferContext& ctx) { return *ctx.input(0); }

/// Resolves a view/reshape size list against `numel` elements: at most one -1 (inferred),
/// other sizes >= 0, and the element count must be provably equal.
StatusOr<Shape> resolveViewSizes(const InferContext& ctx, const SymExpr& numel, const std::vector<SymExpr>& sizes) {
  const ir::SymAssumptions& as = ctx.assumptions();
  std::optional<size_t> inferred;
  SymExpr known(1);
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i].constant() == -1) {
      if (inferred) return ctx.error("only one dimension can be inferred (-1) in shape " + symsToString(sizes));
      inferred = i;
      continue;
    }
    if (auto c = sizes[i].constant(); c && *c < 0)
      return ctx.error("invalid shape dimension " + std::to_string(*c) + " in " + symsToString(sizes));
    known = known * sizes[i];
  }
  Shape out(sizes.begin(), sizes.end());
  auto invalid = [&](const std::string& why) {
    return ctx.error("shape " + symsToString(sizes) + " is invalid for input of " + numel.toString() + " elements" +
                     why);
  };
  if (!inferred) {
    auto eq = ir::proveEQ(known, numel, as);
    if (!eq || !*eq) return invalid(eq ? "" : " (element counts not provably equal)");
    return out;
  }
  if (known.isZero())
    return ctx.error("cannot reshape a tensor of " + numel.toString() + " elements into shape " + symsToString(sizes) +
                     ": the -1 dimension is ambiguous when the other sizes multiply to 0");
  if (!provedGE(known, SymExpr(1), as))
    return ctx.error("cannot infer the -1 in shape " + symsToString(sizes) + ": the product of the other sizes (" +
                     known.toString() + ") may be 0");
  SymExpr q = SymExpr::floorDiv(numel, known);
  auto eq = ir::proveEQ(q * known, numel, as);
  if (!eq || !*eq) return invalid(eq ? " (not divisible)" : " (not provably divisible by " + known.toString() + ")");
  out[*inferred] = q;
  return out;
}

TypesOr inferView(const InferContext& ctx, const char* sizeArg) {
  ASSIGN_OR_RETURN(Shape shape, resolveViewSizes(ctx, self(ctx).numel(), ctx.getSyms(sizeArg)));
  return one(makeType(self(ctx).dtype, std::move(shape)));
}

TypesOr inferSame(const InferContext& ctx) { return one(makeType(self(ctx).dtype, self(ctx).shape)); }

TypesOr inferFlatten(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  if (t.rank() == 0) return one(makeType(t.dtype, {SymExpr(1)}));
  ASSIGN_OR_RETURN(int64_t s, wrapDimIn(ctx, ctx.getInt("start_dim"), t.rank()));
  ASSIGN_OR_RETURN(int64_t e, wrapDimIn(ctx, ctx.getInt("end_dim"), t.rank()));
  if (s > e) return ctx.error("start_dim " + std::to_string(s) + " comes after end_dim " + std::to_string(e));
  Shape out(t.shape.begin(), t.shape.begin() + s);
  SymExpr prod(1);
  for (int64_t d = s; d <= e; ++d) prod = prod * t.shape[static_cast<size_t>(d)];
  out.push_back(prod);
  out.insert(out.end(), t.shape.begin() + e + 1, t.shape.end());
  return one(makeType(t.dtype, std::move(out)));
}

TypesOr inferUnflatten(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  if (t.rank() == 0) return ctx.error("cannot unflatten a 0-dim tensor");
  ASSIGN_OR_RETURN(int64_t d, wrapDimIn(ctx, ctx.getInt("dim"), t.rank()));
  auto sizes = ctx.getSyms("sizes");
  if (sizes.empty()) return ctx.error("sizes must be non-empty");
  ASSIGN_OR_RETURN(Shape mid, resolveViewSizes(ctx, t.shape[static_cast<size_t>(d)], sizes));
  Shape out(t.shape.begin(), t.shape.begin() + d);
  out.insert(out.end(), mid.begin(), mid.end());
  out.insert(out.end(), t.shape.begin() + d + 1, t.shape.end());
  return one(makeType(t.dtype, std::move(out)));
}

TypesOr inferPermute(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  auto dims = ctx.getInts("dims");
  if (static_cast<int>(dims.size()) != t.rank())
    return ctx.error("dims has " + std::to_string(dims.size()) + " entries but the tensor has rank " +
                     std::to_string(t.rank()));
  ASSIGN_OR_RETURN(auto w, wrapDimsIn(ctx, dims, t.rank()));
  Shape out;
  for (int64_t d : w) out.push_back(t.shape[static_cast<size_t>(d)]);
  return one(makeType(t.dtype, std::move(out)));
}

TypesOr inferTranspose(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  ASSIGN_OR_RETURN(int64_t a, wrapDimIn(ctx, ctx.getInt("dim0"), t.rank()));
  ASSIGN_OR_RETURN(int64_t b, wrapDimIn(ctx, ctx.getInt("dim1"), t.rank()));
  Shape out = t.shape;
  if (t.rank() > 0) std::swap(out[static_cast<size_t>(a)], out[static_cast<size_t>(b)]);
  return one(makeType(t.dtype, std::move(out)));
}

TypesOr inferT(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  if (t.rank() > 2) return ctx.error("t() expects a tensor with <= 2 dimensions, got rank " + std::to_string(t.rank()));
  Shape out = t.shape;
  if (t.rank() == 2) std::swap(out[0], out[1]);
  return one(makeType(t.dtype, std::move(out)));
}

TypesOr inferExpand(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  auto sizes = ctx.getSyms("size");
  if (static_cast<int>(sizes.size()) < t.rank())
    return ctx.error("the number of sizes provided (" + std::to_string(sizes.size()) +
                     ") must be greater or equal to the rank of the tensor (" + std::to_string(t.rank()) + ")");
  size_t lead = sizes.size() - static_cast<size_t>(t.rank());
  Shape out(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    const SymExpr& target = sizes[i];
    bool keep = target.constant() == -1;
    if (i < lead) {
      if (keep) return ctx.error("size -1 is not allowed in a leading, new dimension " + std::to_string(i));
      RETURN_IF_ERROR(checkSize(ctx, target, "expanded size"));
      out[i] = target;
      continue;
    }
    const SymExpr& src = t.shape[i - lead];
    if (keep || target == src) {
      out[i] = src;
      continue;
    }
    RETURN_IF_ERROR(checkSize(ctx, target, "expanded size"));
    if (src.constant() == 1) {
      out[i] = target;
      continue;
    }
    auto eq = ir::proveEQ(src, target, ctx.assumptions());
    if (!eq || !*eq)
      return ctx.error("the expanded size " + target.toString() + " must match the existing size " + src.toString() +
                       " at non-singleton dimension " + std::to_string(i) + (eq ? "" : " (not provably equal)") +
                       "; target sizes " + symsToString(sizes) + ", tensor sizes " + symsToString(t.shape));
    out[i] = src;
  }
  return one(makeType(t.dtype, std::move(out)));
}

TypesOr inferUnsqueeze(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  ASSIGN_OR_RETURN(int64_t d, wrapDimIn(ctx, ctx.getInt("dim"), t.rank() + 1));
  Shape out = t.shape;
  out.insert(out.begin() + d, SymExpr(1));
  return one(makeType(t.dtype, std::move(out)));
}

/// Removes the given (wrapped) dims that have size 1; errors if that cannot be decided.
TypesOr squeezeDims(const InferContext& ctx, const std::vector<int64_t>& dims) {
  const TensorType& t = self(ctx);
  if (t.rank() == 0) return inferSame(ctx);
  std::vector<bool> drop(static_cast<size_t>(t.rank()), false);
  for (int64_t d : dims) {
    const SymExpr& s = t.shape[static_cast<size_t>(d)];
    auto eq = ir::proveEQ(s, SymExpr(1), ctx.assumptions());
    if (!eq) return ctx.error("cannot decide whether dim " + std::to_string(d) + " (size " + s.toString() + ") is 1");
    drop[static_cast<size_t>(d)] = *eq;
  }
  Shape out;
  for (size_t i = 0; i < t.shape.size(); ++i)
    if (!drop[i]) out.push_back(t.shape[i]);
  return one(makeType(t.dtype, std::move(out)));
}

TypesOr inferSqueezeAll(const InferContext& ctx) {
  std::vector<int64_t> all;
  for (int64_t d = 0; d < self(ctx).rank(); ++d) all.push_back(d);
  // Dims that are provably not 1 are kept without asking; only undecidable ones error.
  std::vector<int64_t> maybe;
  for (int64_t d : all) {
    auto eq = ir::proveEQ(self(ctx).shape[static_cast<size_t>(d)], SymExpr(1), ctx.assumptions());
    if (!eq || *eq) maybe.push_back(d);
  }
  return squeezeDims(ctx, maybe);
}

TypesOr inferSqueezeDim(const InferContext& ctx) {
  ASSIGN_OR_RETURN(int64_t d, wrapDimIn(ctx, ctx.getInt("dim"), self(ctx).rank()));
  return squeezeDims(ctx, {d});
}

TypesOr inferSqueezeDims(const InferContext& ctx) {
  ASSIGN_OR_RETURN(auto dims, wrapDimsIn(ctx, ctx.getInts("dim"), self(ctx).rank()));
  return squeezeDims(ctx, dims);
}

TypesOr inferFlip(const InferContext& ctx) {
  RETURN_IF_ERROR(wrapDimsIn(ctx, ctx.getInts("dims"), self(ctx).rank()).status());
  return inferSame(ctx);
}

TypesOr inferRepeat(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  auto reps = ctx.getSyms("repeats");
  if (static_cast<int>(reps.size()) < t.rank())
    return ctx.error("the number of repeats (" + std::to_string(reps.size()) +
                     ") can not be smaller than the rank of the tensor (" + std::to_string(t.rank()) + ")");
  size_t lead = reps.size() - static_cast<size_t>(t.rank());
  Shape out;
  for (size_t i = 0; i < reps.size(); ++i) {
    RETURN_IF_ERROR(checkSize(ctx, reps[i], "repeat count"));
    out.push_back(i < lead ? reps[i] : t.shape[i - lead] * reps[i]);
  }
  return one(makeType(t.dtype, std::move(out)));
}

TypesOr inferConstantPad(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  auto pad = ctx.getSyms("pad");
  if (pad.size() % 2 != 0) return ctx.error("the length of pad must be even, got " + std::to_string(pad.size()));
  if (static_cast<int>(pad.size() / 2) > t.rank())
    return ctx.error("pad has " + std::to_string(pad.size()) + " entries, more than twice the rank " +
                     std::to_string(t.rank()));
  RETURN_IF_ERROR(checkScalarFits(ctx, ctx.attr("value"), t.dtype, "value"));
  Shape out = t.shape;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    size_t d = t.shape.size() - 1 - i;
    SymExpr n = t.shape[d] + pad[2 * i] + pad[2 * i + 1];
    if (provedLT(n, SymExpr(0), ctx.assumptions()))
      return ctx.error("padding " + pad[2 * i].toString() + ", " + pad[2 * i + 1].toString() + " of dim " +
                       std::to_string(d) + " (size " + t.shape[d].toString() + ") gives a negative size " +
                       n.toString());
    out[d] = n;
  }
  return one(makeType(t.dtype, std::move(out)));
}

TypesOr inferTriangle(const InferContext& ctx) {
  if (self(ctx).rank() < 2)
    return ctx.error("input must have at least 2 dimensions, got rank " + std::to_string(self(ctx).rank()));
  return inferSame(ctx);
}

TypesOr inferRoll(const InferContext& ctx) {
  const TensorType& t = self(ctx);
  auto shifts = ctx.getSyms("shifts");
  auto dims = ctx.getInts("dims");
  if (shifts.empty()) return ctx.error("shifts must be non-empty");
  if (dims.empty()) {
    if (shifts.size() != 1)
      return ctx.error("with no dims, shifts must have exactly one entry (the tensor is rolled flattened), got " +
                       std::to_string(shifts.size()));
  } else if (dims.size() != shifts.size()) {
    return ctx.error("shifts and dims must align: " + std::to_string(shifts.size()) + " shifts, " +
                     std::to_string(dims.size()) + " dims");
  }
  for (int64_t d : dims) {
    if (t.rank() == 0) return ctx.error("dim " + std::to_string(d) + " given but the tensor has no dimensions");
    RETURN_IF_ERROR(wrapDimIn(ctx, d, t.rank()).status());
  }
  return inferSame(ctx);
}

}  // namespace

Status registerShapeOps(ir::OpRegistry& reg) {
  const std::string c = "shape";
  RETURN_IF_ERROR(reg.add(
      "aten.view(Tensor self, SymInt[] size) -> Tensor", [](const InferContext& ctx) { return inferView(ctx, "size"); },
      c, "Same elements in a new shape (one -1 inferred); the reference copies."));
  RETURN_IF_ERROR(reg.add(
      "aten._unsafe_view(Tensor self, SymInt[] size) -> Tensor",
      [](const InferContext& ctx) { return inferView(ctx, "size"); }, c, "As view."));
  RETURN_IF_ERROR(reg.add(
      "aten.reshape(Tensor self, SymInt[] shape) -> Tensor",
      [](const InferContext& ctx) { return inferView(ctx, "shape"); }, c, "As view."));
  RETURN_IF_ERROR(reg.add("aten.flatten.using_ints(Tensor self, int start_dim=0, int end_dim=-1) -> Tensor",
                          inferFlatten, c, "Merges dims start_dim..end_dim into one."));
  RETURN_IF_ERROR(reg.add("aten.unflatten.int(Tensor self, int dim, SymInt[] sizes) -> Tensor", inferUnflatten, c,
                          "Splits dim into sizes (one -1 inferred)."));
  RETURN_IF_ERROR(reg.add("aten.permute(Tensor self, int[] dims) -> Tensor", inferPermute, c, "Reorders the dims."));
  RETURN_IF_ERROR(
      reg.add("aten.transpose.int(Tensor self, int dim0, int dim1) -> Tensor", inferTranspose, c, "Swaps two dims."));
  RETURN_IF_ERROR(reg.add("aten.t(Tensor self) -> Tensor", inferT, c, "Transpose of a tensor of rank <= 2."));
  RETURN_IF_ERROR(reg.add("aten.expand(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor", inferExpand, c,
                          "Broadcasts size-1 dims to size (-1 keeps a dim)."));
  RETURN_IF_ERROR(
      reg.add("aten.unsqueeze(Tensor self, int dim) -> Tensor", inferUnsqueeze, c, "Inserts a size-1 dim."));
  RETURN_IF_ERROR(reg.add("aten.squeeze(Tensor self) -> Tensor", inferSqueezeAll, c, "Removes every size-1 dim."));
  RETURN_IF_ERROR(
      reg.add("aten.squeeze.dim(Tensor self, int dim) -> Tensor", inferSqueezeDim, c, "Removes dim if it has size 1."));
  RETURN_IF_ERROR(reg.add("aten.squeeze.dims(Tensor self, int[] dim) -> Tensor", inferSqueezeDims, c,
                          "Removes those of the dims that have size 1."));
  RETURN_IF_ERROR(
      reg.add("aten.clone(Tensor self) -> Tensor", inferSame, c, "A copy (memory_format is not modelled)."));
  RETURN_IF_ERROR(reg.add("aten.alias(Tensor self) -> Tensor", inferSame, c, "The same value."));
  RETURN_IF_ERROR(reg.add("aten.detach(Tensor self) -> Tensor", inferSame, c,
                          "The same value (autograd's detach: graphs here carry no gradient state)."));
  RETURN_IF_ERROR(
      reg.add("aten.flip(Tensor self, int[] dims) -> Tensor", inferFlip, c, "Reverses the order along dims."));
  RETURN_IF_ERROR(reg.add("aten.repeat(Tensor self, SymInt[] repeats) -> Tensor", inferRepeat, c,
                          "Tiles the tensor repeats times along each dim."));
  RETURN_IF_ERROR(reg.add("aten.constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor", inferConstantPad,
                          c, "Pads the last dims (pairs from the last dim backwards) with value; negative pads crop."));
  RETURN_IF_ERROR(reg.add("aten.tril(Tensor self, int diagonal=0) -> Tensor", inferTriangle, c,
                          "Zeroes elements above the diagonal of the last two dims."));
  RETURN_IF_ERROR(reg.add("aten.triu(Tensor self, int diagonal=0) -> Tensor", inferTriangle, c,
                          "Zeroes elements below the diagonal of the last two dims."));
  RETURN_IF_ERROR(reg.add("aten.roll(Tensor self, SymInt[] shifts, int[] dims=[]) -> Tensor", inferRoll, c,
                          "Rotates elements along dims (the flattened tensor when dims is empty)."));
  return registerShapeSplitOps(reg);
}

}  // namespace plugsdk::ops
