// The dynamic tier: graphs with symbolic sizes, compiled for the device once and run at
// several concrete sizes (sizes 1, odd sizes, sizes past any tile), each run checked against
// the reference executor. The kernels take the sizes as symbol values at launch: a device that
// bakes a size into its compiled code, or mishandles a size of 1, fails here.
// Tolerance as the fusion tier: tol x max(1, max |reference|), 1e-5 (f32) or 1e-12 (f64).
#include "conformance/runner/check.h"
#include "core/exec/reference_executor.h"
#include "core/plugin/device_program.h"
#include "core/text/parser.h"

namespace plugsdk::conformance {
namespace {

using Sizes = std::map<std::string, int64_t>;

struct DynamicCase {
  std::string name;
  std::string graph;  ///< .pgraph text; DT stands for the dtype
  std::vector<Sizes> sizes;
};

std::string sizesText(const Sizes& s) {
  std::string out;
  for (const auto& [k, v] : s) out += (out.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return out;
}

Outcome runDynamicCase(const CaseContext& c, const DynamicCase& dc, const std::string& dt) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, graphWithDtype(dc.graph, dt));
  if (!g.isOk()) return Outcome::fail("the case's graph does not parse: " + g.status().toString());
  if (auto skip = skipUnclaimed(c, *g)) return *skip;
  auto compiled = compile::compileGraph(*ctx, *g, plugin::optionsFor(c.device.caps()));
  if (!compiled.isOk()) return Outcome::of(compiled.status());
  auto program = plugin::DeviceProgram::compile(c.device, compiled->program);  // once, for every size
  if (!program.isOk()) return Outcome::of(program.status());
  Outcome worst = Outcome::pass();
  for (size_t k = 0; k < dc.sizes.size(); ++k) {
    const std::vector<exec::HostTensor> inputs = randomInputs(*g, c.seed + k, dc.sizes[k]);
    const std::string at = "at " + sizesText(dc.sizes[k]) + ": ";
    auto got = (*program)->run(inputs, {.poison = true});
    if (!got.isOk()) return Outcome::fail(at + got.status().toString());
    auto want = exec::ReferenceExecutor(ctx).run(*g, inputs);
    if (!want.isOk()) return Outcome::fail(at + "the reference executor failed: " + want.status().toString());
    Outcome o = compareOutputs(*got, *want, {Tolerance::relativeToMax(dt == "f64" ? 1e-12 : 1e-5)});
    if (o.kind != Outcome::Kind::kPass) {
      o.detail = at + o.detail;
      return o;
    }
    if (o.bound > 0 && (worst.bound == 0 || o.maxError / o.bound > worst.maxError / worst.bound)) worst = o;
  }
  return worst;
}

std::vector<DynamicCase> dynamicCases() {
  return {
      {"pointwise.sin2_cos2",
       "graph @g(%x: DT[s0, 64]) {\n  %s = aten.sin(%x)\n  %c = aten.cos(%x)\n  %s2 = aten.mul.Tensor(%s, %s)\n"
       "  %c2 = aten.mul.Tensor(%c, %c)\n  %y = aten.add.Tensor(%s2, %c2)\n  return %y\n}\n",
       {{{"s0", 1}}, {{"s0", 7}}, {{"s0", 64}}, {{"s0", 1000}}}},
      {"pointwise.outer_broadcast",
       "graph @g(%x: DT[s0, 1], %y: DT[1, s1]) {\n  %a = aten.mul.Tensor(%x, %y)\n  %b = aten.tanh(%a)\n  return "
       "%b\n}\n",
       {{{"s0", 1}, {"s1", 1}}, {{"s0", 3}, {"s1", 17}}, {{"s0", 33}, {"s1", 8}}, {{"s0", 2}, {"s1", 1025}}}},
      {"reduction.softmax_rows",
       "graph @g(%x: DT[s0, s1]) {\n  %y = aten._softmax(%x) {dim = 1, half_to_float = false}\n  return %y\n}\n",
       {{{"s0", 1}, {"s1", 1}}, {{"s0", 5}, {"s1", 129}}, {{"s0", 17}, {"s1", 1000}}}},
      {"reduction.layernorm",
       "graph @g(%x: DT[s0, 64], %w: DT[64], %b: DT[64]) {\n"
       "  %y, %mean, %rstd = aten.native_layer_norm(%x, %w, %b) {normalized_shape = [64], eps = 1e-05}\n"
       "  return %y, %mean, %rstd\n}\n",
       {{{"s0", 1}}, {{"s0", 9}}, {{"s0", 200}}}},
      {"reduction.column_sum",
       "graph @g(%x: DT[32, s0]) {\n  %s = aten.sum.dim_IntList(%x) {dim = [0]}\n  return %s\n}\n",
       {{{"s0", 1}}, {{"s0", 31}}, {{"s0", 513}}}},
      {"reduction.all_dims",
       "graph @g(%x: DT[s0, s1]) {\n  %s = aten.sum.dim_IntList(%x) {dim = [0, 1]}\n  %m = aten.amax(%x) {dim = [0, "
       "1]}\n"
       "  return %s, %m\n}\n",
       {{{"s0", 1}, {"s1", 1}}, {{"s0", 7}, {"s1", 9}}, {{"s0", 100}, {"s1", 70}}}},
      {"views.cat_symbolic",
       "graph @g(%x: DT[s0, 8], %y: DT[s1, 8]) {\n  %c = aten.cat(%x, %y) {dim = 0}\n  %t = aten.t(%c)\n"
       "  %r = aten.relu(%t)\n  return %r\n}\n",
       {{{"s0", 1}, {"s1", 1}}, {{"s0", 5}, {"s1", 12}}, {{"s0", 64}, {"s1", 3}}}},
      {"library.matmul_bias_gelu",
       "graph @g(%x: DT[s0, 64], %w: DT[32, 64], %b: DT[32]) {\n  %wt = aten.t(%w)\n  %y = aten.addmm(%b, %x, %wt)\n"
       "  %g = aten.gelu(%y)\n  return %g\n}\n",
       {{{"s0", 1}}, {{"s0", 13}}, {{"s0", 100}}}},
      {"library.bmm_symbolic_k",
       "graph @g(%a: DT[3, 5, s0], %b: DT[3, s0, 7]) {\n  %y = aten.bmm(%a, %b)\n  return %y\n}\n",
       {{{"s0", 1}}, {{"s0", 17}}, {{"s0", 130}}}},
      {"model.mlp_batch",
       "graph @g(%x: DT[s0, 48], %w1: DT[32, 48], %b1: DT[32], %w2: DT[10, 32], %b2: DT[10]) {\n"
       "  %t1 = aten.t(%w1)\n  %h = aten.addmm(%b1, %x, %t1)\n  %r = aten.relu(%h)\n  %t2 = aten.t(%w2)\n"
       "  %o = aten.addmm(%b2, %r, %t2)\n  %y = aten._log_softmax(%o) {dim = 1, half_to_float = false}\n  return "
       "%y\n}\n",
       {{{"s0", 1}}, {{"s0", 8}}, {{"s0", 37}}}},
  };
}

}  // namespace

void addDynamicCases(Suite& s) {
  for (const DynamicCase& dc : dynamicCases())
    for (const char* dt : {"f32", "f64"})
      s.add("dynamic", "dynamic." + dc.name + "." + dt,
            [dc, dtype = std::string(dt)](const CaseContext& c) { return runDynamicCase(c, dc, dtype); });
}

}  // namespace plugsdk::conformance
