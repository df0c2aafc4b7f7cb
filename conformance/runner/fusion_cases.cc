// The fusion tier: programs the scheduler makes with each of its fusion rules (vertical,
// horizontal, reduction prologue and epilogue, several reductions over one domain, library
// epilogues, views / pad / concat / gather inlined as index arithmetic, combining stores,
// memory reuse, the kernel size limit), compiled for the device with its capabilities and
// checked against the reference executor. Each case first checks that the rule really fired
// (the kernel and library-call counts of the schedule): a case whose rule the device does not
// take (a capability it does not report) is skipped with that reason, since running the
// unfused program would not test the rule. Shapes have odd sizes so tails are exercised.
// Tolerance: |device - reference| <= tol x max(1, max |reference|), tol 1e-5 (f32) or 1e-12
// (f64): fused chains round after each op on a device, the reference keeps float64.
#include <algorithm>
#include <functional>
#include <optional>

#include "conformance/runner/check.h"
#include "core/exec/reference_executor.h"
#include "core/plugin/device_program.h"
#include "core/text/parser.h"

namespace plugsdk::conformance {
namespace {

struct FusionCase {
  std::string name;
  std::string rule;           ///< the FusionCaps flag it needs ("" for none), or "matmul" / "convolution" epilogues
  std::string graph;          ///< .pgraph text; DT stands for the dtype
  int kernels = -1;           ///< expected kernel count (-1: not checked)
  int libraryCalls = 0;       ///< expected library calls
  bool reusesMemory = false;  ///< the planned arena must be smaller than every temporary apart
  bool splits = false;        ///< the kernel size limit must split it into several kernels
};

/// Why the device's schedule cannot exercise `fc`'s rule on dtype `dt`, or nothing.
std::optional<std::string> missingRule(const FusionCase& fc, const std::string& dt, const compile::CompileOptions& o) {
  const std::string& rule = fc.rule;
  const sched::FusionCaps& f = o.schedule.caps;
  if (rule == "horizontal" && !f.horizontal) return "the device does not report horizontal fusion";
  if (rule == "reduction_epilogue" && !f.reductionEpilogue) return "the device does not report reduction epilogues";
  if (rule == "multi_reduction" && (!f.multiReduction || !f.reductionEpilogue))
    return "the device does not report multi-reduction kernels with epilogues";
  const bool conv = fc.graph.find("convolution") != std::string::npos;
  if (rule == "library_epilogue" && !(conv ? f.convolutionEpilogue : f.matmulEpilogue))
    return std::string("the device takes no fused epilogue on ") + (conv ? "convolution" : "matmul");
  // A device whose library takes only some forms of prims.convolution (ABI 1.4) gets the
  // others as loop kernels: no library call to fuse into.
  const std::vector<ir::DType>& convDtypes = o.decomp.convolutionDtypes;
  const std::optional<ir::DType> t = ir::parseDType(dt);
  if (conv && rule == "library_epilogue" && !o.decomp.expand.count("prims.convolution") && !convDtypes.empty() && t &&
      std::find(convDtypes.begin(), convDtypes.end(), *t) == convDtypes.end())
    return "the device takes no " + dt + " prims.convolution";
  return std::nullopt;
}

Outcome runFusionCase(const CaseContext& c, const FusionCase& fc, const std::string& dt) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, graphWithDtype(fc.graph, dt));
  if (!g.isOk()) return Outcome::fail("the case's graph does not parse: " + g.status().toString());
  if (auto skip = skipUnclaimed(c, *g)) return *skip;
  compile::CompileOptions options = plugin::optionsFor(c.device.caps());
  if (auto why = missingRule(fc, dt, options)) return Outcome::skip(*why);
  // Each rule is counted on the reductions as the graph writes them. Split reductions (ABI
  // 1.5, a rewrite before fusion, which the op and model tiers run where the device asks for
  // it) have cases of their own, run on every device with the split the cuda plugin asks for:
  // the partials and their reduction are ordinary kernels any device must compute.
  sched::FusionCaps& caps = options.schedule.caps;
  caps.splitRowReductions = fc.rule == "split_rows" ? 1024 : 0;
  caps.splitColumnReductions = fc.rule == "split_columns" ? 65536 : 0;
  auto compiled = compile::compileGraph(*ctx, *g, options);
  if (!compiled.isOk()) return Outcome::of(compiled.status());
  const sched::ScheduleStats& st = compiled->stats;
  if (fc.kernels >= 0 && (st.kernels != fc.kernels || st.libraryCalls != fc.libraryCalls))
    return Outcome::fail("the schedule has " + std::to_string(st.kernels) + " kernels + " +
                         std::to_string(st.libraryCalls) + " library calls, the rule makes " +
                         std::to_string(fc.kernels) + " + " + std::to_string(fc.libraryCalls));
  if (fc.reusesMemory && !(st.tempBytesPlanned.constant().value_or(0) < st.tempBytesUnplanned.constant().value_or(0)))
    return Outcome::fail("the memory plan reused nothing: " + st.tempBytesPlanned.toString() + " bytes planned vs " +
                         st.tempBytesUnplanned.toString() + " apart");
  if (fc.splits && st.kernels < 2)
    return Outcome::fail("a chain of " + std::to_string(st.primNodes) + " prims stayed in " +
                         std::to_string(st.kernels) + " kernel(s) under a limit of " +
                         std::to_string(options.schedule.caps.maxKernelStmts) + " statements");
  auto program = plugin::DeviceProgram::compile(c.device, compiled->program);
  if (!program.isOk()) return Outcome::of(program.status());
  const std::vector<exec::HostTensor> inputs = randomInputs(*g, c.seed);
  auto got = (*program)->run(inputs, {.poison = true});
  if (!got.isOk()) return Outcome::of(got.status());
  auto want = exec::ReferenceExecutor(ctx).run(*g, inputs);
  if (!want.isOk()) return Outcome::fail("the reference executor failed: " + want.status().toString());
  return compareOutputs(*got, *want, {Tolerance::relativeToMax(dt == "f64" ? 1e-12 : 1e-5)});
}

