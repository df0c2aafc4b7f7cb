// Decompositions of the ATen-level nn ops into prims: the matrix products (prims.matmul with
// vectors as [1, K] / [K, 1] matrices and addmm's scaling as an epilogue) and convolution
// (prims.convolution plus a bias add). Pooling: rules_nn_pool.cc; norms and softmax:
// rules_nn_norm.cc; attention, dropout and losses: rules_nn_attention.cc.
#include <optional>

#include "core/decomp/rules_nn_internal.h"

namespace plugsdk::decomp {

using namespace rules;

namespace {

Result mm(Emitter& e, const DecompCall& c) { return one(e, e.matmul(c.input(0), c.input(1))); }

Result dot(Emitter& e, const DecompCall& c) {
  V a = c.input(0), b = c.input(1);
  const SymExpr k = e.shape(a)[0];
  V p = e.matmul(e.reshape(a, {SymExpr(1), k}), e.reshape(b, {k, SymExpr(1)}));
  return one(e, e.reshape(p, {}));
}

Result mv(Emitter& e, const DecompCall& c) {
  V a = c.input(0), b = c.input(1);
  V p = e.matmul(a, e.reshape(b, {e.shape(b)[0], SymExpr(1)}));
  return one(e, e.reshape(p, c.outType().shape));
}

/// addmm / baddbmm: alpha * (a @ b) + beta * self, as the reference evaluates it; beta == 0
/// ignores self (NaN included). Integer products take the Scalars truncated.
Result addProduct(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  V p = e.matmul(c.input(1), c.input(2));
  auto value = [&](const std::string& name) {
    double v = scalarValue(c.attr(name));
    return ir::isFloating(dt) ? v : static_cast<double>(static_cast<int64_t>(v));
  };
  if (value("alpha") != 1.0) p = e.mul(scalarAttr(e, c, "alpha", dt), p);
  const double beta = value("beta");
  if (beta != 0.0) {
    V self = e.convert(c.input(0), dt);
    if (beta != 1.0) self = e.mul(scalarAttr(e, c, "beta", dt), self);
    p = e.add(p, self);
  }
  return one(e, e.broadcastTo(p, c.outType().shape));
}

/// A static list attribute (SymInt[] in the ATen schema, int[] in the prim's), or nullopt.
std::optional<std::vector<int64_t>> staticInts(const DecompCall& c, const std::string& name) {
  std::vector<int64_t> out;
  for (const SymExpr& s : c.getSyms(name)) {
    auto v = s.constant();
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

/// convolution: prims.convolution, then the bias (converted to the output dtype, as the
/// reference does) added per output channel.
Result convolution(Emitter& e, const DecompCall& c) {
  auto stride = staticInts(c, "stride"), dilation = staticInts(c, "dilation");
  auto groups = c.getSym("groups").constant();
  if (!stride || !dilation || !groups)
    return e.decline("convolution: prims.convolution needs static stride, dilation and groups");
  V out = e.op("prims.convolution", {c.input(0), c.input(1)},
               {{"stride", Attribute::fromInts(*stride)},
                {"padding", Attribute::fromInts(c.getSyms("padding"))},
                {"dilation", Attribute::fromInts(*dilation)},
                {"transposed", Attribute::fromBool(c.getBool("transposed"))},
                {"output_padding", Attribute::fromInts(c.getSyms("output_padding"))},
                {"groups", Attribute::fromInt(*groups)}});
  if (V bias = c.input(2)) {
    const ir::TensorType& t = c.outType();
    Shape s(t.shape.size(), SymExpr(1));
    s[1] = t.shape[1];
    out = e.add(out, e.reshape(e.convert(bias, t.dtype), s));
  }
  return one(e, out);
}

}  // namespace

void addNNRules(DecompTable& t) {
  t.add("aten.mm", mm);
  t.add("aten.bmm", mm);
  t.add("aten.dot", dot);
  t.add("aten.mv", mv);
  t.add("aten.addmm", addProduct);
  t.add("aten.baddbmm", addProduct);
  t.add("aten.convolution", convolution);
  addPoolRules(t);
  addNormRules(t);
  addAttentionRules(t);
}

}  // namespace plugsdk::decomp
