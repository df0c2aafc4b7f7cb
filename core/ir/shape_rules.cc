// Broadcasting, dim wrapping and type promotion.
#include "core/ir/shape_rules.h"

#include <algorithm>

namespace plugsdk::ir {

StatusOr<Shape> broadcastShapes(const Shape& a, const Shape& b, const SymAssumptions& as) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    bool hasA = i < a.size(), hasB = i < b.size();
    const SymExpr& da = hasA ? a[a.size() - 1 - i] : SymExpr(1);
    const SymExpr& db = hasB ? b[b.size() - 1 - i] : SymExpr(1);
    SymExpr& o = out[n - 1 - i];
    if (!hasA) {
      o = db;
      continue;
    }
    if (!hasB) {
      o = da;
      continue;
    }
    if (da == db) {
      o = da;
      continue;
    }
    if (da.constant() == 1) {
      o = db;
      continue;
    }
    if (db.constant() == 1) {
      o = da;
      continue;
    }
    auto eq = proveEQ(da, db, as);
    if (eq && *eq) {
      o = da;
      continue;
    }
    return invalidArgument("shapes " + shapeToString(a) + " and " + shapeToString(b) + " do not broadcast: dim " +
                           std::to_string(static_cast<int64_t>(n - 1 - i)) + " is " + da.toString() + " vs " +
                           db.toString() + (eq ? "" : " (not provably equal)"));
  }
  return out;
}

StatusOr<Shape> broadcastAll(const std::vector<const TensorType*>& types, const SymAssumptions& as) {
  Shape out;
  for (const TensorType* t : types) {
    if (!t) continue;
    ASSIGN_OR_RETURN(out, broadcastShapes(out, t->shape, as));
  }
  return out;
}

StatusOr<int64_t> wrapDim(int64_t dim, int64_t rank) {
  int64_t r = rank == 0 ? 1 : rank;
  if (dim < -r || dim >= r)
    return outOfRange("dim " + std::to_string(dim) + " out of range for a tensor of rank " + std::to_string(rank));
  return dim < 0 ? dim + r : dim;
}

StatusOr<std::vector<int64_t>> wrapDims(const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t d : dims) {
    ASSIGN_OR_RETURN(int64_t w, wrapDim(d, rank));
    if (std::find(out.begin(), out.end(), w) != out.end())
      return invalidArgument("dim " + std::to_string(d) + " appears more than once in the dim list");
    out.push_back(w);
  }
  return out;
}

DType resultType(const std::vector<PromotionOperand>& operands) {
  // Three priority tiers, each with its running promoted type.
  std::optional<DType> dimResult, zeroResult, scalarResult;
  auto merge = [](std::optional<DType>& acc, DType t) { acc = acc ? promoteTypes(*acc, t) : t; };
  for (const auto& op : operands) {
    if (op.tensor) {
      merge(op.tensor->rank() > 0 ? dimResult : zeroResult, op.tensor->dtype);
    } else if (op.scalar) {
      const Attribute& s = *op.scalar;
      DType t = s.kind() == Attribute::Kind::kBool  ? DType::kBool
                : s.kind() == Attribute::Kind::kInt ? DType::kI64
                                                    : DType::kF64;
      merge(scalarResult, t);
    }
  }
  auto combine = [](std::optional<DType> higher, std::optional<DType> lower) -> std::optional<DType> {
    if (!higher) return lower;
    if (!lower) return higher;
    if (categoryOf(*lower) > categoryOf(*higher)) {
      // The lower tier raises the category; scalars/zero-dim floats use the default dtype
      // unless the lower-tier type itself is a tensor type of that category.
      return lower;
    }
    return higher;
  };
  // Scalars participate at category level only: a float scalar becomes the default float.
  if (scalarResult == DType::kF64) scalarResult = kDefaultFloat;
  std::optional<DType> r = combine(zeroResult, scalarResult);
  r = combine(dimResult, r);
  return r.value_or(kDefaultFloat);
}

Status checkSameSize(const SymExpr& a, const SymExpr& b, const std::string& what, const SymAssumptions& as) {
  auto eq = proveEQ(a, b, as);
  if (eq && *eq) return Status::ok();
  return invalidArgument(what + ": " + a.toString() + " vs " + b.toString() + (eq ? "" : " (not provably equal)"));
}

}  // namespace plugsdk::ir