/// A chain of `n` pointwise ops: long enough that a device's kernel size limit splits it.
std::string longChain(int n) {
  std::string body = "graph @long_chain(%x: DT[33, 17]) {\n  %v0 = aten.sin(%x)\n";
  for (int i = 1; i < n; ++i)
    body += "  %v" + std::to_string(i) + " = aten." + (i % 2 ? "cos" : "sin") + "(%v" + std::to_string(i - 1) + ")\n";
  return body + "  return %v" + std::to_string(n - 1) + "\n}\n";
}

std::vector<FusionCase> fusionCases() {
  return {
      {"vertical.sin2_cos2", "",
       "graph @g(%x: DT[37, 129]) {\n  %s = aten.sin(%x)\n  %c = aten.cos(%x)\n  %s2 = aten.mul.Tensor(%s, %s)\n"
       "  %c2 = aten.mul.Tensor(%c, %c)\n  %y = aten.add.Tensor(%s2, %c2)\n  return %y\n}\n",
       1},
      {"vertical.broadcast_affine_relu", "",
       "graph @g(%x: DT[37, 129], %w: DT[129], %b: DT[37, 1]) {\n  %m = aten.mul.Tensor(%x, %w)\n"
       "  %a = aten.add.Tensor(%m, %b)\n  %y = aten.relu(%a)\n  return %y\n}\n",
       1},
      {"horizontal.siblings", "horizontal",
       "graph @g(%x: DT[37, 129]) {\n  %a = aten.exp(%x)\n  %b = aten.relu(%x)\n  %c = aten.neg(%x)\n"
       "  return %a, %b, %c\n}\n",
       1},
      {"reduction.prologue", "",
       "graph @g(%x: DT[37, 129]) {\n  %e = aten.tanh(%x)\n  %m = aten.mul.Tensor(%e, %e)\n"
       "  %s = aten.sum.dim_IntList(%m) {dim = [1]}\n  return %s\n}\n",
       1},
      {"reduction.epilogue_output_domain", "reduction_epilogue",
       "graph @g(%x: DT[37, 129]) {\n  %s = aten.sum.dim_IntList(%x) {dim = [1]}\n  %y = aten.sigmoid(%s)\n"
       "  return %y\n}\n",
       1},
      {"reduction.epilogue_input_domain", "reduction_epilogue",
       "graph @g(%x: DT[37, 129]) {\n  %m = aten.mean.dim(%x) {dim = [1], keepdim = true}\n"
       "  %y = aten.sub.Tensor(%x, %m)\n  return %y\n}\n",
       1},
      {"reduction.column", "",
       "graph @g(%x: DT[129, 37]) {\n  %e = aten.exp(%x)\n  %s = aten.sum.dim_IntList(%e) {dim = [0]}\n  return "
       "%s\n}\n",
       1},
      // Split reductions: a batch norm's sums over (N, H, W) of 8 channels, and a bias
      // gradient's column sums of 24 columns, each as partials then their reduction (the split
      // forced on every device: runFusionCase).
      {"split.rows_batch_norm_sums", "split_rows",
       "graph @g(%x: DT[32, 8, 16, 16]) {\n  %s = aten.sum.dim_IntList(%x) {dim = [0, 2, 3]}\n  return %s\n}\n", 2},
      {"split.columns_bias_gradient", "split_columns",
       "graph @g(%x: DT[2048, 24]) {\n  %s = aten.sum.dim_IntList(%x) {dim = [0]}\n  return %s\n}\n", 2},
      {"multi_reduction.softmax", "multi_reduction",
       "graph @g(%x: DT[37, 129]) {\n  %y = aten._softmax(%x) {dim = 1, half_to_float = false}\n  return %y\n}\n", 1},
      {"multi_reduction.layernorm", "multi_reduction",
       "graph @g(%x: DT[37, 65], %w: DT[65], %b: DT[65]) {\n"
       "  %y, %mean, %rstd = aten.native_layer_norm(%x, %w, %b) {normalized_shape = [65], eps = 1e-05}\n"
       "  return %y\n}\n",
       1},
      {"library_epilogue.matmul_bias_gelu", "library_epilogue",
       "graph @g(%x: DT[37, 65], %w: DT[33, 65], %b: DT[33]) {\n  %wt = aten.t(%w)\n  %y = aten.addmm(%b, %x, %wt)\n"
       "  %g = aten.gelu(%y)\n  return %g\n}\n",
       0, 1},
      // The forms a GEMM library computes inside itself (cuBLASLt: act(A B + C + bias)); the
      // second through views, as a linear layer on [b, s, k] is traced.
      {"library_epilogue.matmul_bias_residual_relu", "library_epilogue",
       "graph @g(%x: DT[37, 65], %w: DT[33, 65], %b: DT[33], %r: DT[37, 33]) {\n  %wt = aten.t(%w)\n"
       "  %y = aten.addmm(%b, %x, %wt)\n  %s = aten.add.Tensor(%y, %r)\n  %t = aten.relu(%s)\n  return %t\n}\n",
       0, 1},
      {"library_epilogue.matmul_bias_gelu_tanh", "library_epilogue",
       "graph @g(%x: DT[2, 37, 65], %w: DT[33, 65], %b: DT[33]) {\n  %v = aten.view(%x) {size = [74, 65]}\n"
       "  %wt = aten.t(%w)\n  %y = aten.addmm(%b, %v, %wt)\n  %u = aten.view(%y) {size = [2, 37, 33]}\n"
       "  %g = aten.gelu(%u) {approximate = \"tanh\"}\n  return %g\n}\n",
       0, 1},
      {"library_epilogue.conv_bias_relu", "library_epilogue",
       "graph @g(%x: DT[2, 3, 17, 15], %w: DT[8, 3, 3, 3], %b: DT[8]) {\n"
       "  %c = aten.convolution(%x, %w, %b) {stride = [2, 1], padding = [1, 1], dilation = [1, 1], transposed = false, "
       "output_padding = [0, 0], groups = 1}\n  %y = aten.relu(%c)\n  return %y\n}\n",
       0, 1},
      {"inline.views_pad_concat", "",
       "graph @g(%x: DT[5, 7], %y: DT[8, 3]) {\n  %t = aten.t(%x)\n  %s = aten.slice.Tensor(%t) {dim = 0, start = 1, "
       "end = 6}\n"
       "  %p = aten.constant_pad_nd(%s) {pad = [1, 2], value = 0.5}\n  %yt = aten.t(%y)\n  %c = aten.cat(%p, %yt) {dim "
       "= 0}\n"
       "  %r = aten.relu(%c)\n  return %r\n}\n",
       1},
      {"inline.gather_embedding", "",
       "graph @g(%w: DT[11, 9], %i: i64[5, 3]) {\n  %e = aten.embedding(%w, %i)\n  %y = aten.tanh(%e)\n  return "
       "%y\n}\n",
       1},
      {"combining_store.scatter_add", "",
       "graph @g(%x: DT[5, 9], %i: i64[3, 9], %src: DT[3, 9]) {\n  %y = aten.scatter_add(%x, %i, %src) {dim = 0}\n"
       "  return %y\n}\n",
       2},
      {"memory.reuse_chain", "",
       "graph @g(%x: DT[17, 17], %w: DT[17, 17]) {\n  %a = aten.mm(%x, %w)\n  %ta = aten.tanh(%a)\n"
       "  %b = aten.mm(%ta, %w)\n  %tb = aten.tanh(%b)\n  %c = aten.mm(%tb, %w)\n  %tc = aten.tanh(%c)\n"
       "  %d = aten.mm(%tc, %w)\n  return %d\n}\n",
       -1, 0, true},
      {"limit.long_chain", "", longChain(700), -1, 0, false, true},
  };
}

}  // namespace

void addFusionCases(Suite& s) {
  for (const FusionCase& fc : fusionCases())
    for (const char* dt : {"f32", "f64"})
      s.add("fusion", "fusion." + fc.name + "." + dt,
            [fc, dtype = std::string(dt)](const CaseContext& c) { return runFusionCase(c, fc, dtype); });
}

}  // namespace plugsdk::conformance
