// The vocabulary decomposition rules are written in: an Emitter appends prims (or ATen-level
// ops, which it decomposes in turn) to the graph under construction, with NumPy-style
// broadcasting, dim wrapping and keepdim done here once so that each rule reads like the
// math it implements. Errors are deferred as in the C++ builder: the first failure is
// recorded, later calls return nullptr, and done() reports it. Nothing throws.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/support/status.h"

namespace plugsdk::decomp {

using V = ir::Value*;
class Decomposer;

class Emitter {
 public:
  Emitter(const ir::Context& ctx, ir::Graph& graph, Decomposer& decomposer)
      : ctx_(ctx), graph_(graph), decomposer_(decomposer) {}

  // --- raw emission ---------------------------------------------------------------------
  /// Applies any registered op: prims are appended, other ops are decomposed recursively.
  std::vector<V> apply(const std::string& op, const std::vector<V>& inputs, ir::AttrMap attrs = {});
  V op(const std::string& op, const std::vector<V>& inputs, ir::AttrMap attrs = {});

  // --- types ----------------------------------------------------------------------------
  const ir::TensorType& type(V v) const;
  ir::DType dtype(V v) const { return type(v).dtype; }
  const ir::Shape& shape(V v) const { return type(v).shape; }
  int rank(V v) const { return type(v).rank(); }
  /// torch.result_type of tensors and Python scalars.
  ir::DType promote(const std::vector<V>& tensors, const std::vector<const ir::Attribute*>& scalars = {}) const;

  // --- elementwise (operands broadcast NumPy-style; they must share a dtype: convert first) --
  V unary(const std::string& prim, V a);  ///< "exp", "neg", ...
  V binary(const std::string& prim, V a, V b);
  V add(V a, V b) { return binary("add", a, b); }
  V sub(V a, V b) { return binary("sub", a, b); }
  V mul(V a, V b) { return binary("mul", a, b); }
  V div(V a, V b) { return binary("div", a, b); }
  V where(V pred, V a, V b);
  V convert(V a, ir::DType dtype);  ///< no node when the dtype already matches

  // --- constants ------------------------------------------------------------------------
  /// A tensor of `shape` filled with `value` converted to `dtype` (prims.full).
  V full(const ir::Shape& shape, const ir::Attribute& value, ir::DType dtype);
  V full(const ir::Shape& shape, double value, ir::DType dtype);
  /// A zero-dim constant; broadcasts against anything in binary().
  V scalar(double value, ir::DType dtype) { return full({}, value, dtype); }
  V scalar(const ir::Attribute& value, ir::DType dtype) { return full({}, value, dtype); }
  V iota(const ir::SymExpr& length, ir::DType dtype = ir::DType::kI64);

  // --- structure ------------------------------------------------------------------------
  V broadcastTo(V a, const ir::Shape& shape);  ///< NumPy rules (trailing alignment, size-1 dims)
  V broadcastInDim(V a, const ir::Shape& shape, const std::vector<int64_t>& dims);
  V reshape(V a, const ir::Shape& shape);  ///< no node when the shape already matches
  V permute(V a, const std::vector<int64_t>& dims);
  V transpose(V a, int64_t d0, int64_t d1);
  /// a[..., start:end:step, ...] along one (wrappable) dim; start/end already clamped.
  V sliceDim(V a, int64_t dim, const ir::SymExpr& start, const ir::SymExpr& end, int64_t step = 1);
  V pad(V a, const std::vector<ir::SymExpr>& low, const std::vector<ir::SymExpr>& high, const ir::Attribute& value);
  V concat(const std::vector<V>& tensors, int64_t dim);
  V unsqueeze(V a, int64_t dim);
  V squeezeDims(V a, const std::vector<int64_t>& dims);

  // --- reductions (dims may be negative; empty dims = all) ------------------------------
  V reduce(const std::string& prim, V a, std::vector<int64_t> dims, bool keepdim);  ///< sum, prod, amax, amin
  V sum(V a, const std::vector<int64_t>& dims, bool keepdim = false) { return reduce("sum", a, dims, keepdim); }
  V amax(V a, const std::vector<int64_t>& dims, bool keepdim = false) { return reduce("amax", a, dims, keepdim); }
  V argReduce(const std::string& prim, V a, int64_t dim, bool keepdim);  ///< argmax, argmin

  /// prims.matmul with batch dims broadcast; `out`: its result dtype (f32 from f16/bf16).
  V matmul(V a, V b, std::optional<ir::DType> out = std::nullopt);

  // --- errors ---------------------------------------------------------------------------
  /// Wraps a possibly negative dim for a rank; records an error when out of range.
  int64_t wrapDim(int64_t dim, int64_t rank);
  std::vector<int64_t> wrapDims(const std::vector<int64_t>& dims, int64_t rank);
  /// Records an error (the first one wins) and returns nullptr.
  V fail(Status s);
  bool ok() const { return status_.isOk(); }
  const Status& status() const { return status_; }
  /// The outputs, or the first recorded error.
  StatusOr<std::vector<V>> done(std::vector<V> outputs);
  /// A rule that does not handle this call returns decline(why): the driver tries the next
  /// rule, and names the reason if none applies.
  Status decline(const std::string& why);
  bool declined() const { return declined_; }
  void clearDecline() { declined_ = false; }

  const ir::Context& context() const { return ctx_; }
  const ir::SymAssumptions& assumptions() const { return ctx_.assumptions; }
  /// True when `prim` stays whole (the device implements it; not in DecompOptions::expand).
  bool keepsPrim(const std::string& prim) const;
  /// True when prims.matmul stays whole with an f32 result from f16/bf16 operands.
  bool keepsMixedMatmul() const;
  /// Provably equal / provably >= (false when unknown).
  bool provedEQ(const ir::SymExpr& a, const ir::SymExpr& b) const;
  bool provedGE(const ir::SymExpr& a, const ir::SymExpr& b) const;

 private:
  const ir::Context& ctx_;
  ir::Graph& graph_;
  Decomposer& decomposer_;
  Status status_;
  bool declined_ = false;
};

}  // namespace plugsdk::decomp
