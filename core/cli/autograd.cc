// `plugsdk autograd FILE`: the training graphs of a captured graph (core/autograd): the joint
// graph's size, the forward and backward after partitioning, the bytes saved for the backward
// with and without recomputation, and the time of each stage; --print shows a graph.
#include <cstdio>

#include "core/autograd/training.h"
#include "core/cli/cli_util.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

namespace plugsdk::cli {
namespace {

std::string mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

}  // namespace

int cmdAutograd(const ir::Context& ctx, const std::vector<std::string>& args) {
  std::string file, print, wantedInputs = "float";
  autograd::PartitionOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--no-recompute") {
      options.recompute = false;
    } else if (args[i] == "--print" && i + 1 < args.size()) {
      print = args[++i];
      if (print != "forward" && print != "backward")
        return usageError("--print takes forward or backward, not '" + print + "'");
    } else if (args[i] == "--wantedInputs-grad" && i + 1 < args.size()) {
      wantedInputs = args[++i];
    } else if (!args[i].empty() && args[i][0] == '-') {
      return usageError("autograd: unknown option " + args[i]);
    } else if (file.empty()) {
      file = args[i];
    } else {
      return usageError("autograd takes one FILE");
    }
  }
  if (file.empty()) return usageError("autograd needs a FILE");
  auto g = text::parseGraphFile(ctx, file);
  if (!g.isOk()) return fail(g.status());
  autograd::JointSpec spec;
  for (const ir::Value* in : g->inputs()) {
    bool wanted = ir::isFloating(in->type().dtype);
    if (wantedInputs != "float")
      wanted = wanted && ("," + wantedInputs + ",").find("," + in->name() + ",") != std::string::npos;
    spec.requiresGrad.push_back(wanted);
  }
  auto t = autograd::buildTraining(ctx, *g, spec, options);
  if (!t.isOk()) return fail(t.status());
  const autograd::TrainingGraphs& tg = t->graphs;
  if (!print.empty()) {
    std::fputs(text::printGraph(print == "forward" ? tg.forward : tg.backward).c_str(), stdout);
    return 0;
  }
  const autograd::PartitionStats& s = tg.stats;
  std::printf("%s: joint graph %zu nodes -> forward %zu nodes, backward %zu nodes\n", file.c_str(), t->jointNodes,
              tg.forward.nodes().size(), tg.backward.nodes().size());
  std::printf("gradients: %zu of %zu inputs; tangents: %zu of %zu outputs\n", tg.gradOf.size(), g->inputs().size(),
              tg.tangentOf.size(), g->outputs().size());
  std::printf("saved for the backward: %d values, %s (without recomputation: %d values, %s); recomputed nodes: %d\n",
              s.saved, mib(s.savedBytes).c_str(), s.savedNoRecompute, mib(s.savedBytesNoRecompute).c_str(),
              s.recomputed);
  std::printf("forward inputs the backward reads: %zu (%s, held by the caller)\n", tg.savedInputs.size(),
              mib(s.savedInputBytes).c_str());
  std::printf("time:");
  for (const auto& [stage, sec] : t->stageSeconds) std::printf(" %s %.1f ms", stage.c_str(), sec * 1e3);
  std::printf("\n");
  return 0;
}

}  // namespace plugsdk::cli
