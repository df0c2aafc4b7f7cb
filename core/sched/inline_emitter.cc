// InlineEmitter: one case per inlinable prim.
#include "core/sched/inline_emitter.h"

#include <algorithm>

#include "core/exec/host_tensor.h"
#include "core/ir/op_registry.h"
#include "core/sched/index_math.h"

namespace plugsdk::sched {

using prims::ScalarOp;

namespace {

const std::string kPrefix = "prims.";

std::string primName(const ir::Node& n) { return n.op().substr(kPrefix.size()); }

ir::AttrReader attrsOf(const ir::Node& n) { return ir::AttrReader(n.def()->schema, n.attrs()); }

}  // namespace

bool isView(const std::string& op) {
  return op == "prims.broadcast_in_dim" || op == "prims.reshape" || op == "prims.permute" || op == "prims.slice" ||
         op == "prims.rev" || op == "prims.as_strided";
}

bool isInlinable(const std::string& op) {
  if (isView(op)) return true;
  if (op.rfind(kPrefix, 0) != 0) return false;
  const std::string p = op.substr(kPrefix.size());
  if (prims::scalarOpByName(p)) return true;
  return p == "where" || p == "convert_element_type" || p == "full" || p == "iota" || p == "rand" || p == "pad" ||
         p == "concat" || p == "gather";
}

StatusOr<int> InlineEmitter::at(const ir::Value* v, const std::vector<SymExpr>& idx, int mask) {
  const SymExpr lin = linearize(idx, v->type().shape);
  ASSIGN_OR_RETURN(std::optional<int> r, resolve_(v, &idx, lin, mask));
  if (r) return *r;
  return compute(v, idx, mask);
}

StatusOr<int> InlineEmitter::atLinear(const ir::Value* v, const SymExpr& linear, int mask) {
  ASSIGN_OR_RETURN(std::optional<int> r, resolve_(v, nullptr, linear, mask));
  if (r) return *r;
  return computeLinear(v, linear, mask);
}

int InlineEmitter::andMask(int a, int b) {
  if (a < 0) return b;
  if (b < 0) return a;
  return kb_.scalar(ScalarOp::kBitwiseAnd, a, b);
}

/// Elementwise ops and reshapes pass a linear position straight through (their operands
/// have the same row-major order), which keeps the index arithmetic free of div/mod.
StatusOr<int> InlineEmitter::computeLinear(const ir::Value* v, const SymExpr& linear, int mask) {
  const ir::Node* n = v->producer();
  if (n) {
    if (std::find(computed_.begin(), computed_.end(), v) == computed_.end()) computed_.push_back(v);
    const std::string p = primName(*n);
    const bool elementwise = prims::scalarOpByName(p) || p == "where" || p == "convert_element_type";
    if (p == "reshape") return atLinear(n->inputs()[0], linear, mask);
    if (p == "full") return constantOf(*n);
    if (elementwise) {
      std::vector<int> ops;
      for (const ir::Value* in : n->inputs()) {
        ASSIGN_OR_RETURN(int x, atLinear(in, linear, mask));
        ops.push_back(x);
      }
      if (p == "where") return kb_.where(ops[0], ops[1], ops[2]);
      if (p == "convert_element_type") return kb_.cast(ops[0], v->type().dtype);
      return kb_.scalar(*prims::scalarOpByName(p), ops[0], ops.size() > 1 ? ops[1] : -1);
    }
  }
  return compute(v, delinearize(linear, v->type().shape), mask);
}

StatusOr<int> InlineEmitter::constantOf(const ir::Node& n) {
  const DType dt = n.outputs()[0]->type().dtype;
  const ir::Attribute& value = *n.attr("value");
  double d = value.asBool() ? (*value.asBool() ? 1.0 : 0.0) : value.asDouble().value_or(0.0);
  if (ir::isFloating(dt)) return kb_.constant(exec::roundToFloatType(d, dt), dt);
  if (dt == DType::kBool) return kb_.constantInt(d != 0 ? 1 : 0, dt);
  if (value.kind() == ir::Attribute::Kind::kInt) return kb_.constantInt(exec::wrapToIntType(*value.asInt(), dt), dt);
  return kb_.constantInt(exec::doubleToIntType(d, dt), dt);
}

StatusOr<int> InlineEmitter::compute(const ir::Value* v, const std::vector<SymExpr>& idx, int mask) {
  const ir::Node* n = v->producer();
  if (!n) return internalError("graph input " + v->ref() + " must be resolved by the scheduler");
  if (!n->def()) return internalError(n->describe() + ": node has no op definition");
  if (std::find(computed_.begin(), computed_.end(), v) == computed_.end()) computed_.push_back(v);
  const std::string p = primName(*n);
  const ir::AttrReader a = attrsOf(*n);
  const auto& ins = n->inputs();
  if (auto op = prims::scalarOpByName(p)) {
    ASSIGN_OR_RETURN(int x, at(ins[0], idx, mask));
    if (ins.size() == 1) return kb_.scalar(*op, x);
    ASSIGN_OR_RETURN(int y, at(ins[1], idx, mask));
    return kb_.scalar(*op, x, y);
  }
  if (p == "where") {
    ASSIGN_OR_RETURN(int c, at(ins[0], idx, mask));
    ASSIGN_OR_RETURN(int x, at(ins[1], idx, mask));
    ASSIGN_OR_RETURN(int y, at(ins[2], idx, mask));
    return kb_.where(c, x, y);
  }
  if (p == "convert_element_type") {
    ASSIGN_OR_RETURN(int x, at(ins[0], idx, mask));
    return kb_.cast(x, v->type().dtype);
  }
  if (p == "full") return constantOf(*n);
  if (p == "iota") {
    int x = kb_.index(a.getSym("start") + idx[0] * a.getSym("step"));
    return kb_.cast(x, v->type().dtype);
  }
  if (p == "rand")
    return kb_.rand(a.getInt("seed"), a.getSym("offset") + linearize(idx, v->type().shape), v->type().dtype);
  if (p == "broadcast_in_dim") {
    const std::vector<int64_t> bd = a.getInts("broadcast_dimensions");
    const ir::Shape& in = ins[0]->type().shape;
    std::vector<SymExpr> j(in.size());
    for (size_t i = 0; i < in.size(); ++i) j[i] = in[i] == SymExpr(1) ? SymExpr(0) : idx[static_cast<size_t>(bd[i])];
    return at(ins[0], j, mask);
  }
  if (p == "reshape") return atLinear(ins[0], linearize(idx, v->type().shape), mask);
  if (p == "permute") {
    const std::vector<int64_t> dims = a.getInts("dims");
    std::vector<SymExpr> j(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) j[static_cast<size_t>(dims[i])] = idx[i];
    return at(ins[0], j, mask);
  }
  if (p == "slice") {
    const auto start = a.getSyms("start_indices");
    std::vector<int64_t> step = a.getInts("strides");
    if (step.empty()) step.assign(start.size(), 1);
    std::vector<SymExpr> j(idx.size());
    for (size_t d = 0; d < idx.size(); ++d) j[d] = start[d] + idx[d] * step[d];
    return at(ins[0], j, mask);
  }
  if (p == "rev") {
    std::vector<SymExpr> j = idx;
    for (int64_t d : a.getInts("dims")) {
      const auto u = static_cast<size_t>(d);
      j[u] = ins[0]->type().shape[u] - 1 - idx[u];
    }
    return at(ins[0], j, mask);
  }
  if (p == "as_strided") {
    const auto stride = a.getSyms("stride");
    return atLinear(ins[0], a.getSym("storage_offset") + dot(idx, stride), mask);
  }
  if (p == "gather") {
    ASSIGN_OR_RETURN(int k, at(ins[1], idx, mask));
    k = kb_.cast(k, DType::kI64);
    const auto dim = static_cast<size_t>(a.getInt("dim"));
    kb_.checkIndex(k, ins[0]->type().shape[dim], "gather " + v->ref() + ": an index along dim " + std::to_string(dim),
                   mask);
    std::vector<SymExpr> j = idx;
    j[dim] = kernel::valueRef(k);
    return at(ins[0], j, mask);
  }
  if (p == "pad") return pad(*n, idx, mask);
  if (p == "concat") return concat(*n, idx, mask);
  return internalError(n->describe() + ": " + n->op() +
                       " cannot be computed inline (the scheduler must make it a root)");
}

StatusOr<int> InlineEmitter::pad(const ir::Node& n, const std::vector<SymExpr>& idx, int mask) {
  const ir::AttrReader a = attrsOf(n);
  const auto low = a.getSyms("low");
  std::vector<int64_t> interior = a.getInts("interior");
  if (interior.empty()) interior.assign(low.size(), 0);
  const ir::Value* in = n.inputs()[0];
  const ir::Shape& inShape = in->type().shape;
  const ir::Shape& outShape = n.outputs()[0]->type().shape;
  std::vector<SymExpr> j(idx.size());
  int valid = -1;
  for (size_t d = 0; d < idx.size(); ++d) {
    const SymExpr p = idx[d] - low[d];
    const int64_t every = interior[d] + 1;
    j[d] = every == 1 ? p : SymExpr::floorDiv(p, every);
    if (outShape[d] == inShape[d]) continue;  // nothing padded in this dim
    const int pv = kb_.index(p);
    const int zero = kb_.constantInt(0, DType::kI64);
    int ok = kb_.scalar(ScalarOp::kGe, pv, zero);
    const SymExpr extent = every == 1 ? inShape[d] : (inShape[d] - 1) * every + 1;
    ok = kb_.scalar(ScalarOp::kBitwiseAnd, ok, kb_.scalar(ScalarOp::kLt, pv, kb_.index(extent)));
    if (every > 1)
      ok = kb_.scalar(ScalarOp::kBitwiseAnd, ok, kb_.scalar(ScalarOp::kEq, kb_.index(SymExpr::mod(p, every)), zero));
    valid = andMask(valid, ok);
  }
  if (valid < 0) return at(in, j, mask);
  ASSIGN_OR_RETURN(int x, at(in, j, andMask(mask, valid)));
  const DType dt = in->type().dtype;
  const ir::Attribute& value = *n.attr("padding_value");
  double d = value.asBool() ? (*value.asBool() ? 1.0 : 0.0) : value.asDouble().value_or(0.0);
  int padv;
  if (ir::isFloating(dt))
    padv = kb_.constant(exec::roundToFloatType(d, dt), dt);
  else if (value.kind() == ir::Attribute::Kind::kInt)
    padv = kb_.constantInt(exec::wrapToIntType(*value.asInt(), dt), dt);
  else
    padv = kb_.constantInt(dt == DType::kBool ? (d != 0) : exec::doubleToIntType(d, dt), dt);
  return kb_.where(valid, x, padv);
}

StatusOr<int> InlineEmitter::concat(const ir::Node& n, const std::vector<SymExpr>& idx, int mask) {
  const auto dim = static_cast<size_t>(attrsOf(n).getInt("dim"));
  const auto& ins = n.inputs();
  // Offsets of each input along dim.
  std::vector<SymExpr> offsets;
  SymExpr off(0);
  for (const ir::Value* in : ins) {
    offsets.push_back(off);
    off = off + in->type().shape[dim];
  }
  // Select from the last input backwards: where(idx < end_k, value_k, rest).
  const int pos = kb_.index(idx[dim]);
  std::vector<int> inRange(ins.size(), -1);
  for (size_t k = 0; k + 1 < ins.size(); ++k)
    inRange[k] = kb_.scalar(ScalarOp::kLt, pos, kb_.index(offsets[k] + ins[k]->type().shape[dim]));
  int result = -1;
  for (size_t k = ins.size(); k-- > 0;) {
    // Input k is read where its range holds: pos < end_k and not in an earlier input's range.
    int valid = k + 1 < ins.size() ? inRange[k] : -1;
    if (k > 0) {
      const int notEarlier = kb_.scalar(ScalarOp::kBitwiseXor, inRange[k - 1], kb_.constantInt(1, DType::kBool));
      valid = andMask(valid, notEarlier);
    }
    std::vector<SymExpr> j = idx;
    j[dim] = idx[dim] - offsets[k];
    ASSIGN_OR_RETURN(int x, at(ins[k], j, andMask(mask, valid)));
    result = result < 0 ? x : kb_.where(inRange[k], x, result);
  }
  return result;
}

}  // namespace plugsdk::sched
