// Data prims: reductions (sum, prod, amax, amin, argmax, argmin), gather, scatter, and the
// generators iota, full and rand.
#include <string>

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

enum class Red { kSum, kProd, kExtreme };

ir::InferFn reductionInfer(Red kind) {
  return [kind](const InferContext& ctx) -> Types {
    const TensorType& a = *ctx.input(0);
    std::vector<int64_t> dims = ctx.getInts("dims");
    RETURN_IF_ERROR(detail::checkDims(ctx, dims, a.rank(), "dims"));
    if (kind != Red::kExtreme && a.dtype == DType::kBool)
      return ctx.error("does not accept bool (convert to an integer dtype first)");
    std::vector<bool> reduced(static_cast<size_t>(a.rank()), false);
    for (int64_t d : dims) reduced[static_cast<size_t>(d)] = true;
    Shape out;
    for (size_t d = 0; d < reduced.size(); ++d) {
      if (!reduced[d]) {
        out.push_back(a.shape[d]);
      } else if (kind == Red::kExtreme && a.shape[d].constant() == 0) {
        return ctx.error("cannot reduce dim " + std::to_string(d) + " of size 0 of " + a.toString() +
                         ": the reduction has no identity");
      }
    }
    return one(a.dtype, out);
  };
}

Types inferArg(const InferContext& ctx) {
  const TensorType& a = *ctx.input(0);
  int64_t dim = ctx.getInt("dim");
  RETURN_IF_ERROR(detail::checkDims(ctx, {dim}, a.rank(), "dim"));
  if (a.dtype == DType::kBool) return ctx.error("does not accept bool");
  if (a.shape[static_cast<size_t>(dim)].constant() == 0)
    return ctx.error("cannot reduce dim " + std::to_string(dim) + " of size 0 of " + a.toString());
  Shape out = a.shape;
  out.erase(out.begin() + dim);
  return one(DType::kI64, out);
}

Status checkIndexTensor(const InferContext& ctx, const TensorType& index) {
  if (index.dtype != DType::kI64 && index.dtype != DType::kI32)
    return ctx.error("index must be i64 or i32, got " + index.toString());
  return Status::ok();
}

/// index dims must not exceed `bound`'s dims (all dims, or all but `skip`).
Status checkIndexFits(const InferContext& ctx, const TensorType& index, const TensorType& bound,
                      const std::string& what, int64_t skip) {
  if (index.rank() != bound.rank())
    return ctx.error("index " + index.toString() + " must have the rank of " + what + " " + bound.toString());
  for (int d = 0; d < index.rank(); ++d) {
    if (d == skip) continue;
    if (detail::provedLT(bound.shape[static_cast<size_t>(d)], index.shape[static_cast<size_t>(d)], ctx.assumptions()))
      return ctx.error("index " + index.toString() + " is larger than " + what + " " + bound.toString() + " in dim " +
                       std::to_string(d));
  }
  return Status::ok();
}

Types inferGather(const InferContext& ctx) {
  const TensorType &a = *ctx.input(0), &index = *ctx.input(1);
  int64_t dim = ctx.getInt("dim");
  RETURN_IF_ERROR(detail::checkDims(ctx, {dim}, a.rank(), "dim"));
  RETURN_IF_ERROR(checkIndexTensor(ctx, index));
  RETURN_IF_ERROR(checkIndexFits(ctx, index, a, "a", dim));
  return one(a.dtype, index.shape);
}

Types inferScatter(const InferContext& ctx) {
  const TensorType &a = *ctx.input(0), &index = *ctx.input(1), &src = *ctx.input(2);
  int64_t dim = ctx.getInt("dim");
  RETURN_IF_ERROR(detail::checkDims(ctx, {dim}, a.rank(), "dim"));
  RETURN_IF_ERROR(checkIndexTensor(ctx, index));
  RETURN_IF_ERROR(checkIndexFits(ctx, index, a, "a", dim));
  RETURN_IF_ERROR(checkIndexFits(ctx, index, src, "src", -1));
  if (src.dtype != a.dtype) return ctx.error("src must have a's dtype, got " + src.toString() + " and " + a.toString());
  std::string r = ctx.getString("reduce");
  if (r != "none" && r != "sum" && r != "prod" && r != "amax" && r != "amin")
    return ctx.error("reduce must be none, sum, prod, amax or amin, got '" + r + "'");
  return one(a.dtype, a.shape);
}

