// The Emitter: prim construction with broadcasting, dim wrapping and deferred errors.
#include "core/decomp/emitter.h"

#include <algorithm>
#include <optional>

#include "core/decomp/decompose.h"
#include "core/ir/shape_rules.h"
#include "core/ir/verifier.h"
#include "core/prims/prims.h"

namespace plugsdk::decomp {

using ir::Attribute;
using ir::AttrMap;
using ir::DType;
using ir::Shape;
using ir::SymExpr;

namespace {
const ir::TensorType kNoType;
}

std::vector<V> Emitter::apply(const std::string& op, const std::vector<V>& inputs, AttrMap attrs) {
  if (!ok()) return {};
  const ir::OpDef* def = ctx_.ops.find(op);
  if (!def) {
    fail(internalError("decomposition emitted the unknown op '" + op + "'"));
    return {};
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::ArgSpec* spec = i < def->schema.tensorArgs().size() ? def->schema.tensorArgs()[i] : nullptr;
    bool optional = spec && spec->type == ir::ArgType::kOptionalTensor;
    if (!inputs[i] && !optional) {
      fail(internalError(op + ": input " + std::to_string(i) + " is missing (an earlier step failed)"));
      return {};
    }
  }
  auto types = ir::checkAndInfer(ctx_, *def, inputs, attrs, op);
  if (!types.isOk()) {
    fail(types.status());
    return {};
  }
  if (decomposer_.keeps(*def, attrs, inputs)) {
    ir::Node* n = graph_.addNode(def->schema.name, def, inputs, std::move(attrs), *types);
    return n->outputs();
  }
  auto outs = decomposer_.expand(graph_, *def, attrs, inputs, *types);
  if (!outs.isOk()) {
    fail(outs.status());
    return {};
  }
  return *outs;
}

V Emitter::op(const std::string& op, const std::vector<V>& inputs, AttrMap attrs) {
  auto outs = apply(op, inputs, std::move(attrs));
  return outs.empty() ? nullptr : outs[0];
}

const ir::TensorType& Emitter::type(V v) const { return v ? v->type() : kNoType; }

DType Emitter::promote(const std::vector<V>& tensors, const std::vector<const Attribute*>& scalars) const {
  std::vector<ir::PromotionOperand> ops;
  for (V t : tensors)
    if (t) ops.push_back({&t->type(), nullptr});
  for (const Attribute* s : scalars) ops.push_back({nullptr, s});
  return ir::resultType(ops);
}

V Emitter::unary(const std::string& prim, V a) {
  if (!ok() || !a) return nullptr;
  return op("prims." + prim, {a});
}

V Emitter::binary(const std::string& prim, V a, V b) {
  if (!ok() || !a || !b) return nullptr;
  auto common = ir::broadcastShapes(shape(a), shape(b), assumptions());
  if (!common.isOk()) return fail(common.status().withContext("prims." + prim));
  return op("prims." + prim, {broadcastTo(a, *common), broadcastTo(b, *common)});
}

V Emitter::where(V pred, V a, V b) {
  if (!ok() || !pred || !a || !b) return nullptr;
  auto common = ir::broadcastAll({&type(pred), &type(a), &type(b)}, assumptions());
  if (!common.isOk()) return fail(common.status().withContext("prims.where"));
  return op("prims.where", {broadcastTo(pred, *common), broadcastTo(a, *common), broadcastTo(b, *common)});
}

V Emitter::convert(V a, DType to) {
  if (!ok() || !a) return nullptr;
  if (dtype(a) == to) return a;
  return op("prims.convert_element_type", {a}, {{"dtype", Attribute::fromDType(to)}});
}

V Emitter::full(const Shape& shape, const Attribute& value, DType dtype) {
  if (!ok()) return nullptr;
  Attribute v = value;
  // prims.full takes a float only for floating (and bool) dtypes: integers truncate as a cast does.
  if (v.kind() == Attribute::Kind::kFloat && ir::isIntegral(dtype, /*includeBool=*/false)) {
    double d = *v.asDouble();
    v = Attribute::fromInt(static_cast<int64_t>(d));
  }
  return op("prims.full", {},
            {{"shape", Attribute::fromInts(shape)}, {"value", v}, {"dtype", Attribute::fromDType(dtype)}});
}

V Emitter::full(const Shape& shape, double value, DType dtype) {
  if (ir::isFloating(dtype)) return full(shape, Attribute::fromFloat(value), dtype);
  if (dtype == DType::kBool) return full(shape, Attribute::fromBool(value != 0), dtype);
  return full(shape, Attribute::fromInt(static_cast<int64_t>(value)), dtype);
}

V Emitter::iota(const SymExpr& length, DType dtype) {
  return op("prims.iota", {}, {{"length", Attribute::fromSym(length)}, {"dtype", Attribute::fromDType(dtype)}});
}

V Emitter::broadcastTo(V a, const Shape& shape) {
  if (!ok() || !a) return nullptr;
  const Shape& in = this->shape(a);
  if (in.size() > shape.size())
    return fail(invalidArgument("cannot broadcast " + a->type().toString() + " to " + ir::shapeToString(shape)));
  bool same = in.size() == shape.size();
  for (size_t i = 0; same && i < in.size(); ++i) same = provedEQ(in[i], shape[i]);
  if (same) return a;
  // A broadcast constant is just a bigger constant.
  if (const ir::Node* p = a->producer(); p && p->op() == "prims.full") return full(shape, *p->attr("value"), dtype(a));
  std::vector<int64_t> dims;
  const size_t off = shape.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) dims.push_back(static_cast<int64_t>(off + i));
  return broadcastInDim(a, shape, dims);
}

