// Specializing a captured graph: symbols replaced in types and attributes, output types
// inferred again, and a graph that cannot take the new types fails naming the node.
#include "core/ir/specialize.h"

#include <gtest/gtest.h>

#include "core/text/parser.h"
#include "core/text/printer.h"

namespace plugsdk::ir {
namespace {

TEST(SpecializeGraph, ReplacesSymbolsAndInfersTypesAgain) {
  auto ctx = makeDefaultContext();
  auto g = text::parseGraph(*ctx, R"(graph @f(%x: f32[s0, 8]) {
  %r = aten.relu(%x)
  %v = aten.view(%r) {size = [s0, 2, 4]}
  return %v
})");
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto s = specializeGraph(*ctx, *g, {TensorType{DType::kF64, {3, 8}, std::nullopt}}, {{"s0", SymExpr(3)}});
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  EXPECT_EQ(s->outputs()[0]->type().toString(), "f64[3, 2, 4]");
  EXPECT_EQ(s->nodes()[1]->attr("size")->toString(), "[3, 2, 4]");
  // Keeping the symbol keeps the graph symbolic.
  auto k = specializeGraph(*ctx, *g, {TensorType{DType::kF32, {SymExpr::symbol("s0"), 8}, std::nullopt}}, {});
  ASSERT_TRUE(k.isOk()) << k.status().toString();
  EXPECT_TRUE(k->equals(*g));
}

TEST(SpecializeGraph, FailsNamingTheNodeThatCannotTakeTheTypes) {
  auto ctx = makeDefaultContext();
  auto g = text::parseGraph(*ctx, R"(graph @f(%x: f32[4, 8]) {
  %v = aten.view(%x) {size = [32]}
  return %v
})");
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto s = specializeGraph(*ctx, *g, {TensorType{DType::kF32, {2, 8}, std::nullopt}}, {});
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.status().message().find("aten.view"), std::string::npos) << s.status().toString();
  auto n = specializeGraph(*ctx, *g, {}, {});
  ASSERT_FALSE(n.isOk());
  EXPECT_NE(n.status().message().find("0 input types for 1 inputs"), std::string::npos) << n.status().toString();
}

}  // namespace
}  // namespace plugsdk::ir
