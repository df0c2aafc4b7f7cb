// Round-trip and error tests for the .pgraph parser and printer, on a small local op set
// (so they do not depend on the ATen op tables).
#include <gtest/gtest.h>

#include "core/ir/shape_rules.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

namespace plugsdk::text {
namespace {

using ir::TensorType;

std::shared_ptr<ir::Context> testContext() {
  auto ctx = std::make_shared<ir::Context>();
  auto binary = [](const ir::InferContext& c) -> StatusOr<std::vector<TensorType>> {
    ASSIGN_OR_RETURN(auto shape, ir::broadcastShapes(c.input(0)->shape, c.input(1)->shape, c.assumptions()));
    return std::vector<TensorType>{{c.input(0)->dtype, shape, std::nullopt}};
  };
  EXPECT_TRUE(ctx->ops.add("t.add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", binary, "test").isOk());
  EXPECT_TRUE(ctx->ops
                  .add(
                      "t.view(Tensor self, SymInt[] size) -> Tensor",
                      [](const ir::InferContext& c) -> StatusOr<std::vector<TensorType>> {
                        auto size = c.getSyms("size");
                        RETURN_IF_ERROR(
                            ir::checkSameSize(c.input(0)->numel(), ir::numelOf(size), "view: element count"));
                        return std::vector<TensorType>{{c.input(0)->dtype, size, std::nullopt}};
                      },
                      "test")
                  .isOk());
  EXPECT_TRUE(
      ctx->ops
          .add(
              "t.split2(Tensor self, float eps=1e-05, str mode=\"a\", ScalarType? dtype=None) -> (Tensor, Tensor)",
              [](const ir::InferContext& c) -> StatusOr<std::vector<TensorType>> {
                TensorType t = *c.input(0);
                if (!c.isNone("dtype")) t.dtype = c.getDType("dtype");
                return std::vector<TensorType>{t, t};
              },
              "test")
          .isOk());
  EXPECT_TRUE(ctx->ops
                  .add(
                      "t.opt(Tensor self, Tensor? w, float[] f=[]) -> Tensor",
                      [](const ir::InferContext& c) -> StatusOr<std::vector<TensorType>> {
                        return std::vector<TensorType>{*c.input(0)};
                      },
                      "test")
                  .isOk());
  return ctx;
}

const char* kCanonical =
    "graph @g(%x: f32[s0, 4], %y: f32[4], %z: f16[2, 3] strides [1, 2]) {\n"
    "  %0 = t.add(%x, %y) {alpha = 2} : f32[s0, 4]\n"
    "  %v = t.view(%0) {size = [2, 2*s0]} : f32[2, 2*s0]\n"
    "  %a, %b = t.split2(%z) {dtype = bf16, eps = 0.5, mode = \"q\\\"x\"} : bf16[2, 3], bf16[2, 3]\n"
    "  %o = t.opt(%x, none) {f = [0.5, inf, -2.0]} : f32[s0, 4]\n"
    "  %m = t.view(%x) {size = [s0*4 % 3, (s0+1)//2]} : f32[s0*4 % 3, (s0+1)//2]\n"
    "  return %v, %a, %o\n"
    "}\n";

TEST(Text, CanonicalFileRoundTripsByteForByte) {
  auto ctx = testContext();
  // The view to [s0*4 % 3, (s0+1)//2] cannot be proven element-preserving: drop that line here.
  std::string src = kCanonical;
  src.erase(src.find("  %m ="),
            std::string("  %m = t.view(%x) {size = [s0*4 % 3, (s0+1)//2]} : f32[s0*4 % 3, (s0+1)//2]\n").size());
  auto g = parseGraph(*ctx, src);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  EXPECT_EQ(printGraph(*g), src);
  auto g2 = parseGraph(*ctx, printGraph(*g));
  ASSERT_TRUE(g2.isOk()) << g2.status().toString();
  std::string why;
  EXPECT_TRUE(g->equals(*g2, &why)) << why;
}

TEST(Text, TypesAreInferredWhenOmittedAndDefaultsFilled) {
  auto ctx = testContext();
  auto g = parseGraph(*ctx, "graph @g(%x: f32[3]) {\n  %1 = t.add(%x, %x)\n  return %1\n}\n");
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  const auto& n = *g->nodes()[0];
  EXPECT_EQ(n.output()->type().toString(), "f32[3]");
  ASSERT_NE(n.attr("alpha"), nullptr);
  EXPECT_EQ(n.attr("alpha")->asInt(), 1);
  EXPECT_EQ(printGraph(*g), "graph @g(%x: f32[3]) {\n  %1 = t.add(%x, %x) : f32[3]\n  return %1\n}\n");
}

struct BadCase {
  const char* src;
  const char* expect;  // a substring of the error message
};

TEST(Text, BadInputGetsPositionedErrors) {
  auto ctx = testContext();
  const BadCase cases[] = {
      {"graph @g(%x: f32[3]) {\n  %1 = t.add(%x %x)\n  return %1\n}", "2:17: expected ')'"},
      {"graph @g(%x: f32[3]) {\n  %1 = t.nope(%x)\n  return %1\n}", "2:8: unknown op 't.nope'"},
      {"graph @g(%x: f32[3]) {\n  %1 = t.add(%x)\n  return %1\n}", "takes 2 tensor inputs, got 1"},
      {"graph @g(%x: f32[3]) {\n  %1 = t.add(%x, %y)\n  return %1\n}", "2:18: use of undefined value %y"},
      {"graph @g(%x: f32[3], %y: f32[4]) {\n  %1 = t.add(%x, %y)\n  return %1\n}", "do not broadcast"},
      {"graph @g(%x: f32[3]) {\n  %1 = t.add(%x, %x) : f32[4]\n  return %1\n}",
       "declared f32[4] but the op infers f32[3]"},
      {"graph @g(%x: f32[3]) {\n  %1 = t.add(%x, %x) {beta = 1}\n  return %1\n}", "unknown attribute 'beta'"},
      {"graph @g(%x: f32[3]) {\n  %1 = t.add(%x, %x) {alpha = \"a\"}\n  return %1\n}", "must be Scalar"},
      {"graph @g(%x: f32[s0]) {\n  %1 = t.view(%x) {size = [4]}\n  return %1\n}", "not provably equal"},
      {"graph @g(%x: f32[2]) {\n  %1 = t.view(%x) {size = [3]}\n  return %1\n}", "element count: 2 vs 3"},
      {"graph @g(%x: f32[3]) {\n  %1 = t.add(%x, %x)\n  %1 = t.add(%x, %x)\n  return %1\n}",
       "3:3: value %1 is defined twice"},
      {"graph @g(%x: f32[3]) {\n  %1 = t.add(%x, %1)\n  return %1\n}", "use of undefined value %1"},
      {"graph @g(%x: f32[3]) {\n  %1, %2 = t.add(%x, %x)\n  return %1\n}", "produces 1 output, but 2 names are bound"},
      {"graph @g(%x: f32[s0//0]) {\n  return %x\n}", "division by zero"},
      {"graph @g(%x: f99[3]) {\n  return %x\n}", "1:14: expected a dtype"},
      {"graph @g(%x: f32[99999999999999999999]) {\n  return %x\n}", "out of range"},
      {"graph @g(%x: f32[3]) {\n  %1 = t.add(%x, %x)\n", "expected 'return' before the end"},
      {"graph @g(%x: f32[3]) {\n  %1 = t.add(%x, %x) {alpha = \"abc\n", "unterminated string"},
      {"graph @g(%x: f32[3]) {\n  return %x\n} extra", "expected end of file"},
      {"graph @g(%x: f32[3]) \x01", "unexpected character"},
      {"graph @g(%x: f32[-2]) {\n  return %x\n}", "negative size"},
      {"graph @g(%x: f32[s0]) {\n  %1 = t.opt(%x, none) {f = [s0]}\n  return %1\n}", "must be float[]"},
      {"", "1:1: expected 'graph'"},
  };
  for (const auto& c : cases) {
    auto g = parseGraph(*ctx, c.src);
    ASSERT_FALSE(g.isOk()) << "accepted: " << c.src;
    EXPECT_NE(g.status().message().find(c.expect), std::string::npos)
        << "for input:\n"
        << c.src << "\nmessage: " << g.status().message() << "\nexpected to contain: " << c.expect;
  }
}

TEST(Text, DefaultOverloadNamesAreCanonicalized) {
  auto ctx = testContext();
  auto g = parseGraph(*ctx, "graph @g(%x: f32[3]) {\n  %1 = t.add.default(%x, %x)\n  return %1\n}\n");
  // t.add.default is not registered under that name, but its canonical form t.add is.
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  EXPECT_EQ(g->nodes()[0]->op(), "t.add");
}

TEST(Text, DeepNestingIsAnErrorNotACrash) {
  auto ctx = testContext();
  std::string deep =
      "graph @g(%x: f32[" + std::string(10000, '(') + "1" + std::string(10000, ')') + "]) {\n return %x\n}";
  auto g = parseGraph(*ctx, deep);
  ASSERT_FALSE(g.isOk());
  EXPECT_NE(g.status().message().find("nested too deeply"), std::string::npos);
}

TEST(Text, HugeSizeExpressionsAreBoundedNotExponential) {
  auto ctx = testContext();
  // Found by the fuzzer: a product of many symbols made the inequality prover expand 2^N terms.
  std::string product = "s0";
  for (int i = 1; i < 60; ++i) product += "*s" + std::to_string(i);
  auto g = parseGraph(*ctx, "graph @g(%x: f32[" + product + "], %y: f32[4]) {\n  %1 = t.add(%x, %y)\n  return %1\n}");
  ASSERT_FALSE(g.isOk());
  EXPECT_NE(g.status().message().find("do not broadcast"), std::string::npos) << g.status().message();
  // A product of sums would expand to 2^40 terms: refused while parsing.
  std::string sums = "(s0+1)";
  for (int i = 1; i < 40; ++i) sums += "*(s" + std::to_string(i) + "+1)";
  auto h = parseGraph(*ctx, "graph @g(%x: f32[" + sums + "]) {\n  return %x\n}");
  ASSERT_FALSE(h.isOk());
  EXPECT_NE(h.status().message().find("size expression too large"), std::string::npos) << h.status().message();
  // Each dim small, but their product (the element count) would have 2^30 terms.
  std::string dims = "s0+1";
  for (int i = 1; i < 30; ++i) dims += ", s" + std::to_string(i) + "+1";
  auto k = parseGraph(*ctx, "graph @g(%x: f32[" + dims + "]) {\n  return %x\n}");
  ASSERT_FALSE(k.isOk());
  EXPECT_NE(k.status().message().find("shape too complex"), std::string::npos) << k.status().message();
}

TEST(Text, SymExprTextRoundTrips) {
  for (const char* s : {"2*s0+1", "(s0+1)//2", "s0 % 4", "3*(s0//2)", "s0*s1-s2", "-s0+4", "s0*s0"}) {
    auto e = parseSymExpr(s);
    ASSERT_TRUE(e.isOk()) << s << ": " << e.status().toString();
    EXPECT_EQ(e->toString(), s);
    auto e2 = parseSymExpr(e->toString());
    ASSERT_TRUE(e2.isOk());
    EXPECT_EQ(*e, *e2);
  }
}

}  // namespace
}  // namespace plugsdk::text