V Emitter::broadcastInDim(V a, const Shape& shape, const std::vector<int64_t>& dims) {
  if (!ok() || !a) return nullptr;
  return op("prims.broadcast_in_dim", {a},
            {{"shape", Attribute::fromInts(shape)}, {"broadcast_dimensions", Attribute::fromInts(dims)}});
}

V Emitter::reshape(V a, const Shape& shape) {
  if (!ok() || !a) return nullptr;
  if (this->shape(a) == shape) return a;
  return op("prims.reshape", {a}, {{"shape", Attribute::fromInts(shape)}});
}

V Emitter::permute(V a, const std::vector<int64_t>& dims) {
  if (!ok() || !a) return nullptr;
  std::vector<int64_t> wrapped = wrapDims(dims, rank(a));
  // A permute of a permute is one permute of the source (out[i] = src[inner[outer[i]]]):
  // a transpose undone (a backward's view of a forward's view) leaves no copy behind.
  const ir::Node* inner = a->producer();
  if (inner && inner->op() == "prims.permute" && static_cast<int>(wrapped.size()) == rank(a) && inner->attr("dims"))
    if (std::optional<std::vector<int64_t>> in = inner->attr("dims")->asIntList(); in && in->size() == wrapped.size()) {
      for (int64_t& d : wrapped) d = (*in)[static_cast<size_t>(d)];
      a = inner->inputs()[0];
    }
  bool identity = true;
  for (size_t i = 0; i < wrapped.size(); ++i) identity = identity && wrapped[i] == static_cast<int64_t>(i);
  if (identity && static_cast<int>(wrapped.size()) == rank(a)) return a;
  return op("prims.permute", {a}, {{"dims", Attribute::fromInts(wrapped)}});
}

V Emitter::transpose(V a, int64_t d0, int64_t d1) {
  if (!ok() || !a) return nullptr;
  const int r = rank(a);
  d0 = wrapDim(d0, r);
  d1 = wrapDim(d1, r);
  std::vector<int64_t> dims(static_cast<size_t>(r));
  for (int i = 0; i < r; ++i) dims[static_cast<size_t>(i)] = i;
  if (ok()) std::swap(dims[static_cast<size_t>(d0)], dims[static_cast<size_t>(d1)]);
  return permute(a, dims);
}

V Emitter::sliceDim(V a, int64_t dim, const SymExpr& start, const SymExpr& end, int64_t step) {
  if (!ok() || !a) return nullptr;
  dim = wrapDim(dim, rank(a));
  if (!ok()) return nullptr;
  const Shape& s = shape(a);
  if (start == SymExpr(0) && provedEQ(end, s[static_cast<size_t>(dim)]) && step == 1) return a;
  Shape lo(s.size(), SymExpr(0)), hi = s;
  std::vector<int64_t> steps(s.size(), 1);
  lo[static_cast<size_t>(dim)] = start;
  hi[static_cast<size_t>(dim)] = end;
  steps[static_cast<size_t>(dim)] = step;
  return op("prims.slice", {a},
            {{"start_indices", Attribute::fromInts(lo)},
             {"limit_indices", Attribute::fromInts(hi)},
             {"strides", Attribute::fromInts(steps)}});
}

V Emitter::pad(V a, const std::vector<SymExpr>& low, const std::vector<SymExpr>& high, const Attribute& value) {
  if (!ok() || !a) return nullptr;
  return op("prims.pad", {a},
            {{"padding_value", value}, {"low", Attribute::fromInts(low)}, {"high", Attribute::fromInts(high)}});
}

V Emitter::concat(const std::vector<V>& tensors, int64_t dim) {
  if (!ok()) return nullptr;
  for (V t : tensors)
    if (!t) return nullptr;
  if (tensors.size() == 1) return tensors[0];
  dim = wrapDim(dim, tensors.empty() ? 0 : rank(tensors[0]));
  return op("prims.concat", tensors, {{"dim", Attribute::fromInt(dim)}});
}

