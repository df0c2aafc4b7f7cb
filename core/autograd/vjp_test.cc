// Every VJP rule against central finite differences in float64 on the reference executor,
// and the table's coverage: every prim has an entry and every rule a case here.
#include "core/autograd/vjp.h"

#include <gtest/gtest.h>

#include <set>

#include "core/autograd/gradcheck.h"
#include "core/prims/prims.h"
#include "core/text/parser.h"

namespace plugsdk::autograd {
namespace {

struct Case {
  std::string name;
  std::string body;  ///< "(%x: f64[2, 3]) { ... return ... }" after "graph @g"
  GradcheckOptions options{};
};

Case unary(const std::string& op, double lo = -2, double hi = 2) {
  Case c{op, "(%x: f64[2, 3]) {\n  %y = prims." + op + "(%x)\n  return %y\n}", {}};
  c.options.lo = lo;
  c.options.hi = hi;
  return c;
}

Case binary(const std::string& op, double lo = -2, double hi = 2) {
  Case c{op, "(%a: f64[2, 3], %b: f64[2, 3]) {\n  %y = prims." + op + "(%a, %b)\n  return %y\n}", {}};
  c.options.lo = lo;
  c.options.hi = hi;
  return c;
}

Case graph(const std::string& name, const std::string& body, GradcheckOptions o = {}) { return Case{name, body, o}; }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* op : {"abs", "asinh", "atan", "ceil", "cos", "cosh", "erf", "exp", "expm1", "floor", "neg", "round",
                         "sign", "sin", "sinh", "tanh", "trunc"})
    out.push_back(unary(op));
  for (const char* op : {"acos", "asin", "atanh"}) out.push_back(unary(op, -0.9, 0.9));
  out.push_back(unary("acosh", 1.1, 3));
  out.push_back(unary("tan", -1.2, 1.2));
  for (const char* op : {"log", "log2", "rsqrt", "sqrt", "log1p"}) out.push_back(unary(op, 0.1, 3));
  for (const char* op : {"add", "sub", "mul", "atan2", "maximum", "minimum"}) out.push_back(binary(op));
  for (const char* op : {"div", "pow"}) out.push_back(binary(op, 0.5, 2));
  for (const char* op : {"fmod", "remainder"}) {
    Case c = binary(op);
    c.options.fixed[0] = {2.3, -2.7, 5.1, -0.4, 1.9, 3.3};
    c.options.fixed[1] = {0.7, 1.1, -1.6, 0.9, -0.8, 1.4};
    out.push_back(c);
  }
  {  // pow's exponent gradient where the base is 0 is 0 (not 0 * -inf)
    Case c = binary("pow");
    c.name = "pow_zero_base";
    c.options.fixed[0] = {0.0, 0.0, 0.5, 1.5, 2.0, 0.7};
    c.options.fixed[1] = {1.5, 2.0, 0.5, -1.0, 3.0, 2.5};
    c.options.noGrad = {0};  // a - h < 0 has no real power: the base is not differentiated here
    out.push_back(c);
  }
  out.push_back(graph("where_gt", R"((%a: f64[2, 3], %b: f64[2, 3]) {
  %p = prims.gt(%a, %b)
  %y = prims.where(%p, %a, %b)
  return %y
})"));
  out.push_back(graph("comparisons_and_bitwise_carry_no_gradient", R"((%a: f64[2, 3], %b: f64[2, 3]) {
  %p = prims.le(%a, %b)
  %q = prims.ne(%a, %b)
  %r = prims.bitwise_and(%p, %q)
  %s = prims.bitwise_or(%r, %p)
  %t = prims.bitwise_xor(%s, %q)
  %u = prims.bitwise_not(%t)
  %v = prims.eq(%a, %b)
  %w = prims.bitwise_or(%u, %v)
  %x = prims.lt(%a, %b)
  %z = prims.ge(%a, %b)
  %m = prims.bitwise_and(%x, %z)
  %n = prims.bitwise_or(%w, %m)
  %y = prims.where(%n, %a, %b)
  return %y
})"));
  {
    GradcheckOptions o;
    o.step = 1e-3;  // through f32: the rounding noise is ~1e-7 relative
    o.atol = 1e-4;
    o.rtol = 1e-3;
    out.push_back(graph("convert_element_type", R"((%x: f64[2, 3]) {
  %f = prims.convert_element_type(%x) {dtype = f32}
  %g = prims.mul(%f, %f)
  %y = prims.convert_element_type(%g) {dtype = f64}
  %i = prims.convert_element_type(%x) {dtype = i64}
  %j = prims.convert_element_type(%i) {dtype = f64}
  %z = prims.add(%y, %j)
  return %z
})",
                        o));
  }
  // structure
  out.push_back(graph("broadcast_in_dim", R"((%x: f64[3, 1]) {
  %y = prims.broadcast_in_dim(%x) {broadcast_dimensions = [1, 2], shape = [2, 3, 4]}
  return %y
})"));
  out.push_back(graph("reshape_permute_rev", R"((%x: f64[2, 3, 4]) {
  %p = prims.permute(%x) {dims = [2, 0, 1]}
  %r = prims.reshape(%p) {shape = [8, 3]}
  %y = prims.rev(%r) {dims = [0, 1]}
  return %y
})"));
  out.push_back(graph("slice_strided", R"((%x: f64[5, 6]) {
  %y = prims.slice(%x) {limit_indices = [5, 5], start_indices = [1, 0], strides = [2, 2]}
  return %y
})"));
  out.push_back(graph("pad_interior", R"((%x: f64[2, 3]) {
  %y = prims.pad(%x) {high = [0, 2], interior = [1, 0], low = [1, 0], padding_value = 0.5}
  return %y
})"));
  out.push_back(graph("concat", R"((%a: f64[2, 3], %b: f64[2, 2]) {
  %y = prims.concat(%a, %b) {dim = 1}
  return %y
})"));
  out.push_back(graph("as_strided_overlapping_windows", R"((%x: f64[4, 4]) {
  %y = prims.as_strided(%x) {size = [3, 3, 2, 2], storage_offset = 0, stride = [4, 1, 4, 1]}
  return %y
})"));
  // reductions
  out.push_back(graph("sum", R"((%x: f64[2, 3, 4]) {
  %y = prims.sum(%x) {dims = [0, 2]}
  return %y
})"));
  out.push_back(graph("prod", R"((%x: f64[3, 4]) {
  %y = prims.prod(%x) {dims = [1]}
  return %y
})"));
  {
    GradcheckOptions o;  // one row with one zero, one with two, one with none
    o.fixed[0] = {0.0, 1.5, -2.0, 0.7, 0.0, 0.0, 1.2, 3.0, 1.1, -0.9, 1.3, 0.8};
    out.push_back(graph("prod_with_zeros", R"((%x: f64[3, 4]) {
  %y = prims.prod(%x) {dims = [1]}
  return %y
})",
                        o));
  }
  for (const char* op : {"amax", "amin"})
    out.push_back(
        graph(op, std::string("(%x: f64[2, 3, 4]) {\n  %y = prims.") + op + "(%x) {dims = [0, 2]}\n  return %y\n}"));
  {
    GradcheckOptions o;
    o.fixed[1] = {2, 0, 1, 3, 3, 1, 0, 0};
    out.push_back(graph("gather", R"((%x: f64[2, 4], %i: i64[2, 4]) {
  %y = prims.gather(%x, %i) {dim = 1}
  return %y
})",
                        o));
  }
  out.push_back(graph("argmax_argmin_gather", R"((%x: f64[3, 4]) {
  %i = prims.argmax(%x) {dim = 1}
  %j = prims.argmin(%x) {dim = 1}
  %k = prims.reshape(%i) {shape = [3, 1]}
  %l = prims.reshape(%j) {shape = [3, 1]}
  %m = prims.concat(%k, %l) {dim = 1}
  %y = prims.gather(%x, %m) {dim = 1}
  return %y
})"));
  for (const char* reduce : {"none", "sum"}) {
    GradcheckOptions o;
    o.fixed[1] = {0, 1, 2, 0, 2, 0, 1, 1};  // distinct per column: "none" is well defined
    out.push_back(graph(std::string("scatter_") + reduce,
                        std::string("(%a: f64[3, 4], %i: i64[2, 4], %s: f64[2, 4]) {\n  %y = prims.scatter(%a, %i, "
                                    "%s) {dim = 0, reduce = \"") +
                            reduce + "\"}\n  return %y\n}",
                        o));
  }
  out.push_back(graph("generators", R"((%x: f64[2, 3]) {
  %c = prims.full() {dtype = f64, shape = [2, 3], value = 1.5}
  %r = prims.rand() {dtype = f64, seed = 3, shape = [2, 3]}
  %i = prims.iota() {dtype = i64, length = 3}
  %f = prims.convert_element_type(%i) {dtype = f64}
  %b = prims.broadcast_in_dim(%f) {broadcast_dimensions = [1], shape = [2, 3]}
  %m = prims.mul(%x, %c)
  %n = prims.mul(%m, %r)
  %y = prims.add(%n, %b)
  return %y
})"));
  // library
  out.push_back(graph("matmul_batched", R"((%a: f64[2, 3, 4], %b: f64[2, 4, 5]) {
  %y = prims.matmul(%a, %b)
  return %y
})"));
  // transposed operands (x W^T, as nn.Linear; and X^T B): their gradients are computed
  // transposed so that the permute's VJP cancels the transpose
  out.push_back(graph("matmul_transposed_operands", R"((%x: f64[4, 3], %w: f64[5, 3], %b: f64[4, 2]) {
  %wt = prims.permute(%w) {dims = [1, 0]}
  %h = prims.matmul(%x, %wt)
  %ht = prims.permute(%h) {dims = [1, 0]}
  %y = prims.matmul(%ht, %b)
  return %y
})"));
  out.push_back(graph("convolution_strided", R"((%x: f64[2, 2, 5, 5], %w: f64[3, 2, 3, 3]) {
  %y = prims.convolution(%x, %w) {dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [1, 1], stride = [2, 2], transposed = false}
  return %y
})"));
  out.push_back(graph("convolution_strided_even_input", R"((%x: f64[2, 2, 6, 6], %w: f64[3, 2, 3, 3]) {
  %y = prims.convolution(%x, %w) {dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [1, 1], stride = [2, 2], transposed = false}
  return %y
})"));
  out.push_back(graph("convolution_1x1_strided", R"((%x: f64[2, 2, 6, 6], %w: f64[3, 2, 1, 1]) {
  %y = prims.convolution(%x, %w) {dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [0, 0], stride = [2, 2], transposed = false}
  return %y
})"));
  out.push_back(graph("convolution_grouped_dilated", R"((%x: f64[1, 4, 7, 6], %w: f64[4, 2, 2, 3]) {
  %y = prims.convolution(%x, %w) {dilation = [2, 1], groups = 2, output_padding = [0, 0], padding = [1, 0], stride = [1, 2], transposed = false}
  return %y
})"));
  out.push_back(graph("convolution_transposed", R"((%x: f64[1, 2, 3, 3], %w: f64[2, 3, 3, 3]) {
  %y = prims.convolution(%x, %w) {dilation = [1, 1], groups = 1, output_padding = [1, 1], padding = [1, 1], stride = [2, 2], transposed = true}
  return %y
})"));
  out.push_back(graph("convolution_1d", R"((%x: f64[2, 3, 8], %w: f64[4, 3, 3]) {
  %y = prims.convolution(%x, %w) {dilation = [1], groups = 1, output_padding = [0], padding = [1], stride = [1], transposed = false}
  return %y
})"));
  const std::string qkv = "%q: f64[1, 2, 3, 4], %k: f64[1, 2, 5, 4], %v: f64[1, 2, 5, 3]";
  out.push_back(graph("sdpa", "(" + qkv + R"() {
  %o, %l = prims.sdpa(%q, %k, %v, none)
  return %o
})"));
  out.push_back(graph("sdpa_causal_with_logsumexp", "(" + qkv + R"() {
  %o, %l = prims.sdpa(%q, %k, %v, none) {is_causal = true, scale = 0.3}
  return %o, %l
})"));
  {
    GradcheckOptions o;  // a fully masked row in each head: zeros out, zero gradients
    o.fixed[3] = {1, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1};
    out.push_back(graph("sdpa_bool_mask", "(" + qkv + R"(, %m: bool[1, 2, 3, 5]) {
  %o, %l = prims.sdpa(%q, %k, %v, %m)
  return %o, %l
})",
                        o));
  }
  out.push_back(graph("sdpa_float_mask_gets_its_gradient", "(" + qkv + R"(, %m: f64[1, 2, 3, 5]) {
  %o, %l = prims.sdpa(%q, %k, %v, %m)
  return %o
})"));
  out.push_back(graph("sdpa_dropout", "(" + qkv + R"() {
  %o, %l = prims.sdpa(%q, %k, %v, none) {dropout_p = 0.3, seed = 11}
  return %o
})"));
  // Attention's double backward: out and the logsumexp come from the forward, as the prim asks.
  out.push_back(graph("sdpa_backward_causal", "(" + qkv + R"(, %g: f64[1, 2, 3, 3]) {
  %o, %l = prims.sdpa(%q, %k, %v, none) {is_causal = true}
  %dq, %dk, %dv = prims.sdpa_backward(%g, %q, %k, %v, %o, %l, none) {is_causal = true}
  return %dq, %dk, %dv
})"));
  return out;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class VjpRule : public ::testing::TestWithParam<Case> {};

