// The C++ graph builder (the C++ capture path): tensor-like handles that record ATen-level
// ops into a Graph, with PyTorch's broadcasting and type promotion (done by the ops'
// inference rules), so a user writes `auto y = relu(matmul(x, w) + b);`.
//
// Errors are deferred: an op that fails (bad shapes, unknown op) records the first error,
// later ops on its result are skipped, and finish() returns that error. Nothing throws.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/support/status.h"

namespace plugsdk::builder {

using ir::DType;
using ir::SymExpr;

class GraphBuilder;

/// A handle to a value being built. Cheap to copy; valid while its builder lives.
class Tensor {
 public:
  Tensor() = default;
  Tensor(GraphBuilder* b, ir::Value* v) : b_(b), v_(v) {}
  bool valid() const { return v_ != nullptr; }
  GraphBuilder* builder() const { return b_; }
  ir::Value* value() const { return v_; }
  DType dtype() const;
  const ir::Shape& shape() const;
  int rank() const { return static_cast<int>(shape().size()); }

 private:
  GraphBuilder* b_ = nullptr;
  ir::Value* v_ = nullptr;
};

class GraphBuilder {
 public:
  explicit GraphBuilder(std::shared_ptr<const ir::Context> ctx, std::string name = "main");

  /// A graph input; dims may be symbols (SymExpr::symbol("batch")).
  Tensor input(const std::string& name, DType dtype, std::vector<SymExpr> shape);
  /// Applies any registered op; returns its outputs (empty on error).
  std::vector<Tensor> apply(const std::string& op, const std::vector<Tensor>& inputs, ir::AttrMap attrs = {});
  /// Single-output form of apply().
  Tensor op(const std::string& op, const std::vector<Tensor>& inputs, ir::AttrMap attrs = {});

  /// The first error so far (ok if none).
  const Status& status() const { return status_; }
  /// Sets the outputs and returns the verified graph (or the first error). Call once.
  StatusOr<ir::Graph> finish(const std::vector<Tensor>& outputs);
  const ir::Context& context() const { return *ctx_; }

 private:
  std::shared_ptr<const ir::Context> ctx_;
  ir::Graph graph_;
  Status status_;
  bool finished_ = false;
};

// Arithmetic with broadcasting and type promotion.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double s);
Tensor operator-(const Tensor& a, double s);
Tensor operator*(const Tensor& a, double s);
Tensor operator/(const Tensor& a, double s);
Tensor operator-(const Tensor& a);

Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x, bool tanhApproximation = false);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor exp(const Tensor& x);

/// torch.matmul for 1-D to N-D operands (batch dims broadcast).
Tensor matmul(const Tensor& a, const Tensor& b);
/// torch.nn.functional.linear: x @ w^T + b (b may be invalid for no bias).
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b = {});
Tensor softmax(const Tensor& x, int64_t dim);
Tensor logSoftmax(const Tensor& x, int64_t dim);
Tensor layerNorm(const Tensor& x, const std::vector<SymExpr>& normalizedShape, const Tensor& w = {},
                 const Tensor& b = {}, double eps = 1e-5);
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b = {}, const std::vector<int64_t>& stride = {1, 1},
              const std::vector<int64_t>& padding = {0, 0}, const std::vector<int64_t>& dilation = {1, 1},
              int64_t groups = 1);
Tensor maxPool2d(const Tensor& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride = {},
                 const std::vector<int64_t>& padding = {0, 0});
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor reshape(const Tensor& x, std::vector<SymExpr> shape);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor cast(const Tensor& x, DType dtype);

}  // namespace plugsdk::builder
