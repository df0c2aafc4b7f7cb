// Every kernel of real programs through the SPIR-V lowering: the graphs of the conformance
// models, the fusion goldens and the prim goldens are scheduled by the core's pipeline for a
// device without library ops (matmul, convolution and attention expanded into loops), fused
// and unfused, and each kernel must validate (OpenCL 2.0) or be a clean UNIMPLEMENTED, which
// is counted and printed with its reason. Every valid module then goes through the optimizer
// (optimize.h) and must validate again; PLUGSDK_SPIRV_OPT_SURVEY=1 also runs each of the
// optimizer's performance passes alone over every module and prints what it did (the
// measurement behind kernelPasses()).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "backends/level_zero/spirv/optimize.h"
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

/// Totals over modules: instructions, and loads / stores through Function variables (what
/// the consumer must promote to registers itself when the optimizer does not).
struct Shape {
  size_t words = 0, instructions = 0, variableLoads = 0, variableStores = 0, phis = 0;
  std::string text() const {
    return std::to_string(words) + " words, " + std::to_string(instructions) + " instructions, " +
           std::to_string(variableLoads) + " loads and " + std::to_string(variableStores) +
           " stores of Function variables, " + std::to_string(phis) + " phis";
  }
};

Shape shapeOf(const std::vector<std::pair<std::string, std::vector<uint32_t>>>& modules) {
  constexpr uint32_t kVariable = 59, kLoad = 61, kStore = 62, kPhi = 245, kFunctionStorage = 7;
  Shape s;
  for (const auto& [what, w] : modules) {
    s.words += w.size();
    std::set<uint32_t> vars;
    for (size_t at = 5; at < w.size() && (w[at] >> 16) > 0; at += w[at] >> 16) {
      const uint32_t op = w[at] & 0xffff;
      ++s.instructions;
      if (op == kVariable && w[at + 3] == kFunctionStorage) vars.insert(w[at + 2]);
      if (op == kLoad && vars.count(w[at + 3])) ++s.variableLoads;
      if (op == kStore && vars.count(w[at + 1])) ++s.variableStores;
      if (op == kPhi) ++s.phis;
    }
  }
  return s;
}

/// The performance passes of spirv-opt -O (and a few more), each measured alone by the survey.
const char* const kSurveyedPasses[] = {"--wrap-opkill",
                                       "--eliminate-dead-branches",
                                       "--merge-return",
                                       "--inline-entry-points-exhaustive",
                                       "--eliminate-dead-functions",
                                       "--eliminate-dead-code-aggressive",
                                       "--private-to-local",
                                       "--eliminate-local-single-block",
                                       "--eliminate-local-single-store",
                                       "--scalar-replacement=100",
                                       "--convert-local-access-chains",
                                       "--ssa-rewrite",
                                       "--ccp",
                                       "--loop-unroll",
                                       "--redundancy-elimination",
                                       "--combine-access-chains",
                                       "--simplify-instructions",
                                       "--vector-dce",
                                       "--eliminate-dead-inserts",
                                       "--if-conversion",
                                       "--copy-propagate-arrays",
                                       "--reduce-load-size",
                                       "--merge-blocks",
                                       "--local-redundancy-elimination",
                                       "--loop-invariant-code-motion",
                                       "--unify-const",
                                       "--compact-ids",
                                       "--strip-debug",
                                       "--cfg-cleanup",
                                       "--eliminate-dead-variables"};

