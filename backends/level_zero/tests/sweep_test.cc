// Every kernel of real programs through the SPIR-V lowering: the graphs of the conformance
// models, the fusion goldens and the prim goldens are scheduled by the core's pipeline for a
// device without library ops (matmul, convolution and attention expanded into loops), fused
// and unfused, and each kernel must validate (OpenCL 2.0) or be a clean UNIMPLEMENTED, which
// is counted and printed with its reason.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "backends/level_zero/tests/spirv_test_util.h"
#include "core/compile/pipeline.h"
#include "core/text/parser.h"

namespace plugsdk::level_zero::spirv {
namespace {

std::vector<std::string> graphFiles() {
  namespace fs = std::filesystem;
  const fs::path root(PLUGSDK_SOURCE_DIR);
  std::vector<std::string> out;
  for (const char* dir : {"conformance/models", "core/golden/program", "core/golden/prims"}) {
    if (!fs::exists(root / dir)) continue;
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(root / dir))
      if (e.is_regular_file() && e.path().extension() == ".pgraph") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(SpirvSweep, EveryKernelOfScheduledGraphsValidates) {
  std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  const std::vector<std::string> files = graphFiles();
  ASSERT_GE(files.size(), 40u) << "the graphs moved?";
  int graphs = 0, kernels = 0, validated = 0, skippedGraphs = 0, universal = 0;
  std::map<std::string, int> unimplemented;  // reason -> count
  std::vector<std::string> invalid;
  for (const std::string& file : files) {
    StatusOr<ir::Graph> g = text::parseGraphFile(*ctx, file);
    if (!g.isOk()) {  // e.g. a golden that is an error case
      ++skippedGraphs;
      continue;
    }
    for (bool fuse : {true, false}) {
      compile::CompileOptions o;
      o.decomp.expand = {"prims.matmul", "prims.convolution", "prims.sdpa"};
      o.schedule.caps.fuse = fuse;
      StatusOr<compile::Compiled> c = compile::compileGraph(*ctx, *g, o);
      if (!c.isOk()) {
        ++skippedGraphs;
        continue;
      }
      ++graphs;
      for (const kernel::Kernel& k : c->program.kernels) {
        ++kernels;
        StatusOr<std::unique_ptr<plugin::EncodedKernel>> e = plugin::encodeKernel(k);
        ASSERT_TRUE(e.isOk()) << file << ": " << e.status().message();
        ASSERT_TRUE(sdk::KernelView::validate((*e)->get()).isOk());
        const sdk::KernelView view((*e)->get());
        sdk::StatusOr<SpirvKernel> s = compileKernel(view, std::string(view.name()));
        if (s.isOk()) {
          ++validated;
          universal += effectiveEnv(s->words, TargetEnv::kOpenCL2_0) != TargetEnv::kOpenCL2_0;
        } else if (s.status().code() == sdk::Code::kUnimplemented) {
          const std::string& m = s.status().message();
          const size_t colon = m.find(": ", m.find("statement"));
          ++unimplemented[colon == std::string::npos ? m : m.substr(colon + 2)];
        } else {
          invalid.push_back(file + (fuse ? "" : " (unfused)") + ": " + s.status().message().substr(0, 4000));
        }
      }
    }
  }
  int unimpl = 0;
  for (const auto& [why, n] : unimplemented) unimpl += n;
  std::printf(
      "sweep: %zu graph files, %d programs, %d kernels: %d validated, %d UNIMPLEMENTED, %zu invalid "
      "(%d programs not compiled)\n",
      files.size(), graphs, kernels, validated, unimpl, invalid.size(), skippedGraphs);
  std::printf("  %d of the validated modules declare Int64Atomics (validated in the universal 1.0 environment)\n",
              universal);
  for (const auto& [why, n] : unimplemented) std::printf("  UNIMPLEMENTED x%d: %s\n", n, why.c_str());
  for (const std::string& m : invalid) ADD_FAILURE() << m;
  EXPECT_GE(kernels, 200);
  EXPECT_EQ(validated + unimpl, kernels);
  EXPECT_EQ(unimpl, 0) << "every kernel of these graphs should lower";
}

}  // namespace
}  // namespace plugsdk::level_zero::spirv
