// ABI 1.7's sdpa_dtypes, sdpa_skips and sdpa_head_dim_max / _multiple, read by the core: a
// plugin that takes some forms of prims.sdpa says so in device_info; capsFrom() reads them
// only from a struct that has them (an older plugin takes every form), and optionsFor() turns
// them into the decomposition's SdpaForms, so the other calls are expanded into matmuls and a
// softmax while the taken ones stay library calls.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/compile/pipeline.h"
#include "core/plugin/device_program.h"
#include "core/text/parser.h"

namespace plugsdk::plugin {
namespace {

using ir::DType;

plugsdk_device_info_t sdpaInfo() {
  plugsdk_device_info_t info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  info.dtypes = (1u << (PLUGSDK_DTYPE_F64 + 1)) - 1;
  info.library_ops = PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_SDPA;
  info.sdpa_dtypes = PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F16) | PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_BF16);
  info.sdpa_skips = PLUGSDK_SDPA_SKIPS_BOOL_MASK | PLUGSDK_SDPA_SKIPS_FLOAT_MASK | PLUGSDK_SDPA_SKIPS_DROPOUT;
  info.sdpa_head_dim_max = 128;
  info.sdpa_head_dim_multiple = 8;
  return info;
}

TEST(SdpaForms, TheInfoReachesTheDecomposition) {
  const DeviceCaps k = capsFrom(sdpaInfo());
  EXPECT_EQ(k.sdpaDtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F16) | PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_BF16));
  const compile::CompileOptions o = optionsFor(k);
  const decomp::DecompOptions::SdpaForms& f = o.decomp.sdpa;
  EXPECT_EQ(f.dtypes, (std::vector<DType>{DType::kF16, DType::kBF16}));
  EXPECT_FALSE(f.boolMask);
  EXPECT_FALSE(f.floatMask);
  EXPECT_FALSE(f.dropout);
  EXPECT_TRUE(f.causal);
  EXPECT_TRUE(f.unequalHeadDims);
  EXPECT_EQ(f.headDimMax, 128);
  EXPECT_EQ(f.headDimMultiple, 8);
  EXPECT_EQ(o.decomp.expand.count("prims.sdpa"), 0u);
  plugsdk_device_info_t every = sdpaInfo();
  every.sdpa_dtypes = every.sdpa_skips = every.sdpa_head_dim_max = every.sdpa_head_dim_multiple = 0;
  const compile::CompileOptions all = optionsFor(capsFrom(every));
  EXPECT_TRUE(all.decomp.sdpa == decomp::DecompOptions::SdpaForms{});
  EXPECT_NE(compile::optionsFingerprint(o), compile::optionsFingerprint(all));
}

// The core reads the 1.7 fields only from a struct that has them: an older plugin's
// device_info, with whatever lies past its struct_size, takes every form.
TEST(SdpaForms, AnOlderPluginsInfoTakesEveryForm) {
  plugsdk_device_info_t info = sdpaInfo();
  for (size_t older : {PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, takes_subgraphs),  // 1.0
                       PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, matmul_dtypes),    // 1.6
                       PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, sdpa_head_dim_multiple) - 1}) {
    info.struct_size = older;
    const DeviceCaps k = capsFrom(info);
    EXPECT_EQ(k.sdpaDtypes, 0u) << older;
    EXPECT_EQ(k.sdpaSkips, 0u) << older;
    EXPECT_TRUE(optionsFor(k).decomp.sdpa == decomp::DecompOptions::SdpaForms{}) << older;
  }
}

// Compiled with those caps, an f32 attention and a masked bf16 one become matmuls; a bf16
// one without a mask stays one prims.sdpa library call.
TEST(SdpaForms, TakenFormsStayCallsOthersBecomeMatmuls) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(
      *ctx,
      R"(graph @g(%q: bf16[2, 4, 16, 64], %k: bf16[2, 4, 16, 64], %v: bf16[2, 4, 16, 64], %m: bool[2, 4, 16, 16], %qf: f32[2, 16, 64], %kf: f32[2, 16, 64], %vf: f32[2, 16, 64]) {
  %o1, %l1 = prims.sdpa(%q, %k, %v, none) {is_causal = true}
  %o2, %l2 = prims.sdpa(%q, %k, %v, %m)
  %o3, %l3 = prims.sdpa(%qf, %kf, %vf, none)
  return %o1, %l1, %o2, %l2, %o3, %l3
})");
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto c = compile::compileGraph(*ctx, *g, optionsFor(capsFrom(sdpaInfo())));
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  int sdpa = 0, matmul = 0;
  for (const sched::Step& s : c->program.steps) {
    if (s.kind != sched::Step::Kind::kCall) continue;
    sdpa += s.call.op == "prims.sdpa";
    matmul += s.call.op == "prims.matmul";
  }
  EXPECT_EQ(sdpa, 1);
  EXPECT_EQ(matmul, 4);
}

}  // namespace
}  // namespace plugsdk::plugin