TEST(SpirvSweep, EveryKernelOfScheduledGraphsValidates) {
  std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  const std::vector<std::string> files = graphFiles();
  ASSERT_GE(files.size(), 40u) << "the graphs moved?";
  int graphs = 0, kernels = 0, validated = 0, skippedGraphs = 0, universal = 0, inGroups = 0;
  std::map<std::string, int> unimplemented;  // reason -> count
  std::vector<std::string> invalid;
  std::vector<std::pair<std::string, std::vector<uint32_t>>> modules;  // what, words
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
        // The mapping a GPU gets (strided spread loops), and the one a CPU device gets
        // (PoCL: contiguous chunks, a sub-group the whole work-group); sums through
        // sub-groups of at least 8 (an Intel GPU's).
        CompileOptions cpu{TargetEnv::kOpenCL2_0, false};
        cpu.contiguousChunks = true;
        cpu.minSubgroupSize = UINT32_MAX;
        sdk::StatusOr<SpirvKernel> chunked = compileKernel(view, std::string(view.name()), cpu);
        if (!chunked.isOk() && chunked.status().code() != sdk::Code::kUnimplemented)
          invalid.push_back(file + " (contiguous chunks): " + chunked.status().message().substr(0, 4000));
        CompileOptions sub8{TargetEnv::kOpenCL2_0, false};
        sub8.minSubgroupSize = 8;
        sdk::StatusOr<SpirvKernel> subgroups = compileKernel(view, std::string(view.name()), sub8);
        if (!subgroups.isOk() && subgroups.status().code() != sdk::Code::kUnimplemented)
          invalid.push_back(file + " (sub-groups of 8): " + subgroups.status().message().substr(0, 4000));
        sdk::StatusOr<SpirvKernel> s =
            compileKernel(view, std::string(view.name()), CompileOptions{TargetEnv::kOpenCL2_0, false});
        if (s.isOk()) {
          ++validated;
          inGroups += s->groupSize > 0;
          universal += effectiveEnv(s->words, TargetEnv::kOpenCL2_0) != TargetEnv::kOpenCL2_0;
          modules.emplace_back(file + (fuse ? "" : " (unfused)") + " @" + std::string(view.name()), s->words);
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
  std::printf("  %d in work-groups (row reductions: mapping.h), the rest one work-item per point\n", inGroups);
  for (const auto& [why, n] : unimplemented) std::printf("  UNIMPLEMENTED x%d: %s\n", n, why.c_str());
  for (const std::string& m : invalid) ADD_FAILURE() << m;
  EXPECT_GE(kernels, 200);
  EXPECT_EQ(validated + unimpl, kernels);
  EXPECT_EQ(unimpl, 0) << "every kernel of these graphs should lower";

  // The optimizer: every module stays valid; what it left.
  const Shape unoptimized = shapeOf(modules);
  size_t failed = 0;
  std::vector<std::pair<std::string, std::vector<uint32_t>>> optimized;
  for (const auto& [what, words] : modules) {
    sdk::StatusOr<std::vector<uint32_t>> o = optimize(words, what);
    if (!o.isOk()) {
      if (++failed <= 3) ADD_FAILURE() << o.status().message().substr(0, 4000);
      continue;
    }
    optimized.emplace_back(what, *o);
  }
  const Shape after = shapeOf(optimized);
  std::printf("optimized: %zu modules, %zu failed; before: %s; after: %s\n", modules.size(), failed,
              unoptimized.text().c_str(), after.text().c_str());
  EXPECT_EQ(failed, 0u);
  // Every accumulator read becomes a phi (the stores stay: SPIRV-Tools' dead-store passes skip
  // modules with the Addresses capability), and the blocks merged leave fewer instructions.
  EXPECT_EQ(after.variableLoads, 0u) << "the optimizer left variables in memory";
  EXPECT_GT(after.phis, unoptimized.phis);

  // The survey: each pass alone, or the sequences given (';' between sequences, ' ' between passes).
  const char* survey = std::getenv("PLUGSDK_SPIRV_OPT_SURVEY");
  if (!survey) return;
  std::vector<std::vector<std::string>> sequences;
  if (std::string(survey).find("--") == std::string::npos) {
    for (const char* pass : kSurveyedPasses) sequences.push_back({pass});
  } else {
    std::stringstream all(survey);
    for (std::string seq; std::getline(all, seq, ';');) {
      std::stringstream one(seq);
      sequences.emplace_back();
      for (std::string p; one >> p;) sequences.back().push_back(p);
    }
  }
  for (const std::vector<std::string>& seq : sequences) {
    size_t changed = 0, bad = 0;
    std::string firstBad, name;
    for (const std::string& p : seq) name += (name.empty() ? "" : " ") + p;
    std::vector<std::pair<std::string, std::vector<uint32_t>>> out;
    for (const auto& [what, words] : modules) {
      sdk::StatusOr<std::vector<uint32_t>> o = optimize(words, what, seq);
      if (!o.isOk()) {
        if (!bad++) firstBad = o.status().message().substr(0, 300);
        out.emplace_back(what, words);
        continue;
      }
      changed += *o != words;
      out.emplace_back(what, *o);
    }
    std::printf("survey [%s]: changed %zu, invalid/failed %zu; %s %s\n", name.c_str(), changed, bad,
                shapeOf(out).text().c_str(), firstBad.c_str());
  }
}
}  // namespace
}  // namespace plugsdk::level_zero::spirv