V Emitter::unsqueeze(V a, int64_t dim) {
  if (!ok() || !a) return nullptr;
  dim = wrapDim(dim, rank(a) + 1);
  if (!ok()) return nullptr;
  Shape s = shape(a);
  s.insert(s.begin() + dim, SymExpr(1));
  return reshape(a, s);
}

V Emitter::squeezeDims(V a, const std::vector<int64_t>& dims) {
  if (!ok() || !a) return nullptr;
  std::vector<int64_t> w = wrapDims(dims, rank(a));
  Shape s;
  for (int d = 0; d < rank(a); ++d) {
    bool drop = std::find(w.begin(), w.end(), d) != w.end() && shape(a)[static_cast<size_t>(d)] == SymExpr(1);
    if (!drop) s.push_back(shape(a)[static_cast<size_t>(d)]);
  }
  return reshape(a, s);
}

V Emitter::reduce(const std::string& prim, V a, std::vector<int64_t> dims, bool keepdim) {
  if (!ok() || !a) return nullptr;
  const int r = rank(a);
  if (dims.empty())
    for (int d = 0; d < r; ++d) dims.push_back(d);
  dims = wrapDims(dims, r);
  if (!ok()) return nullptr;
  std::sort(dims.begin(), dims.end());
  V out = op("prims." + prim, {a}, {{"dims", Attribute::fromInts(dims)}});
  if (!keepdim || !out) return out;
  Shape s = shape(a);
  for (int64_t d : dims) s[static_cast<size_t>(d)] = SymExpr(1);
  return reshape(out, s);
}

V Emitter::argReduce(const std::string& prim, V a, int64_t dim, bool keepdim) {
  if (!ok() || !a) return nullptr;
  if (rank(a) == 0) a = reshape(a, {SymExpr(1)});
  dim = wrapDim(dim, rank(a));
  V out = op("prims." + prim, {a}, {{"dim", Attribute::fromInt(dim)}});
  if (!keepdim || !out) return out;
  Shape s = shape(a);
  s[static_cast<size_t>(dim)] = SymExpr(1);
  return reshape(out, s);
}

V Emitter::matmul(V a, V b, std::optional<DType> out) {
  if (!ok() || !a || !b) return nullptr;
  const Shape &sa = shape(a), &sb = shape(b);
  if (sa.size() < 2 || sb.size() < 2)
    return fail(internalError("Emitter::matmul needs operands of rank >= 2, got " + a->type().toString() + " and " +
                              b->type().toString()));
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  auto batch = ir::broadcastShapes(ba, bb, assumptions());
  if (!batch.isOk()) return fail(batch.status().withContext("matmul batch dims"));
  Shape ta = *batch, tb = *batch;
  ta.insert(ta.end(), sa.end() - 2, sa.end());
  tb.insert(tb.end(), sb.end() - 2, sb.end());
  AttrMap attrs;
  if (out && *out != dtype(a)) attrs["dtype"] = Attribute::fromDType(*out);
  return op("prims.matmul", {broadcastTo(a, ta), broadcastTo(b, tb)}, std::move(attrs));
}

int64_t Emitter::wrapDim(int64_t dim, int64_t rank) {
  auto w = ir::wrapDim(dim, rank);
  if (!w.isOk()) {
    fail(w.status());
    return 0;
  }
  return *w;
}

std::vector<int64_t> Emitter::wrapDims(const std::vector<int64_t>& dims, int64_t rank) {
  auto w = ir::wrapDims(dims, rank);
  if (!w.isOk()) {
    fail(w.status());
    return {};
  }
  return *w;
}

V Emitter::fail(Status s) {
  if (status_.isOk()) status_ = std::move(s);
  return nullptr;
}

StatusOr<std::vector<V>> Emitter::done(std::vector<V> outputs) {
  if (!ok()) return status_;
  for (V v : outputs)
    if (!v) return internalError("a decomposition produced no value for an output");
  return outputs;
}

Status Emitter::decline(const std::string& why) {
  declined_ = true;
  return unimplemented(why);
}

bool Emitter::provedEQ(const SymExpr& a, const SymExpr& b) const {
  auto r = ir::proveEQ(a, b, assumptions());
  return r && *r;
}

bool Emitter::provedGE(const SymExpr& a, const SymExpr& b) const {
  auto r = ir::proveGE(a, b, assumptions());
  return r && *r;
}

bool Emitter::keepsPrim(const std::string& prim) const { return decomposer_.keepsPrim(prim); }

bool Emitter::keepsMixedMatmul() const { return decomposer_.keepsPrim("prims.matmul") && decomposer_.mixedMatmul(); }

}  // namespace plugsdk::decomp
