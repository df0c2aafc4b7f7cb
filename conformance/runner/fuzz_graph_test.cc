// The generator against the core: every generated graph parses and verifies (its written
// types agree with the core's inference), uses only claimed dtypes, is deterministic, covers
// the vocabulary the fuzzer promises, and runs on the reference executor to finite outputs.
#include "conformance/runner/fuzz_graph.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "conformance/runner/check.h"
#include "core/exec/reference_executor.h"
#include "core/text/parser.h"

namespace plugsdk::conformance {
namespace {

const std::shared_ptr<const ir::Context>& ctx() {
  static const auto c = ir::makeDefaultContext();
  return c;
}

plugin::DeviceCaps allDtypes() {
  plugin::DeviceCaps caps;
  caps.dtypes = (1u << ir::kNumDTypes) - 1;
  return caps;
}

TEST(FuzzGraph, EveryGeneratedGraphParsesAndCoversTheVocabulary) {
  const plugin::DeviceCaps caps = allDtypes();
  std::map<std::string, int> ops;
  std::set<ir::DType> dtypes;
  int rejected = 0;
  for (uint64_t seed = 0; seed < 600; ++seed) {
    const std::string text = randomGraph(seed, caps);
    auto g = text::parseGraph(*ctx(), text);
    if (!g.isOk()) {
      if (++rejected <= 3) ADD_FAILURE() << "seed " << seed << ": " << g.status().toString() << "\n" << text;
      continue;
    }
    for (const auto& n : g->nodes()) {
      ops[n->op()]++;
      for (const ir::Value* v : n->outputs()) dtypes.insert(v->type().dtype);
    }
  }
  EXPECT_EQ(rejected, 0);
  for (const char* op : {"aten.add.Tensor",
                         "aten.mul.Tensor",
                         "aten.div.Tensor",
                         "aten.exp",
                         "aten.tanh",
                         "aten.permute",
                         "aten.transpose.int",
                         "aten.slice.Tensor",
                         "aten.expand",
                         "aten.reshape",
                         "aten.view",
                         "aten.select.int",
                         "aten.unsqueeze",
                         "aten.sum.dim_IntList",
                         "aten.mean.dim",
                         "aten.amax",
                         "aten.amin",
                         "aten._softmax",
                         "aten.where.self",
                         "aten.cat",
                         "aten.mm",
                         "aten.bmm",
                         "aten._to_copy"})
    EXPECT_GT(ops[op], 0) << op << " never generated";
  for (ir::DType t :
       {ir::DType::kF32, ir::DType::kF64, ir::DType::kF16, ir::DType::kBF16, ir::DType::kBool, ir::DType::kI64})
    EXPECT_TRUE(dtypes.count(t)) << ir::dtypeName(t) << " never produced";
}

TEST(FuzzGraph, UsesOnlyClaimedDtypesAndIsDeterministic) {
  plugin::DeviceCaps caps;
  caps.dtypes = 1u << static_cast<unsigned>(ir::DType::kF32);
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const std::string text = randomGraph(seed, caps);
    EXPECT_EQ(text, randomGraph(seed, caps));
    auto g = text::parseGraph(*ctx(), text);
    ASSERT_TRUE(g.isOk()) << g.status().toString() << "\n" << text;
    EXPECT_EQ(unclaimedDtype(caps, *g), std::nullopt) << text;
  }
  EXPECT_NE(randomGraph(1, caps), randomGraph(2, caps));
}

TEST(FuzzGraph, ReferenceOutputsAreFinite) {
  // the conditioning promise: no inf or NaN from exp, log, division or growth
  const plugin::DeviceCaps caps = allDtypes();
  const exec::ReferenceExecutor ref(ctx());
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const std::string text = randomGraph(seed, caps);
    auto g = text::parseGraph(*ctx(), text);
    ASSERT_TRUE(g.isOk()) << g.status().toString();
    auto out = ref.run(*g, randomInputs(*g, seed));
    ASSERT_TRUE(out.isOk()) << out.status().toString() << "\n" << text;
    for (const exec::HostTensor& t : *out)
      for (int64_t i = 0; i < t.numel(); ++i)
        ASSERT_TRUE(std::isfinite(t.getDouble(i))) << "seed " << seed << "\n" << text;
  }
}

}  // namespace
}  // namespace plugsdk::conformance