TEST_P(VjpRule, MatchesFiniteDifferences) {
  const Case& c = GetParam();
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, "graph @g" + c.body);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto r = gradcheck(ctx, *g, c.options);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_TRUE(r->ok) << r->failure;
  EXPECT_GT(r->checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Prims, VjpRule, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

TEST(VjpTable, EveryPrimHasAnEntryAndEveryRuleACase) {
  auto ctx = ir::makeDefaultContext();
  VjpTable table = makeVjpTable();
  std::string all;
  for (const Case& c : cases()) all += c.body;
  int prims = 0;
  for (const ir::OpDef* def : ctx->ops.all()) {
    const std::string& name = def->schema.name;
    if (!prims::isPrim(name)) continue;
    ++prims;
    const VjpEntry* e = table.find(name);
    ASSERT_NE(e, nullptr) << name << " has no VJP entry";
    EXPECT_TRUE(e->rule || !e->nonDifferentiable.empty()) << name;
    EXPECT_NE(all.find(name + "("), std::string::npos) << name << " has no finite-difference case";
  }
  EXPECT_EQ(static_cast<size_t>(prims), table.prims().size()) << "an entry for something that is not a prim";
}

TEST(VjpTable, AGradientIsCheckedNotAssumed) {
  // The harness must fail a wrong rule: sin with cos's derivative.
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, "graph @g(%x: f64[2, 3]) {\n  %y = prims.sin(%x)\n  return %y\n}");
  ASSERT_TRUE(g.isOk());
  VjpTable wrong = makeVjpTable();
  wrong.add("prims.sin", [](Emitter& e, const VjpCall& c) -> StatusOr<std::vector<V>> {
    return std::vector<V>{e.mul(c.cotangent(), e.unary("neg", e.unary("sin", c.input(0))))};
  });
  GradcheckOptions o;
  o.table = &wrong;
  auto bad = gradcheck(ctx, *g, o);
  ASSERT_TRUE(bad.isOk()) << bad.status().toString();
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->failure.find("d/d%x["), std::string::npos) << bad->failure;
  auto good = gradcheck(ctx, *g);
  ASSERT_TRUE(good.isOk());
  EXPECT_TRUE(good->ok) << good->failure;
}

TEST(VjpTable, ScatterWithAProductReductionHasNoRuleAndSaysSo) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, R"(graph @g(%a: f64[3, 4], %i: i64[2, 4], %s: f64[2, 4]) {
  %y = prims.scatter(%a, %i, %s) {dim = 0, reduce = "prod"}
  return %y
})");
  ASSERT_TRUE(g.isOk());
  auto j = buildJoint(*ctx, *g, JointSpec{{true, false, true}, {}}, makeVjpTable());
  ASSERT_FALSE(j.isOk());
  EXPECT_NE(j.status().message().find("reduce=\"prod\" has no gradient rule"), std::string::npos)
      << j.status().toString();
  EXPECT_NE(j.status().toString().find("prims.scatter"), std::string::npos) << j.status().toString();
}

}  // namespace
}  // namespace plugsdk::autograd
