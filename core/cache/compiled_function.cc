#include "core/cache/compiled_function.h"

#include <algorithm>
#include <chrono>

#include "core/cache/autotune.h"
#include "core/cache/disk_cache.h"
#include "core/cache/program_serial.h"
#include "core/cache/training_artifact.h"
#include "core/ir/specialize.h"
#include "core/text/printer.h"

namespace plugsdk::cache {
namespace {

constexpr size_t kMissReasonsKept = 32;

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

CompiledFunction::CompiledFunction(std::shared_ptr<const ir::Context> ctx, const plugin::Device& device,
                                   ir::Graph graph, FunctionOptions options)
    : ctx_(std::move(ctx)), device_(device), graph_(std::move(graph)), options_(std::move(options)) {}

void CompiledFunction::countHit() {
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.hits;
}

FunctionStats CompiledFunction::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  FunctionStats s = stats_;
  s.entries = artifacts_.size();
  return s;
}

std::shared_ptr<const Artifact> CompiledFunction::lookup(const std::vector<guard::TensorSignature>& inputs,
                                                         std::optional<guard::GuardFailure>* firstFailure) const {
  for (const auto& a : artifacts_) {
    std::optional<guard::GuardFailure> f = a->guards.check(inputs);
    if (!f) return a;
    if (firstFailure && !*firstFailure) *firstFailure = std::move(f);
  }
  return nullptr;
}

StatusOr<Selection> CompiledFunction::select(const std::vector<guard::TensorSignature>& inputs) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto a = lookup(inputs, nullptr)) {
      ++stats_.hits;
      return Selection{a, "", false};
    }
  }
  std::lock_guard<std::mutex> compiling(compileMu_);
  std::string missReason;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::optional<guard::GuardFailure> failure;
    if (auto a = lookup(inputs, &failure)) {  // compiled by the thread we waited for
      ++stats_.hits;
      return Selection{a, "", false};
    }
    ++stats_.misses;
    missReason =
        failure ? std::string(guard::guardKindName(failure->kind)) + ": " + failure->message : "cold: no artifact yet";
    if (stats_.missReasons.size() == kMissReasonsKept) stats_.missReasons.erase(stats_.missReasons.begin());
    stats_.missReasons.push_back(missReason);
    std::string why;
    for (size_t i = 0; i < inputs.size() && why.empty(); ++i)
      if (inputs[i].device != options_.inputDevice)
        why = "input " + std::to_string(i) + " is on " + inputs[i].device + "; graph '" + graph_.name() + "' runs on " +
              options_.inputDevice + " tensors";
    if (why.empty() && stats_.compiles >= static_cast<uint64_t>(options_.recompileLimit))
      why = "recompile limit (" + std::to_string(options_.recompileLimit) + ") reached for graph '" + graph_.name() +
            "'; last miss: " + missReason;
    if (!why.empty()) {
      ++stats_.fallbacks;
      return Selection{nullptr, why, false};
    }
  }
  Plan p = plan(inputs);
  if (!p.fallbackReason.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.fallbacks;
    return Selection{nullptr, p.fallbackReason, false};
  }
  auto t0 = std::chrono::steady_clock::now();
  StatusOr<ir::Graph> g = ir::specializeGraph(*ctx_, graph_, p.types, p.symbols);
  if (!g.isOk()) {  // e.g. a view whose sizes were captured as constants
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.fallbacks;
    return Selection{nullptr,
                     "graph '" + graph_.name() + "' cannot be specialized for these inputs: " + g.status().toString(),
                     false};
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Artifact> a, compile(p, *g, inputs, secondsSince(t0)));
  std::lock_guard<std::mutex> lock(mu_);
  // Specialized artifacts first: they are faster than a symbolic one admitting the same inputs.
  if (a->specialized.empty())
    artifacts_.push_back(a);
  else
    artifacts_.insert(artifacts_.begin(), a);
  return Selection{a, "", true};
}

CompiledFunction::Plan CompiledFunction::plan(const std::vector<guard::TensorSignature>& inputs) {
  Plan p;
  const auto& gin = graph_.inputs();
  if (inputs.size() != gin.size()) {
    p.fallbackReason = "graph '" + graph_.name() + "' takes " + std::to_string(gin.size()) + " inputs, called with " +
                       std::to_string(inputs.size());
    return p;
  }
  std::map<std::string, int64_t> seen;  // this call's value of each symbol
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < gin.size(); ++i) {
    const ir::TensorType& t = gin[i]->type();
    const guard::TensorSignature& s = inputs[i];
    if (s.shape.size() != t.shape.size()) {
      for (const ir::SymExpr& d : t.shape)
        if (!d.isConstant()) {
          p.fallbackReason = "input %" + gin[i]->name() + " has rank " + std::to_string(s.shape.size()) + "; graph '" +
                             graph_.name() + "' was captured with " + t.toString();
          return p;
        }
    }
    for (size_t d = 0; d < t.shape.size() && s.shape.size() == t.shape.size(); ++d) {
      if (!t.shape[d].isSymbol()) continue;
      const std::string sym = t.shape[d].toString();
      auto [it, fresh] = seen.emplace(sym, s.shape[d]);
      if (!fresh && it->second != s.shape[d]) {
        p.fallbackReason = "input %" + gin[i]->name() + " dim " + std::to_string(d) + " is " +
                           std::to_string(s.shape[d]) + " but another input gives " + sym + " = " +
                           std::to_string(it->second);
        return p;
      }
    }
  }
  for (const auto& [sym, v] : seen) {
    std::set<int64_t>& values = observed_[sym];
    values.insert(v);
    bool constant = options_.dynamic == DynamicPolicy::kStatic ||
                    (options_.dynamic == DynamicPolicy::kAutomatic && values.size() == 1);
    if (constant) {
      p.symbols[sym] = ir::SymExpr(v);
      p.specialized[sym] = v;
    }
  }
  for (size_t i = 0; i < gin.size(); ++i) {
    const ir::TensorType& t = gin[i]->type();
    const guard::TensorSignature& s = inputs[i];
    ir::TensorType nt;
    nt.dtype = s.dtype;
    if (s.shape.size() != t.shape.size()) {
      for (int64_t v : s.shape) nt.shape.emplace_back(v);
    } else {
      for (size_t d = 0; d < t.shape.size(); ++d)
        nt.shape.push_back(t.shape[d].isConstant() ? ir::SymExpr(s.shape[d]) : t.shape[d].substitute(p.symbols));
    }
    if (s.strideClass() == guard::StrideClass::kChannelsLast) nt.strides = guard::channelsLastStrides(nt.shape);
    p.types.push_back(std::move(nt));
  }
  return p;
}

