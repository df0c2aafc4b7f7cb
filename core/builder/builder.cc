// GraphBuilder and the free functions that record ATen-level ops.
#include "core/builder/builder.h"

#include "core/ir/verifier.h"

namespace plugsdk::builder {

namespace {
const ir::Shape kEmptyShape;
}

DType Tensor::dtype() const { return v_ ? v_->type().dtype : DType::kF32; }
const ir::Shape& Tensor::shape() const { return v_ ? v_->type().shape : kEmptyShape; }

GraphBuilder::GraphBuilder(std::shared_ptr<const ir::Context> ctx, std::string name)
    : ctx_(std::move(ctx)), graph_(std::move(name)) {}

Tensor GraphBuilder::input(const std::string& name, DType dtype, std::vector<SymExpr> shape) {
  ir::TensorType t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  for (const auto& v : graph_.inputs())
    if (v->name() == name && status_.isOk()) status_ = invalidArgument("input %" + name + " declared twice");
  return Tensor(this, graph_.addInput(name, std::move(t)));
}

std::vector<Tensor> GraphBuilder::apply(const std::string& op, const std::vector<Tensor>& inputs, ir::AttrMap attrs) {
  if (!status_.isOk() || finished_) return {};
  const ir::OpDef* def = ctx_->ops.find(op);
  if (!def) {
    status_ = notFound("builder: unknown op '" + op + "'");
    return {};
  }
  std::vector<ir::Value*> ins;
  for (const Tensor& t : inputs) {
    if (t.valid() && t.builder() != this) {
      status_ = invalidArgument("builder: " + op + " was given a tensor from another builder");
      return {};
    }
    ins.push_back(t.value());  // nullptr = absent optional tensor
  }
  auto types = ir::checkAndInfer(*ctx_, *def, ins, attrs, "builder: " + op);
  if (!types.isOk()) {
    status_ = types.status();
    return {};
  }
  ir::Node* n = graph_.addNode(def->schema.name, def, ins, std::move(attrs), *types);
  std::vector<Tensor> outs;
  for (ir::Value* v : n->outputs()) outs.emplace_back(this, v);
  return outs;
}

Tensor GraphBuilder::op(const std::string& op, const std::vector<Tensor>& inputs, ir::AttrMap attrs) {
  auto outs = apply(op, inputs, std::move(attrs));
  return outs.empty() ? Tensor() : outs[0];
}

StatusOr<ir::Graph> GraphBuilder::finish(const std::vector<Tensor>& outputs) {
  if (finished_) return Status(StatusCode::kFailedPrecondition, "builder: finish() called twice");
  if (!status_.isOk()) return status_;
  std::vector<ir::Value*> outs;
  for (const Tensor& t : outputs) {
    if (!t.valid() || t.builder() != this) return invalidArgument("builder: an output is not a tensor of this builder");
    outs.push_back(t.value());
  }
  graph_.setOutputs(std::move(outs));
  finished_ = true;
  RETURN_IF_ERROR(ir::verifyGraph(*ctx_, graph_));
  return std::move(graph_);
}

namespace {

GraphBuilder* builderOf(const Tensor& a, const Tensor& b = {}) { return a.builder() ? a.builder() : b.builder(); }

Tensor unary(const char* op, const Tensor& x, ir::AttrMap attrs = {}) {
  if (!x.builder()) return {};
  return x.builder()->op(op, {x}, std::move(attrs));
}

Tensor binary(const char* op, const Tensor& a, const Tensor& b) {
  GraphBuilder* g = builderOf(a, b);
  if (!g || !a.valid() || !b.valid()) return {};
  return g->op(op, {a, b});
}

Tensor scalarOp(const char* op, const Tensor& a, double s) {
  if (!a.builder()) return {};
  return a.builder()->op(op, {a}, {{"other", ir::Attribute::fromFloat(s)}});
}

std::vector<SymExpr> ints(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

}  // namespace

Tensor operator+(const Tensor& a, const Tensor& b) { return binary("aten.add.Tensor", a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return binary("aten.sub.Tensor", a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return binary("aten.mul.Tensor", a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return binary("aten.div.Tensor", a, b); }
Tensor operator+(const Tensor& a, double s) { return scalarOp("aten.add.Scalar", a, s); }
Tensor operator-(const Tensor& a, double s) { return scalarOp("aten.sub.Scalar", a, s); }
Tensor operator*(const Tensor& a, double s) { return scalarOp("aten.mul.Scalar", a, s); }
Tensor operator/(const Tensor& a, double s) { return scalarOp("aten.div.Scalar", a, s); }
Tensor operator-(const Tensor& a) { return unary("aten.neg", a); }

Tensor relu(const Tensor& x) { return unary("aten.relu", x); }
Tensor gelu(const Tensor& x, bool tanhApproximation) {
  return unary("aten.gelu", x, {{"approximate", ir::Attribute::fromString(tanhApproximation ? "tanh" : "none")}});
}
Tensor sigmoid(const Tensor& x) { return unary("aten.sigmoid", x); }
Tensor tanh(const Tensor& x) { return unary("aten.tanh", x); }
Tensor exp(const Tensor& x) { return unary("aten.exp", x); }

Tensor reshape(const Tensor& x, std::vector<SymExpr> shape) {
  return unary("aten.view", x, {{"size", ir::Attribute::fromInts(std::move(shape))}});
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  return unary("aten.transpose.int", x,
               {{"dim0", ir::Attribute::fromInt(dim0)}, {"dim1", ir::Attribute::fromInt(dim1)}});
}

Tensor cast(const Tensor& x, DType dtype) {
  return unary("aten._to_copy", x, {{"dtype", ir::Attribute::fromDType(dtype)}});
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  GraphBuilder* g = builderOf(a, b);
  if (!g || !a.valid() || !b.valid()) return {};
  int ra = a.rank(), rb = b.rank();
  if (ra == 0 || rb == 0) {
    g->op("aten.mm", {a, b});  // records a clear rank error
    return {};
  }
  if (ra == 2 && rb == 2) return g->op("aten.mm", {a, b});
  if (ra == 1 && rb == 1) return sum(a * b, {0});
  if (ra == 1) {  // [k] @ [..., k, n] -> [..., n]
    Tensor a2 = g->op("aten.unsqueeze", {a}, {{"dim", ir::Attribute::fromInt(0)}});
    Tensor r = matmul(a2, b);
    return g->op("aten.squeeze.dim", {r}, {{"dim", ir::Attribute::fromInt(-2)}});
  }
  if (rb == 1) {  // [..., m, k] @ [k] -> [..., m]
    Tensor b2 = g->op("aten.unsqueeze", {b}, {{"dim", ir::Attribute::fromInt(1)}});
    Tensor r = matmul(a, b2);
    return g->op("aten.squeeze.dim", {r}, {{"dim", ir::Attribute::fromInt(-1)}});
  }
  if (rb == 2) {  // [..., m, k] @ [k, n]: fold the batch into rows.
    ir::Shape as = a.shape();
    SymExpr rows(1);
    for (int i = 0; i < ra - 1; ++i) rows = rows * as[static_cast<size_t>(i)];
    Tensor flat = reshape(a, {rows, as.back()});
    Tensor r = g->op("aten.mm", {flat, b});
    if (!r.valid()) return {};
    ir::Shape out(as.begin(), as.end() - 1);
    out.push_back(b.shape()[1]);
    return reshape(r, out);
  }
  // Both >= 3-D (or 2-D with N-D): broadcast batch dims, then bmm over the flattened batch.
  ir::Shape as = a.shape(), bs = b.shape();
  ir::Shape abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2);
  ir::Shape batch;
  {
    size_t n = std::max(abatch.size(), bbatch.size());
    for (size_t i = 0; i < n; ++i) {
      SymExpr da = i < n - abatch.size() ? SymExpr(1) : abatch[i - (n - abatch.size())];
      SymExpr db = i < n - bbatch.size() ? SymExpr(1) : bbatch[i - (n - bbatch.size())];
      batch.push_back(da.constant() == 1 ? db : da);
    }
  }
  SymExpr nb(1);
  for (const auto& d : batch) nb = nb * d;
  auto expandTo = [&](const Tensor& t, const ir::Shape& s) {
    ir::Shape target = batch;
    target.push_back(s[s.size() - 2]);
    target.push_back(s.back());
    Tensor e = t.shape() == target ? t : g->op("aten.expand", {t}, {{"size", ir::Attribute::fromInts(target)}});
    return reshape(e, {nb, s[s.size() - 2], s.back()});
  };
  Tensor r = g->op("aten.bmm", {expandTo(a, as), expandTo(b, bs)});
  if (!r.valid()) return {};
  ir::Shape out = batch;
  out.push_back(as[as.size() - 2]);
  out.push_back(bs.back());
  return reshape(r, out);
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  GraphBuilder* g = builderOf(x, w);
  if (!g) return {};
  Tensor wt = g->op("aten.t", {w});
  if (b.valid() && x.rank() == 2) return g->op("aten.addmm", {b, x, wt});
  Tensor y = matmul(x, wt);
  return b.valid() ? y + b : y;
}

Tensor softmax(const Tensor& x, int64_t dim) {
  return unary("aten._softmax", x,
               {{"dim", ir::Attribute::fromInt(dim)}, {"half_to_float", ir::Attribute::fromBool(false)}});
}

Tensor logSoftmax(const Tensor& x, int64_t dim) {
  return unary("aten._log_softmax", x,
               {{"dim", ir::Attribute::fromInt(dim)}, {"half_to_float", ir::Attribute::fromBool(false)}});
}

Tensor layerNorm(const Tensor& x, const std::vector<SymExpr>& normalizedShape, const Tensor& w, const Tensor& b,
                 double eps) {
  if (!x.builder()) return {};
  auto outs = x.builder()->apply(
      "aten.native_layer_norm", {x, w, b},
      {{"normalized_shape", ir::Attribute::fromInts(normalizedShape)}, {"eps", ir::Attribute::fromFloat(eps)}});
  return outs.empty() ? Tensor() : outs[0];
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const std::vector<int64_t>& stride,
              const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups) {
  GraphBuilder* g = builderOf(x, w);
  if (!g) return {};
  return g->op("aten.convolution", {x, w, b},
               {{"stride", ir::Attribute::fromInts(ints(stride))},
                {"padding", ir::Attribute::fromInts(ints(padding))},
                {"dilation", ir::Attribute::fromInts(ints(dilation))},
                {"transposed", ir::Attribute::fromBool(false)},
                {"output_padding", ir::Attribute::fromInts(std::vector<int64_t>{0, 0})},
                {"groups", ir::Attribute::fromInt(groups)}});
}

Tensor maxPool2d(const Tensor& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                 const std::vector<int64_t>& padding) {
  if (!x.builder()) return {};
  auto outs = x.builder()->apply("aten.max_pool2d_with_indices", {x},
                                 {{"kernel_size", ir::Attribute::fromInts(ints(kernel))},
                                  {"stride", ir::Attribute::fromInts(ints(stride))},
                                  {"padding", ir::Attribute::fromInts(ints(padding))}});
  return outs.empty() ? Tensor() : outs[0];
}

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return unary("aten.sum.dim_IntList", x,
               {{"dim", ir::Attribute::fromInts(ints(dims))}, {"keepdim", ir::Attribute::fromBool(keepdim)}});
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return unary("aten.mean.dim", x,
               {{"dim", ir::Attribute::fromInts(ints(dims))}, {"keepdim", ir::Attribute::fromBool(keepdim)}});
}

}  // namespace plugsdk::builder
