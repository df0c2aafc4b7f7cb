// The prim-reduction pass itself: errors for ops without rules, declining rules, `keep`,
// and the output-type check that catches a wrong rule.
#include "core/decomp/decompose.h"

#include <gtest/gtest.h>

#include <functional>

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

/// The `op` nodes of `text` left whole by decomposing with `o` (whose outputs keep their
/// types), each as `describe` gives it, in order.
std::vector<std::string> keptNodes(const char* text, const DecompOptions& o, const std::string& op,
                                   const std::function<std::string(const ir::Node&)>& describe) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, text);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  if (!g.isOk()) return {};
  auto r = decompose(*ctx, makeDefaultDecompositions(), *g, o);
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  if (!r.isOk()) return {};
  for (size_t i = 0; i < g->outputs().size(); ++i)
    EXPECT_EQ(r->outputs()[i]->type().toString(), g->outputs()[i]->type().toString()) << "output " << i;
  std::vector<std::string> out;
  for (const auto& n : r->nodes())
    if (n->op() == op) out.push_back(describe(*n));
  return out;
}

/// The prims.matmul nodes of `text` decomposed with `o`, as "operand dtype -> result dtype".
std::vector<std::string> matmulsOf(const char* text, const DecompOptions& o) {
  return keptNodes(text, o, "prims.matmul", [](const ir::Node& n) {
    return std::string(ir::dtypeName(n.inputs()[0]->type().dtype)) + " -> " +
           std::string(ir::dtypeName(n.outputs()[0]->type().dtype));
  });
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

/// The prims.convolution nodes of `text` left whole by decomposing with `o`, as their input
/// dtype (" transposed" appended for a transposed one), in order.
std::vector<std::string> convolutionsOf(const char* text, const DecompOptions& o) {
  return keptNodes(text, o, "prims.convolution", [](const ir::Node& n) {
    auto t = n.attrs().find("transposed");
    const bool transposed = t != n.attrs().end() && t->second.asBool().value_or(false);
    return std::string(ir::dtypeName(n.inputs()[0]->type().dtype)) + (transposed ? " transposed" : "");
  });
}

// A device whose library takes some forms of prims.convolution (ABI 1.4 convolution_dtypes and
// convolution_skips_transposed): those stay whole, the others become loops -- prims in the
// input graph (decompose's loop) and prims emitted by aten.convolution's rule (the Emitter).
TEST(Decompose, ConvolutionKeepsOnlyTheFormsTheDeviceTakes) {
  const char* convs =
      R"(graph @g(%x: bf16[1, 3, 8, 8], %w: bf16[4, 3, 3, 3], %xd: f64[1, 3, 8, 8], %wd: f64[4, 3, 3, 3],
    %xt: f32[1, 4, 5, 5], %wt: f32[4, 3, 3, 3]) {
  %a = prims.convolution(%x, %w) {dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [1, 1], stride = [1, 1], transposed = false}
  %b = prims.convolution(%xd, %wd) {dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [1, 1], stride = [1, 1], transposed = false}
  %c = prims.convolution(%xt, %wt) {dilation = [1, 1], groups = 1, output_padding = [1, 1], padding = [1, 1], stride = [2, 2], transposed = true}
  %d = aten.convolution(%xd, %wd, none) {stride = [2, 2], padding = [0, 0], dilation = [1, 1], transposed = false, output_padding = [0, 0], groups = 1}
  %e = aten.convolution(%x, %w, none) {stride = [2, 2], padding = [0, 0], dilation = [1, 1], transposed = false, output_padding = [0, 0], groups = 1}
  return %a, %b, %c, %d, %e
})";
  DecompOptions o;  // every form
  EXPECT_EQ(convolutionsOf(convs, o), (std::vector<std::string>{"bf16", "f64", "f32 transposed", "f64", "bf16"}));
  o.convolutionDtypes = {ir::DType::kBF16, ir::DType::kF16, ir::DType::kF32};
  o.convolutionTransposed = false;
  // The transposed f32 one becomes a plain convolution of its dilated, padded input by the
  // flipped weight, which the device takes.
  EXPECT_EQ(convolutionsOf(convs, o), (std::vector<std::string>{"bf16", "f32", "bf16"}));
  o.convolutionTransposed = true;
  EXPECT_EQ(convolutionsOf(convs, o), (std::vector<std::string>{"bf16", "f32 transposed", "bf16"}));
  o.convolutionDtypes = {ir::DType::kF64};
  EXPECT_EQ(convolutionsOf(convs, o), (std::vector<std::string>{"f64", "f64"}));
  // `expand` still wins: no form is kept.
  o.expand = {"prims.convolution"};
  EXPECT_TRUE(convolutionsOf(convs, o).empty());
}

