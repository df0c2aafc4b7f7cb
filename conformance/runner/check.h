// Running a graph on the device under test and on the float64 reference executor, and
// comparing the two under a documented tolerance. Every numeric tier (op, fusion, model,
// dynamic, fuzz) goes through these, so the tolerance rules live in one place
// (docs/conformance.md, "Tolerances").
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conformance/runner/suite.h"
#include "core/compile/pipeline.h"
#include "core/exec/host_tensor.h"
#include "core/ir/graph.h"

namespace plugsdk::conformance {

/// How far a floating output may be from the reference. An element passes when
///   |got - want| <= max(ulps * ulp(want), scaled * max(1, max |reference over the output|), bound[i])
/// where `want` is the float64 reference rounded once to the output dtype and ulp() is the
/// spacing of that dtype at `want` (denormal spacing below the normal range). NaN must be
/// NaN, infinities must match exactly, and with every term 0 (exact) the sign of a zero must
/// match too. Integer and bool outputs are always exact.
struct Tolerance {
  double ulps = 0;
  double scaled = 0;
  std::vector<double> bound;  ///< optional per-element absolute bound (reductions: an error bound from the data)
  static Tolerance exact() { return {}; }
  static Tolerance inUlps(double u) { return {u, 0, {}}; }
  static Tolerance relativeToMax(double s) { return {0, s, {}}; }
};

/// The spacing of `dtype`'s values at |v| (f16, bf16, f32, f64).
double ulpOf(double v, ir::DType dtype);

/// Compares device outputs with reference outputs; one tolerance per output, or one for all.
/// The outcome carries the worst error and the bound it was held to.
Outcome compareOutputs(const std::vector<exec::HostTensor>& got, const std::vector<exec::HostTensor>& want,
                       const std::vector<Tolerance>& tolerances);

/// The first dtype a value of `g` has (input, node output) that the device does not claim.
std::optional<ir::DType> unclaimedDtype(const plugin::DeviceCaps& caps, const ir::Graph& g);

/// Symbol values for the sizes of g's inputs: every symbol in `sizes`, the others 1.
std::vector<std::vector<int64_t>> concreteShapes(const ir::Graph& g, const std::map<std::string, int64_t>& sizes);

/// Seeded inputs for g: floating inputs of rank 1 from [0.5, 1.5] (biases, norm scales,
/// running variances), other floating inputs standard normal, integers from {0, 1, 2},
/// each rounded to its dtype.
std::vector<exec::HostTensor> randomInputs(const ir::Graph& g, uint64_t seed,
                                           const std::map<std::string, int64_t>& sizes = {});

/// Compiles g for the device (optionsFor its capabilities, unless `options` is given) and
/// runs it there, its outputs and temporaries poisoned first (RunOptions::poison). `compiled`, when given, receives the
/// prim graph, program and schedule stats.
StatusOr<std::vector<exec::HostTensor>> runOnDevice(const plugin::Device& device, const ir::Context& ctx,
                                                    const ir::Graph& g, const std::vector<exec::HostTensor>& inputs,
                                                    const compile::CompileOptions* options = nullptr,
                                                    compile::Compiled* compiled = nullptr);

/// Case graphs are written once for every dtype: each "DT" in `text` becomes `dtype`.
std::string graphWithDtype(std::string text, const std::string& dtype);

/// A skip when g has a dtype the run does not claim (the device's dtypes narrowed by
/// CaseContext::dtypes), naming it and who does not claim it.
std::optional<Outcome> skipUnclaimed(const CaseContext& c, const ir::Graph& g);

/// The whole check: skipped when the run does not claim a dtype of g (the device's dtypes,
/// narrowed by CaseContext::dtypes); otherwise g on the device against g on the reference
/// executor, compared under `tolerances`.
Outcome checkGraph(const CaseContext& c, const std::shared_ptr<const ir::Context>& ctx, const ir::Graph& g,
                   const std::vector<exec::HostTensor>& inputs, const std::vector<Tolerance>& tolerances);

}  // namespace plugsdk::conformance
