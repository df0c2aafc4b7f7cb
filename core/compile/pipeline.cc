// compileGraph: the stages in order, with dumps.
#include "core/compile/pipeline.h"

#include <cstdlib>

#include "core/dump/dumper.h"

namespace plugsdk::compile {

std::string optionsFingerprint(const CompileOptions& o) {
  std::string s = "keep";
  for (const std::string& k : o.decomp.keep) s += " " + k;
  s += "; expand";
  for (const std::string& k : o.decomp.expand) s += " " + k;
  s += "; mixed matmul " + std::to_string(o.decomp.mixedMatmul) + "; convolution dtypes";
  for (ir::DType t : o.decomp.convolutionDtypes) s.append(" ").append(ir::dtypeName(t));
  s += o.decomp.convolutionDtypes.empty() ? " all" : "";
  s += "; transposed " + std::to_string(o.decomp.convolutionTransposed) + "; matmul dtypes";
  for (ir::DType t : o.decomp.matmulDtypes) s.append(" ").append(ir::dtypeName(t));
  s += o.decomp.matmulDtypes.empty() ? " all" : "";
  const decomp::DecompOptions::SdpaForms& a = o.decomp.sdpa;
  s += "; sdpa dtypes";
  for (ir::DType t : a.dtypes) s.append(" ").append(ir::dtypeName(t));
  s += (a.dtypes.empty() ? " all" : "") + std::string(" forms ") + std::to_string(a.boolMask) +
       std::to_string(a.floatMask) + std::to_string(a.dropout) + std::to_string(a.causal) +
       std::to_string(a.unequalHeadDims) + " head " + std::to_string(a.headDimMax) + " " +
       std::to_string(a.headDimMultiple);
  const sched::FusionCaps& c = o.schedule.caps;
  s += "; depth " + std::to_string(o.decomp.maxDepth) + "; fuse " + std::to_string(c.fuse) +
       std::to_string(c.horizontal) + std::to_string(c.reductionEpilogue) + std::to_string(c.multiReduction) +
       std::to_string(c.matmulEpilogue) + std::to_string(c.convolutionEpilogue) + "; stmts " +
       std::to_string(c.maxKernelStmts) + "; recompute " + std::to_string(c.maxRecompute) + " " +
       std::to_string(c.maxRecomputeReads) + "; split " + std::to_string(c.splitRowReductions) + " " +
       std::to_string(c.splitColumnReductions) + "; plan " + std::to_string(o.schedule.planMemory);
  return s;
}

CompileOptions optionsFromEnvironment() {
  CompileOptions o;
  if (const char* d = std::getenv("PLUGSDK_DUMP")) o.dumpDir = d;
  return o;
}

StatusOr<Compiled> compileGraph(const ir::Context& ctx, const ir::Graph& graph, const CompileOptions& options) {
  const dump::Dumper dumper(options.dumpDir);
  RETURN_IF_ERROR(dumper.input(graph));
  ASSIGN_OR_RETURN(ir::Graph prims, decomp::decompose(ctx, decomp::makeDefaultDecompositions(), graph, options.decomp));
  RETURN_IF_ERROR(dumper.prims(prims));
  sched::ScheduleStats stats;
  auto program = sched::schedule(ctx, prims, options.schedule, &stats);
  if (!program.isOk()) return program.status().withContext("scheduling @" + graph.name());
  RETURN_IF_ERROR(dumper.program(prims, *program));
  return Compiled{std::move(prims), std::move(*program), stats};
}

}  // namespace plugsdk::compile