StatusOr<std::shared_ptr<const Artifact>> CompiledFunction::compile(const Plan& p, const ir::Graph& g,
                                                                    const std::vector<guard::TensorSignature>& inputs,
                                                                    double specializeSeconds) {
  auto t0 = std::chrono::steady_clock::now();
  auto a = std::make_shared<Artifact>();
  a->specialized = p.specialized;
  a->stageSeconds.push_back({"specialize", specializeSeconds});
  std::vector<guard::InputGuard> guards;
  std::map<std::string, int64_t> lowerBounds;
  for (size_t i = 0; i < p.types.size(); ++i) {
    const guard::TensorSignature& s = inputs[i];
    guards.push_back(
        {graph_.inputs()[i]->name(), s.dtype, p.types[i].shape, s.strideClass(), s.device, s.requiresGrad});
    for (const ir::SymExpr& d : p.types[i].shape)
      for (const std::string& sym : d.symbols()) lowerBounds[sym] = ctx_->assumptions.lowerBound(sym);
  }
  a->guards = guard::GuardSet(std::move(guards), std::move(lowerBounds));

  const compile::CompileOptions opts = plugin::optionsFor(device_.caps(), options_.compile);
  const bool training =
      options_.training && std::any_of(inputs.begin(), inputs.end(), [](const auto& s) { return s.requiresGrad; });
  if (training) {
    RETURN_IF_ERROR(compileTraining(*ctx_, device_, g, inputs, options_.differentiableOutputs, opts, a.get()));
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.compiles;
    stats_.compileSeconds += specializeSeconds + secondsSince(t0);
    return std::shared_ptr<const Artifact>(std::move(a));
  }
  auto t = std::chrono::steady_clock::now();
  std::optional<sched::Program> program;
  std::string key, diskProblem;
  DiskCache* disk = options_.disk && options_.disk->enabled() ? options_.disk : nullptr;
  if (disk) {
    const plugsdk_api_t& api = device_.plugin().api();
    key = joinKey({"program", coreBuildId(), device_.plugin().name(), api.plugin_version ? api.plugin_version : "",
                   std::to_string(api.abi_major) + "." + std::to_string(api.abi_minor), device_.describe(),
                   compile::optionsFingerprint(opts), options_.autotune ? "autotune" : "", a->guards.toString(),
                   text::printGraph(g)});
    std::string payload;
    switch (disk->get(key, &payload, &diskProblem)) {
      case DiskCache::Lookup::kHit: {
        StatusOr<sched::Program> loaded = deserializeProgram(payload);
        if (loaded.isOk()) {
          program = std::move(*loaded);
          a->fromDisk = true;
        } else {
          diskProblem = disk->path(key) + ": " + loaded.status().toString();
        }
        break;
      }
      case DiskCache::Lookup::kCorrupt:
      case DiskCache::Lookup::kMiss: break;
    }
  }
  if (!program && options_.autotune) {
    std::vector<std::vector<int64_t>> shapes;
    for (const guard::TensorSignature& s : inputs) shapes.push_back(s.shape);
    ASSIGN_OR_RETURN(TunedProgram tuned, autotune(*ctx_, device_, g, scheduleVariants(opts), shapes));
    a->autotuneMillis = std::move(tuned.millis);
    a->autotuneWinner = tuned.winner;
    a->program = std::move(tuned.program);
    program = std::move(tuned.scheduled);
    a->stageSeconds.push_back({"autotune", secondsSince(t)});
  } else if (!program) {
    ASSIGN_OR_RETURN(compile::Compiled c, compile::compileGraph(*ctx_, g, opts));
    program = std::move(c.program);
  }
  if (disk && !a->fromDisk)
    if (Status w = disk->put(key, serializeProgram(*program)); !w.isOk() && diskProblem.empty())
      diskProblem = w.toString();
  for (const sched::Step& s : program->steps) (s.kind == sched::Step::Kind::kLaunch ? a->kernels : a->libraryCalls)++;
  if (!a->program) {
    a->stageSeconds.push_back({"prims+schedule", secondsSince(t)});  // fromDisk: the load
    t = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(a->program, plugin::DeviceProgram::compile(device_, std::move(*program)));
    a->stageSeconds.push_back({"codegen", secondsSince(t)});
  }

  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.compiles;
  if (a->fromDisk) ++stats_.diskHits;
  if (!diskProblem.empty()) {
    ++stats_.diskRejected;
    stats_.lastDiskProblem = diskProblem;
  }
  stats_.compileSeconds += specializeSeconds + secondsSince(t0);
  return std::shared_ptr<const Artifact>(std::move(a));
}

}  // namespace plugsdk::cache
