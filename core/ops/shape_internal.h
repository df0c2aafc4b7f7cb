// Helpers shared by the inference rules of the shape, indexing and creation ops
// (shape*.cc, indexing*.cc, creation*.cc); not part of the public op interface.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/op_registry.h"
#include "core/ir/shape_rules.h"

namespace plugsdk::ops::shape_detail {

using ir::DType;
using ir::InferContext;
using ir::Shape;
using ir::SymExpr;
using ir::TensorType;
using TypesOr = StatusOr<std::vector<TensorType>>;

/// Registered from shape_split.cc: cat, stack, slice, select, narrow, split*, chunk, unbind.
Status registerShapeSplitOps(ir::OpRegistry& reg);

/// A contiguous tensor type.
inline TensorType makeType(DType dtype, Shape shape) {
  TensorType t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

inline TypesOr one(TensorType t) { return std::vector<TensorType>{std::move(t)}; }

/// Wraps a dim as ir::wrapDim does, with the op named in the error.
inline StatusOr<int64_t> wrapDimIn(const ir::AttrReader& ctx, int64_t dim, int64_t rank) {
  auto r = ir::wrapDim(dim, rank);
  if (!r.isOk()) return r.status().withContext(ctx.schema().name);
  return r;
}

inline StatusOr<std::vector<int64_t>> wrapDimsIn(const ir::AttrReader& ctx, const std::vector<int64_t>& dims,
                                                 int64_t rank) {
  auto r = ir::wrapDims(dims, rank);
  if (!r.isOk()) return r.status().withContext(ctx.schema().name);
  return r;
}

/// True only when a == b is proven.
inline bool provedEQ(const SymExpr& a, const SymExpr& b, const ir::SymAssumptions& as) {
  auto r = ir::proveEQ(a, b, as);
  return r && *r;
}
/// True only when a >= b is proven.
inline bool provedGE(const SymExpr& a, const SymExpr& b, const ir::SymAssumptions& as) {
  auto r = ir::proveGE(a, b, as);
  return r && *r;
}
/// True only when a < b is proven.
inline bool provedLT(const SymExpr& a, const SymExpr& b, const ir::SymAssumptions& as) {
  auto r = ir::proveGE(a, b, as);
  return r && !*r;
}

/// A size given in an attribute: a constant must be >= 0 and an expression must not be
/// provably negative. `what` names it in the error.
inline Status checkSize(const InferContext& ctx, const SymExpr& s, const std::string& what) {
  if (auto c = s.constant()) {
    if (*c < 0) return ctx.error(what + " " + std::to_string(*c) + " is negative");
    return Status::ok();
  }
  if (provedLT(s, SymExpr(0), ctx.assumptions())) return ctx.error(what + " " + s.toString() + " is always negative");
  return Status::ok();
}

/// PyTorch's checked Scalar conversion (c10::checked_convert) when it fills a tensor of
/// `dtype`: integers must fit the type (unsigned types also take negatives down to -max,
/// which wrap), floats must be within the finite range (inf and NaN only into floating
/// types), bool always fits. `what` names the value in the error.
inline Status checkScalarFits(const ir::AttrReader& ctx, const ir::Attribute& value, DType dtype,
                              const std::string& what) {
  if (value.kind() == ir::Attribute::Kind::kBool || dtype == DType::kBool || dtype == DType::kF64) return Status::ok();
  double lo = 0, hi = 0;
  switch (dtype) {
    case DType::kU8: lo = 0, hi = 255; break;
    case DType::kI8: lo = -128, hi = 127; break;
    case DType::kI16: lo = -32768, hi = 32767; break;
    case DType::kI32: lo = -2147483648.0, hi = 2147483647.0; break;
    case DType::kI64: lo = -9223372036854775808.0, hi = 9223372036854775807.0; break;
    case DType::kF16: lo = -65504.0, hi = 65504.0; break;
    case DType::kBF16: lo = -3.3895313892515355e38, hi = 3.3895313892515355e38; break;
    default: lo = -3.4028234663852886e38, hi = 3.4028234663852886e38; break;  // f32
  }
  bool overflow = false;
  if (auto i = value.asInt()) {
    if (dtype == DType::kI64) return Status::ok();
    double v = static_cast<double>(*i);
    overflow = dtype == DType::kU8 ? (v > hi || v < -hi) : (v < lo || v > hi);
  } else if (auto f = value.asDouble()) {
    double v = *f;
    if (ir::isFloating(dtype))
      overflow = !std::isinf(v) && !std::isnan(v) && (v < lo || v > hi);
    else
      overflow = std::isnan(v) || v < lo || v > hi || (dtype == DType::kI64 && v >= hi);
  }
  if (overflow)
    return ctx.error(what + " " + value.toString() + " cannot be converted to " + std::string(ir::dtypeName(dtype)) +
                     " without overflow");
  return Status::ok();
}

inline std::string symsToString(const std::vector<SymExpr>& v) { return ir::shapeToString(v); }

inline bool isIndexDType(DType t) { return t == DType::kI64 || t == DType::kI32; }

}  // namespace plugsdk::ops::shape_detail