Types inferIota(const InferContext& ctx) {
  SymExpr n = ctx.getSym("length");
  RETURN_IF_ERROR(detail::checkNonNegative(ctx, n, "length"));
  DType dt = ctx.getDType("dtype");
  if (!ir::isIntegral(dt, /*includeBool=*/false))
    return ctx.error("dtype must be an integer type (convert for floats), got " + std::string(ir::dtypeName(dt)));
  return one(dt, {n});
}

Types inferFull(const InferContext& ctx) {
  Shape shape = ctx.getSyms("shape");
  for (const SymExpr& s : shape) RETURN_IF_ERROR(detail::checkNonNegative(ctx, s, "shape entry"));
  DType dt = ctx.getDType("dtype");
  if (ctx.attr("value").kind() == ir::Attribute::Kind::kFloat && !ir::isFloating(dt) && dt != DType::kBool)
    return ctx.error("a floating value cannot fill " + std::string(ir::dtypeName(dt)) + " (convert it first)");
  return one(dt, shape);
}

Types inferRand(const InferContext& ctx) {
  Shape shape = ctx.getSyms("shape");
  for (const SymExpr& s : shape) RETURN_IF_ERROR(detail::checkNonNegative(ctx, s, "shape entry"));
  DType dt = ctx.getDType("dtype");
  if (!ir::isFloating(dt)) return ctx.error("dtype must be floating, got " + std::string(ir::dtypeName(dt)));
  RETURN_IF_ERROR(detail::checkNonNegative(ctx, ctx.getSym("offset"), "offset"));
  return one(dt, shape);
}

}  // namespace

Status registerDataPrims(ir::OpRegistry& reg) {
  const char* red = "prim.reduction";
  RETURN_IF_ERROR(reg.add("prims.sum(Tensor a, int[] dims) -> Tensor", reductionInfer(Red::kSum), red,
                          "sum over dims (removed from the shape), in the input dtype; integers wrap; empty sum is 0"));
  RETURN_IF_ERROR(reg.add("prims.prod(Tensor a, int[] dims) -> Tensor", reductionInfer(Red::kProd), red,
                          "product over dims, in the input dtype; integers wrap; empty product is 1"));
  RETURN_IF_ERROR(reg.add("prims.amax(Tensor a, int[] dims) -> Tensor", reductionInfer(Red::kExtreme), red,
                          "max over dims; NaN propagates; empty dims are an error"));
  RETURN_IF_ERROR(reg.add("prims.amin(Tensor a, int[] dims) -> Tensor", reductionInfer(Red::kExtreme), red,
                          "min over dims; NaN propagates; empty dims are an error"));
  RETURN_IF_ERROR(reg.add("prims.argmax(Tensor a, int dim) -> Tensor", inferArg, red,
                          "i64 index of the first max along dim; a NaN counts as the max (first NaN wins)"));
  RETURN_IF_ERROR(reg.add("prims.argmin(Tensor a, int dim) -> Tensor", inferArg, red,
                          "i64 index of the first min along dim; a NaN counts as the min (first NaN wins)"));
  const char* data = "prim.data";
  RETURN_IF_ERROR(reg.add("prims.gather(Tensor a, Tensor index, int dim) -> Tensor", inferGather, data,
                          "out[i] = a[i with dim replaced by index[i]]; index values in [0, size) (no wrapping)"));
  RETURN_IF_ERROR(reg.add("prims.scatter(Tensor a, Tensor index, Tensor src, int dim, str reduce=\"none\") -> Tensor",
                          inferScatter, data,
                          "a copy of a where out[i with dim := index[i]] is src[i] combined by reduce (none: the "
                          "last write wins, unspecified for duplicate indices; sum, prod, amax, amin)"));
  const char* gen = "prim.generator";
  RETURN_IF_ERROR(
      reg.add("prims.iota(SymInt length, *, SymInt start=0, SymInt step=1, ScalarType dtype=i64) -> "
              "Tensor",
              inferIota, gen, "[start, start + step, ...] of `length` integers"));
  RETURN_IF_ERROR(reg.add("prims.full(SymInt[] shape, Scalar value, *, ScalarType dtype) -> Tensor", inferFull, gen,
                          "a tensor filled with value converted to dtype"));
  RETURN_IF_ERROR(
      reg.add("prims.rand(SymInt[] shape, *, int seed, SymInt offset=0, ScalarType dtype=f32) -> "
              "Tensor",
              inferRand, gen,
              "uniform [0, 1): element at row-major position i is (splitmix64(splitmix64(seed) + offset "
              "+ i) >> (64 - p)) * 2^-p for the dtype's p precision bits (53, 24, 11, 8): exact in "
              "dtype and counter-based, so every backend reproduces it bit for bit"));
  return Status::ok();
}

}  // namespace plugsdk::prims
