// The prim-reduction pass itself: errors for ops without rules, declining rules, `keep`,
// and the output-type check that catches a wrong rule.
#include "core/decomp/decompose.h"

#include <gtest/gtest.h>

#include "core/prims/prims.h"
#include "core/text/parser.h"

namespace plugsdk::decomp {
namespace {

const char* kGraph = R"(graph @g(%x: f32[4, 8]) {
  %r = aten.relu(%x)
  %s = aten.sum.dim_IntList(%r) {dim = [1]}
  return %s
})";

TEST(Decompose, MissingRuleNamesTheOpAndTheFix) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kGraph);
  ASSERT_TRUE(g.isOk());
  DecompTable empty;
  auto r = decompose(*ctx, empty, *g);
  ASSERT_FALSE(r.isOk());
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("aten.relu has no decomposition into prims and is not a prim"), std::string::npos) << m;
  EXPECT_NE(m.find("line 2"), std::string::npos) << m;  // where in the file
  EXPECT_NE(m.find("add a decomposition rule for aten.relu"), std::string::npos) << m;
  EXPECT_NE(m.find("DecompOptions::keep"), std::string::npos) << m;
}

TEST(Decompose, DecliningRulesAreReportedWithTheirReasons) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kGraph);
  ASSERT_TRUE(g.isOk());
  DecompTable only;
  only.add("aten.relu", [](Emitter& e, const DecompCall&) -> StatusOr<std::vector<V>> {
    return e.decline("this backend's relu needs f64");
  });
  auto r = decompose(*ctx, only, *g);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("no decomposition rule for aten.relu handles this call (this backend's relu "
                                      "needs f64)"),
            std::string::npos)
      << r.status().toString();
}

TEST(Decompose, KeepLeavesAnOpWhole) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kGraph);
  ASSERT_TRUE(g.isOk());
  DecompOptions o;
  o.keep = {"aten.relu"};
  auto r = decompose(*ctx, makeDefaultDecompositions(), *g, o);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  int relu = 0, nonPrim = 0;
  for (const auto& n : r->nodes()) {
    relu += n->op() == "aten.relu";
    nonPrim += !prims::isPrim(n->op());
  }
  EXPECT_EQ(relu, 1);
  EXPECT_EQ(nonPrim, 1);
}

/// The prims.matmul nodes of `text` decomposed with `o`, as "operand dtype -> result dtype".
std::vector<std::string> matmulsOf(const char* text, const DecompOptions& o) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, text);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  if (!g.isOk()) return {};
  auto r = decompose(*ctx, makeDefaultDecompositions(), *g, o);
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  if (!r.isOk()) return {};
  std::vector<std::string> out;
  for (const auto& n : r->nodes())
    if (n->op() == "prims.matmul")
      out.push_back(std::string(ir::dtypeName(n->inputs()[0]->type().dtype)) + " -> " +
                    std::string(ir::dtypeName(n->outputs()[0]->type().dtype)));
  return out;
}

TEST(Decompose, AttentionOverMatmulKeepsHalfOperandsWhenTheDeviceTakesAnF32Result) {
  const char* sdpa = R"(graph @g(%q: bf16[2, 8, 16], %k: bf16[2, 8, 16], %v: bf16[2, 8, 16]) {
  %o, %l = prims.sdpa(%q, %k, %v, none)
  return %o, %l
})";
  DecompOptions o;
  o.expand = {"prims.sdpa"};
  // Scores from bf16 operands into f32 (exact logsumexp), weights rounded to bf16 for v.
  EXPECT_EQ(matmulsOf(sdpa, o), (std::vector<std::string>{"bf16 -> f32", "bf16 -> bf16"}));
  o.mixedMatmul = false;  // an ABI 1.0/1.1 device: every product in f32
  EXPECT_EQ(matmulsOf(sdpa, o), (std::vector<std::string>{"f32 -> f32", "f32 -> f32"}));
  // A mixed matmul in the input on such a device becomes loops; kept where it is taken.
  const char* mixed = R"(graph @g(%a: f16[4, 8], %b: f16[8, 3]) {
  %y = prims.matmul(%a, %b) {dtype = f32}
  return %y
})";
  EXPECT_TRUE(matmulsOf(mixed, o).empty());
  o.mixedMatmul = true;
  EXPECT_EQ(matmulsOf(mixed, o), (std::vector<std::string>{"f16 -> f32"}));
}

TEST(Decompose, MatmulResultDtypeIsTheOperandsOrF32ForHalves) {
  auto ctx = ir::makeDefaultContext();
  for (const char* bad : {"%a: f32[4, 8], %b: f32[8, 3]) {\n  %y = prims.matmul(%a, %b) {dtype = f64}",
                          "%a: f16[4, 8], %b: f16[8, 3]) {\n  %y = prims.matmul(%a, %b) {dtype = bf16}",
                          "%a: i32[4, 8], %b: i32[8, 3]) {\n  %y = prims.matmul(%a, %b) {dtype = f32}"}) {
    auto g = text::parseGraph(*ctx, std::string("graph @g(") + bad + "\n  return %y\n}");
    ASSERT_FALSE(g.isOk()) << bad;
    EXPECT_NE(g.status().message().find("dtype must be the operands' dtype, or f32 for f16/bf16 operands"),
              std::string::npos)
        << g.status().toString();
  }
}

TEST(Decompose, WrongOutputTypeFromARuleIsAnInternalError) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kGraph);
  ASSERT_TRUE(g.isOk());
  DecompTable t;
  t.add("aten.relu", [](Emitter& e, const DecompCall& c) -> StatusOr<std::vector<V>> {
    return e.done({e.convert(c.input(0), ir::DType::kF64)});  // wrong dtype on purpose
  });
  auto r = decompose(*ctx, t, *g);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("produced f64[4, 8] for output 0, its inference says f32[4, 8]"),
            std::string::npos)
      << r.status().toString();
}

TEST(Decompose, EveryRegisteredAtenOpHasARule) {
  auto ctx = ir::makeDefaultContext();
  DecompTable t = makeDefaultDecompositions();
  std::vector<std::string> missing;
  for (const ir::OpDef* d : ctx->ops.all())
    if (!prims::isPrim(d->schema.name) && !t.find(d->schema.name)) missing.push_back(d->schema.name);
  EXPECT_TRUE(missing.empty()) << "ops without a decomposition: " << missing.size();
}

}  // namespace
}  // namespace plugsdk::decomp