// A device whose library takes prims.matmul for some operand dtypes (ABI 1.6 matmul_dtypes):
// those stay whole, the others become loops -- prims in the input graph and prims emitted by
// aten.mm's rule (the Emitter) alike.
TEST(Decompose, MatmulKeepsOnlyTheDtypesTheDeviceTakes) {
  const char* mms =
      R"(graph @g(%a: f32[4, 8], %b: f32[8, 3], %c: f64[4, 8], %d: f64[8, 3], %h: f16[4, 8], %i: f16[8, 3], %e: f64[2, 8]) {
  %x = prims.matmul(%a, %b)
  %y = prims.matmul(%c, %d)
  %z = aten.mm(%e, %d)
  %w = prims.matmul(%h, %i) {dtype = f32}
  return %x, %y, %z, %w
})";
  DecompOptions o;  // every dtype
  EXPECT_EQ(matmulsOf(mms, o), (std::vector<std::string>{"f32 -> f32", "f64 -> f64", "f64 -> f64", "f16 -> f32"}));
  o.matmulDtypes = {ir::DType::kF32};
  EXPECT_EQ(matmulsOf(mms, o), (std::vector<std::string>{"f32 -> f32"}));
  o.matmulDtypes = {ir::DType::kF64, ir::DType::kF16};
  EXPECT_EQ(matmulsOf(mms, o), (std::vector<std::string>{"f64 -> f64", "f64 -> f64", "f16 -> f32"}));
  o.mixedMatmul = false;  // f16 taken, but not with an f32 result
  EXPECT_EQ(matmulsOf(mms, o), (std::vector<std::string>{"f64 -> f64", "f64 -> f64"}));
  // `expand` still wins: none is kept.
  o.expand = {"prims.matmul"};
  EXPECT_TRUE(matmulsOf(mms, o).empty());
}

/// The prims.sdpa nodes of `text` left whole by decomposing with `o`, each as
/// "<dtype> e<E> ev<Ev>" plus " causal", " bool mask", " float mask", " dropout".
std::vector<std::string> attentionsOf(const char* text, const DecompOptions& o) {
  return keptNodes(text, o, "prims.sdpa", [](const ir::Node& n) {
    const ir::TensorType &q = n.inputs()[0]->type(), &v = n.inputs()[2]->type();
    std::string d =
        std::string(ir::dtypeName(q.dtype)) + " e" + q.shape.back().toString() + " ev" + v.shape.back().toString();
    const ir::AttrReader a(n.def()->schema, n.attrs());
    if (a.getBool("is_causal")) d += " causal";
    if (n.inputs().size() > 3 && n.inputs()[3])
      d += n.inputs()[3]->type().dtype == ir::DType::kBool ? " bool mask" : " float mask";
    if (a.getFloat("dropout_p") > 0) d += " dropout";
    return d;
  });
}

// A device whose library takes some forms of prims.sdpa (ABI 1.7 sdpa_dtypes, sdpa_skips,
// sdpa_head_dim_max / _multiple): those stay whole, the others become matmuls and a softmax.
TEST(Decompose, AttentionKeepsOnlyTheFormsTheDeviceTakes) {
  const char* calls =
      R"(graph @g(%q: bf16[2, 4, 16, 64], %k: bf16[2, 4, 16, 64], %v: bf16[2, 4, 16, 64], %v2: bf16[2, 4, 16, 32], %mb: bool[2, 4, 16, 16], %mf: bf16[2, 4, 16, 16], %qf: f32[2, 16, 64], %kf: f32[2, 16, 64], %vf: f32[2, 16, 64], %q8: bf16[2, 16, 80], %k8: bf16[2, 16, 80], %v8: bf16[2, 16, 80]) {
  %o1, %l1 = prims.sdpa(%q, %k, %v, none)
  %o2, %l2 = prims.sdpa(%q, %k, %v, none) {is_causal = true}
  %o3, %l3 = prims.sdpa(%q, %k, %v, %mb)
  %o4, %l4 = prims.sdpa(%q, %k, %v, %mf)
  %o5, %l5 = prims.sdpa(%q, %k, %v, none) {dropout_p = 0.25}
  %o6, %l6 = prims.sdpa(%q, %k, %v2, none)
  %o7, %l7 = prims.sdpa(%qf, %kf, %vf, none)
  %o8, %l8 = prims.sdpa(%q8, %k8, %v8, none)
  return %o1, %l1, %o2, %l2, %o3, %l3, %o4, %l4, %o5, %l5, %o6, %l6, %o7, %l7, %o8, %l8
})";
  DecompOptions o;  // every form
  EXPECT_EQ(attentionsOf(calls, o),
            (std::vector<std::string>{"bf16 e64 ev64", "bf16 e64 ev64 causal", "bf16 e64 ev64 bool mask",
                                      "bf16 e64 ev64 float mask", "bf16 e64 ev64 dropout", "bf16 e64 ev32",
                                      "f32 e64 ev64", "bf16 e80 ev80"}));
  // A device taking f16/bf16, no mask, no dropout, head dims <= 128 in multiples of 8.
  o.sdpa.dtypes = {ir::DType::kF16, ir::DType::kBF16};
  o.sdpa.boolMask = o.sdpa.floatMask = o.sdpa.dropout = false;
  o.sdpa.headDimMax = 128;
  o.sdpa.headDimMultiple = 8;
  EXPECT_EQ(attentionsOf(calls, o),
            (std::vector<std::string>{"bf16 e64 ev64", "bf16 e64 ev64 causal", "bf16 e64 ev32", "bf16 e80 ev80"}));
  o.sdpa.causal = o.sdpa.unequalHeadDims = false;
  o.sdpa.headDimMax = 64;
  EXPECT_EQ(attentionsOf(calls, o), (std::vector<std::string>{"bf16 e64 ev64"}));
  o.sdpa.headDimMax = 0;
  o.sdpa.headDimMultiple = 16;  // 80 is a multiple of 16, not of 32
  EXPECT_EQ(attentionsOf(calls, o), (std::vector<std::string>{"bf16 e64 ev64", "bf16 e80 ev80"}));
  o.sdpa.headDimMultiple = 32;
  EXPECT_EQ(attentionsOf(calls, o), (std::vector<std::string>{"bf16 e64 ev64"}));
  // `expand` still wins: none is kept.
  o.expand = {"prims.sdpa"};
  EXPECT_TRUE(attentionsOf(calls, o).empty());
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
