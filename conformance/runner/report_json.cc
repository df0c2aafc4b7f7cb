// DIR/report.json: the machine-readable certification report (fields in docs/conformance.md).
#include <fstream>

#include "conformance/runner/report.h"
#include "core/ir/dtype.h"

namespace plugsdk::conformance {
namespace {

std::string stringList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + jsonString(items[i]);
  return out + "]";
}

/// ["f32", "f64"] from a PLUGSDK_DTYPE_BIT set.
std::string dtypeList(uint32_t bits) {
  std::vector<std::string> names;
  for (int t = 0; t < ir::kNumDTypes; ++t)
    if (bits >> t & 1u) names.emplace_back(ir::dtypeName(static_cast<ir::DType>(t)));
  return stringList(names);
}

}  // namespace

Status writeJson(const std::string& file, const Report& r) {
  std::ofstream f(file);
  if (!f) return internalError("cannot write " + file);
  const Summary& s = r.summary;
  const plugin::DeviceCaps& k = r.device.caps;
  const Expectations& e = *r.expectations;
  f << "{\n  \"summary\": {\"passed\": " << s.passed << ", \"failed\": " << s.failed << ", \"skipped\": " << s.skipped
    << ", \"xfail\": " << s.xfail << ", \"xpass\": " << s.xpass
    << ", \"verdict\": " << jsonString(s.certified ? "certified" : "not certified")
    << ", \"certified_tiers\": " << stringList(s.certifiedTiers)
    << ", \"verdict_reason\": " << jsonString(s.verdictReason) << ", \"seconds\": " << reportNumber(r.seconds)
    << "},\n";
  f << "  \"tiers\": [\n";
  for (size_t i = 0; i < s.tiers.size(); ++i) {
    const TierSummary& t = s.tiers[i];
    f << "    {\"tier\": " << jsonString(t.tier) << ", \"claimed\": " << (t.claimed ? "true" : "false")
      << ", \"certified\": " << (t.certified ? "true" : "false") << ", \"passed\": " << t.passed
      << ", \"failed\": " << t.failed << ", \"skipped\": " << t.skipped << ", \"xfail\": " << t.xfail
      << ", \"xpass\": " << t.xpass << ", \"time_ms\": " << reportNumber(t.ms) << "}"
      << (i + 1 < s.tiers.size() ? "," : "") << "\n";
  }
  f << "  ],\n";
  f << "  \"plugin\": " << jsonString(r.device.pluginPath)
    << ",\n  \"plugin_name\": " << jsonString(r.device.pluginName) << ",\n  \"abi\": \"" << r.device.abiMajor << "."
    << r.device.abiMinor << "\",\n";
  f << "  \"device\": {\"index\": " << r.device.index << ", \"name\": " << jsonString(k.name)
    << ", \"dtypes\": " << jsonString(k.dtypeList()) << ", \"library_ops\": " << k.libraryOps
    << ", \"epilogue_ops\": " << k.epilogueOps << ", \"memory_kinds\": " << k.memoryKinds
    << ", \"memory_bytes\": " << k.memoryBytes << ", \"max_buffer_bytes\": " << k.maxBufferBytes
    << ", \"vector_bits\": " << k.vectorBits << ", \"max_kernel_stmts\": " << k.maxKernelStmts
    << ", \"fuses_horizontal\": " << (k.fusesHorizontal ? "true" : "false")
    << ", \"fuses_reduction_epilogue\": " << (k.fusesReductionEpilogue ? "true" : "false")
    << ", \"fuses_multi_reduction\": " << (k.fusesMultiReduction ? "true" : "false")
    << ", \"takes_subgraphs\": " << (k.takesSubgraphs ? "true" : "false") << "},\n";
  std::vector<std::string> tiers;
  if (e.tiers) tiers.assign(e.tiers->begin(), e.tiers->end());
  f << "  \"expectations\": {\"file\": " << jsonString(e.source)
    << ", \"tiers\": " << (e.tiers ? stringList(tiers) : "\"every\"")
    << ", \"dtypes\": " << dtypeList(e.claimedDtypes(k)) << ", \"unsupported\": " << e.unsupported.size()
    << ", \"xfail\": " << e.xfail.size() << "},\n";
  f << "  \"seed\": " << r.seed << ",\n  \"jobs\": " << r.jobs << ",\n  \"timeout_s\": " << r.timeoutS
    << ",\n  \"cases\": [\n";
  for (size_t i = 0; i < r.results.size(); ++i) {
    const CaseResult& c = r.results[i];
    f << "    {\"tier\": " << jsonString(c.c->tier) << ", \"name\": " << jsonString(c.c->name)
      << ", \"status\": " << jsonString(statusName(c.status)) << ", \"error\": " << jsonString(c.error)
      << ", \"max_error\": " << reportNumber(c.maxError) << ", \"bound\": " << reportNumber(c.bound)
      << ", \"time_ms\": " << reportNumber(c.ms) << ", \"ran\": " << (c.ran ? "true" : "false");
    if (!c.expectation.empty()) f << ", \"expectation\": " << jsonString(c.expectation);
    f << ", \"rerun\": " << jsonString(c.rerun) << "}" << (i + 1 < r.results.size() ? "," : "") << "\n";
  }
  f << "  ]\n}\n";
  return f ? Status::ok() : internalError("cannot write " + file);
}

}  // namespace plugsdk::conformance
