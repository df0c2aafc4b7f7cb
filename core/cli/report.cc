// `plugsdk report`: for each graph, what prim reduction and scheduling made of it -- prim
// nodes, kernels without and with fusion, library calls, temporary memory without fusion,
// with fusion but no reuse, and planned -- and the largest error of the fused program
// against the reference executor on the original graph (random inputs, float64 graphs
// should agree to ~1e-15).
#include <chrono>
#include <cmath>
#include <map>

#include "core/cli/cli_util.h"
#include "core/compile/pipeline.h"
#include "core/exec/reference_executor.h"
#include "core/sched/interpreter.h"
#include "core/text/parser.h"

namespace plugsdk::cli {

namespace {

using ir::SymExpr;

struct Row {
  std::string name;
  int atenNodes = 0, primNodes = 0, unfusedKernels = 0, kernels = 0, calls = 0;
  double unfusedBytes = 0, fusedBytes = 0, plannedBytes = 0, maxRelErr = 0;
  double refMs = 0, progMs = 0;
};

double evalBytes(const SymExpr& e, const std::map<std::string, int64_t>& syms) {
  auto v = e.evaluate(syms);
  return v ? static_cast<double>(*v) : std::nan("");
}

/// Largest |a - b| / max(|b|, 1e-300) over floating outputs; integers must match exactly (else inf).
double maxRelError(const std::vector<exec::HostTensor>& a, const std::vector<exec::HostTensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t k = 0; k < a[i].numel(); ++k) {
      const double x = a[i].getDouble(k), y = b[i].getDouble(k);
      if (std::isnan(x) && std::isnan(y)) continue;
      if (!a[i].isFloating()) {
        if (a[i].getInt(k) != b[i].getInt(k)) return INFINITY;
        continue;
      }
      const double err = std::fabs(x - y) / std::max(std::fabs(y), 1e-300);
      if (!(err <= worst)) worst = std::isnan(err) ? INFINITY : err;
    }
  return worst;
}

StatusOr<Row> reportOne(const std::shared_ptr<const ir::Context>& ctx, const std::string& file,
                        std::map<std::string, int64_t> syms) {
  ASSIGN_OR_RETURN(ir::Graph g, text::parseGraphFile(*ctx, file));
  Row row;
  row.name = g.name();
  row.atenNodes = static_cast<int>(g.nodes().size());
  compile::CompileOptions fused = compile::optionsFromEnvironment();
  ASSIGN_OR_RETURN(compile::Compiled c, compile::compileGraph(*ctx, g, fused));
  compile::CompileOptions unfused;
  unfused.schedule.caps.fuse = false;
  unfused.schedule.planMemory = false;
  ASSIGN_OR_RETURN(compile::Compiled u, compile::compileGraph(*ctx, g, unfused));
  // Random inputs (symbols default to 8), as `plugsdk run` makes them.
  std::mt19937_64 rng(0);
  std::vector<exec::HostTensor> inputs;
  for (const ir::Value* v : g.inputs()) {
    std::vector<int64_t> shape;
    for (const SymExpr& d : v->type().shape) {
      for (const auto& s : d.symbols()) syms.emplace(s, 8);
      auto n = d.evaluate(syms);
      if (!n) return invalidArgument("input " + v->ref() + ": cannot size dim " + d.toString());
      shape.push_back(*n);
    }
    inputs.push_back(randomTensor(v->type(), shape, rng));
  }
  exec::ReferenceExecutor ref(ctx);
  exec::RunStats rs;
  ASSIGN_OR_RETURN(auto want, ref.run(g, inputs, &rs));
  sched::ProgramInterpreter interp(ctx);
  auto t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(auto got, interp.run(c.program, inputs));
  row.progMs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3;
  row.refMs = rs.seconds * 1e3;
  row.maxRelErr = maxRelError(got, want);
  row.primNodes = c.stats.primNodes;
  row.unfusedKernels = u.stats.kernels + u.stats.libraryCalls;
  row.kernels = c.stats.kernels;
  row.calls = c.stats.libraryCalls;
  row.unfusedBytes = evalBytes(u.stats.tempBytesUnplanned, syms);
  row.fusedBytes = evalBytes(c.stats.tempBytesUnplanned, syms);
  row.plannedBytes = evalBytes(c.stats.tempBytesPlanned, syms);
  return row;
}

std::string kib(double b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", b / 1024.0);
  return buf;
}

}  // namespace

int cmdReport(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::map<std::string, int64_t> syms;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--sym" && i + 1 < args.size()) {
      const std::string& kv = args[++i];
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) return usageError("--sym expects NAME=VALUE, got '" + kv + "'");
      try {
        syms[kv.substr(0, eq)] = std::stoll(kv.substr(eq + 1));
      } catch (const std::exception&) {
        return usageError("bad number in --sym " + kv);
      }
    } else if (!args[i].empty() && args[i][0] == '-') {
      return usageError("unknown option '" + args[i] + "'");
    } else {
      files.push_back(args[i]);
    }
  }
  if (files.empty()) return usageError("report needs at least one FILE");
  auto ctx = ir::makeDefaultContext();
  std::printf(
      "| graph | ATen nodes | prim nodes | kernels unfused | kernels fused + library calls | temp KiB unfused "
      "| temp KiB fused | temp KiB planned | max rel err vs reference | reference ms | program ms |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  int rc = 0;
  for (const std::string& f : files) {
    auto row = reportOne(ctx, f, syms);
    if (!row.isOk()) {
      fail(row.status().withContext(f));
      rc = 1;
      continue;
    }
    const Row& r = *row;
    std::printf("| %s | %d | %d | %d | %d + %d | %s | %s | %s | %.2e | %.1f | %.1f |\n", r.name.c_str(), r.atenNodes,
                r.primNodes, r.unfusedKernels, r.kernels, r.calls, kib(r.unfusedBytes).c_str(),
                kib(r.fusedBytes).c_str(), kib(r.plannedBytes).c_str(), r.maxRelErr, r.refMs, r.progMs);
  }
  return rc;
}

}  // namespace plugsdk::cli
