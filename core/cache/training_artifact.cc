// compileTraining: buildTraining, then each half through the pipeline and the device.
#include "core/cache/training_artifact.h"

#include <chrono>

#include "core/autograd/training.h"

namespace plugsdk::cache {
namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

StatusOr<std::unique_ptr<plugin::DeviceProgram>> compileHalf(const ir::Context& ctx, const plugin::Device& device,
                                                             const ir::Graph& g, compile::CompileOptions options,
                                                             const std::string& half, Artifact* a) {
  if (!options.dumpDir.empty()) options.dumpDir += "/" + half;
  auto t = std::chrono::steady_clock::now();
  auto c = compile::compileGraph(ctx, g, options);
  if (!c.isOk()) return c.status().withContext("compiling the " + half);
  for (const sched::Step& s : c->program.steps) (s.kind == sched::Step::Kind::kLaunch ? a->kernels : a->libraryCalls)++;
  a->stageSeconds.push_back({half + " schedule", secondsSince(t)});
  t = std::chrono::steady_clock::now();
  auto p = plugin::DeviceProgram::compile(device, std::move(c->program));
  if (!p.isOk()) return p.status().withContext("compiling the " + half);
  a->stageSeconds.push_back({half + " codegen", secondsSince(t)});
  return std::move(*p);
}

}  // namespace

Status compileTraining(const ir::Context& ctx, const plugin::Device& device, const ir::Graph& specialized,
                       const std::vector<guard::TensorSignature>& inputs,
                       const std::vector<bool>& differentiableOutputs, const compile::CompileOptions& options,
                       Artifact* a) {
  autograd::JointSpec spec;
  autograd::PartitionOptions po;
  for (size_t i = 0; i < inputs.size(); ++i) {
    spec.requiresGrad.push_back(inputs[i].requiresGrad);
    const ir::Shape& shape = specialized.inputs()[i]->type().shape;
    for (size_t d = 0; d < shape.size() && d < inputs[i].shape.size(); ++d)
      if (shape[d].isSymbol()) po.symbolHints[shape[d].toString()] = inputs[i].shape[d];
  }
  spec.differentiableOutputs = differentiableOutputs;
  ASSIGN_OR_RETURN(autograd::Training t, autograd::buildTraining(ctx, specialized, spec, po));
  for (const auto& st : t.stageSeconds) a->stageSeconds.push_back(st);
  ASSIGN_OR_RETURN(a->program, compileHalf(ctx, device, t.graphs.forward, options, "forward", a));
  auto b = std::make_unique<BackwardProgram>();
  if (!t.graphs.gradOf.empty()) {
    ASSIGN_OR_RETURN(b->program, compileHalf(ctx, device, t.graphs.backward, options, "backward", a));
  }
  b->savedInputs = t.graphs.savedInputs;
  b->numSavedValues = t.graphs.numSavedValues;
  b->tangentOf = t.graphs.tangentOf;
  b->gradOf = t.graphs.gradOf;
  b->gradTangents = t.graphs.gradTangents;
  b->stats = t.graphs.stats;
  a->backward = std::move(b);
  return Status::ok();
}

}  // namespace plugsdk::cache
