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
