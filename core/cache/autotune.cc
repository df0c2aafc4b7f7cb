#include "core/cache/autotune.h"

#include <algorithm>
#include <random>

namespace plugsdk::cache {
namespace {

/// Inputs of the graph's dtypes and the call's shapes: normal floats, zero integers (always
/// a valid index).
StatusOr<std::vector<exec::HostTensor>> syntheticInputs(const ir::Graph& g,
                                                        const std::vector<std::vector<int64_t>>& shapes) {
  if (shapes.size() != g.inputs().size())
    return invalidArgument("autotune: " + std::to_string(shapes.size()) + " input shapes for " +
                           std::to_string(g.inputs().size()) + " inputs");
  std::mt19937_64 rng(1234);
  std::normal_distribution<double> normal;
  std::vector<exec::HostTensor> ins;
  for (size_t i = 0; i < shapes.size(); ++i) {
    exec::HostTensor t(g.inputs()[i]->type().dtype, shapes[i]);
    if (t.isFloating())
      for (int64_t i = 0; i < t.numel(); ++i) t.setDouble(i, exec::roundToFloatType(normal(rng), t.dtype()));
    ins.push_back(std::move(t));
  }
  return ins;
}

}  // namespace

std::vector<ScheduleVariant> scheduleVariants(const compile::CompileOptions& base) {
  std::vector<ScheduleVariant> v = {{"default", base}};
  auto add = [&](std::string name, auto change) {
    compile::CompileOptions o = base;
    change(o.schedule.caps);
    v.push_back({std::move(name), std::move(o)});
  };
  add("recompute=0", [](sched::FusionCaps& c) { c.maxRecompute = 0; });
  add("recompute=256", [](sched::FusionCaps& c) { c.maxRecompute = 256; });
  add("no-horizontal", [](sched::FusionCaps& c) { c.horizontal = false; });
  add("no-multi-reduction", [](sched::FusionCaps& c) { c.multiReduction = false; });
  return v;
}

StatusOr<TunedProgram> autotune(const ir::Context& ctx, const plugin::Device& device, const ir::Graph& graph,
                                const std::vector<ScheduleVariant>& variants,
                                const std::vector<std::vector<int64_t>>& inputShapes, int repeats) {
  ASSIGN_OR_RETURN(std::vector<exec::HostTensor> inputs, syntheticInputs(graph, inputShapes));
  TunedProgram best;
  double bestMs = 0;
  Status firstError = Status::ok();
  for (const ScheduleVariant& var : variants) {
    auto fail = [&](const Status& s) {
      if (firstError.isOk()) firstError = s.withContext("autotune variant " + var.name);
      best.millis.push_back({var.name, -1});
    };
    StatusOr<compile::Compiled> c = compile::compileGraph(ctx, graph, var.options);
    if (!c.isOk()) {
      fail(c.status());
      continue;
    }
    sched::Program scheduled = c->program;
    StatusOr<std::unique_ptr<plugin::DeviceProgram>> p = plugin::DeviceProgram::compile(device, std::move(c->program));
    if (!p.isOk()) {
      fail(p.status());
      continue;
    }
    std::vector<double> seconds;
    plugin::RunOptions ro;
    ro.repeat = std::max(1, repeats);
    ro.launchSeconds = &seconds;
    auto r = (*p)->run(inputs, ro);
    if (!r.isOk() || seconds.empty()) {
      fail(r.isOk() ? internalError("no timings") : r.status());
      continue;
    }
    std::sort(seconds.begin(), seconds.end());
    const double ms = seconds[seconds.size() / 2] * 1e3;
    best.millis.push_back({var.name, ms});
    if (!best.program || ms < bestMs) {
      bestMs = ms;
      best.program = std::move(*p);
      best.scheduled = std::move(scheduled);
      best.winner = var.name;
    }
  }
  if (!best.program) return firstError;
  return best;
}

}  // namespace plugsdk::cache
