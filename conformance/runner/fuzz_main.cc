// plugsdk-fuzz: the graph fuzzer and the minimizer as a tool (docs/conformance.md, "The graph
// fuzzer and the minimizer").
//   plugsdk-fuzz run      --plugin P [--device N] [--seed S] [--seconds T] [--count K] [--out DIR]
//                         [--float f32|f64|f16|bf16]
//   plugsdk-fuzz check    --plugin P [--device N] [--seed S] (GRAPH.pgraph | --generated [--print])
//   plugsdk-fuzz minimize --plugin P [--device N] [--seed S] (GRAPH.pgraph | --generated) --out SMALL.pgraph
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "conformance/runner/fuzz_check.h"
#include "conformance/runner/fuzz_graph.h"
#include "conformance/runner/minimize.h"
#include "core/plugin/loader.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

namespace plugsdk::conformance {
namespace {

const char* kUsage =
    "usage: plugsdk-fuzz run      --plugin P [--device N] [--seed S] [--seconds T] [--count K] [--out DIR]\n"
    "                             [--float f32|f64|f16|bf16]\n"
    "       plugsdk-fuzz check    --plugin P [--device N] [--seed S] (GRAPH.pgraph | --generated [--print])\n"
    "       plugsdk-fuzz minimize --plugin P [--device N] [--seed S] (GRAPH.pgraph | --generated) --out SMALL.pgraph\n";

struct Options {
  std::string verb, plugin, graph, out;
  uint32_t device = 0;
  uint64_t seed = 20261122;
  double seconds = 10;
  uint64_t count = 0;  ///< run: stop after this many graphs too (0: no limit)
  bool generated = false, print = false;
  FuzzOptions fuzz;  ///< run: --float DT fixes the graphs' float dtype
};

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// The seed of the k-th graph of a run (splitmix64 of the run's seed and k).
uint64_t graphSeed(uint64_t seed, uint64_t k) {
  uint64_t z = seed + (k + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

bool writeFile(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  return static_cast<bool>(f);
}

/// Minimizes g (which fails as `original`) and writes it to `path` with its rerun command.
bool minimizeTo(const plugin::Device& device, const std::shared_ptr<const ir::Context>& ctx, const ir::Graph& g,
                uint64_t seed, const Failure& original, const std::string& origin, const std::string& path) {
  const StillFails stillFails = [&](const ir::Graph& c) {
    return checkFuzzGraph(device, ctx, c, seed).sameAs(original);
  };
  auto small = minimizeGraph(*ctx, g, stillFails, [](const std::string& line) {
    std::printf("    %s\n", line.c_str());
    std::fflush(stdout);
  });
  if (!small.isOk()) {
    std::fprintf(stderr, "plugsdk-fuzz: %s\n", small.status().toString().c_str());
    return false;
  }
  const Failure now = checkFuzzGraph(device, ctx, *small, seed);
  const std::string rerun = fuzzCommand("check", device, seed) + " " + path;
  const std::string header = "# minimized by plugsdk-fuzz from " + origin + ": " + std::to_string(g.nodes().size()) +
                             " nodes -> " + std::to_string(small->nodes().size()) +
                             "\n# fails with: " + now.describe() + "\n# rerun: " + rerun + "\n";
  if (!writeFile(path, header + text::printGraph(*small))) {
    std::fprintf(stderr, "plugsdk-fuzz: cannot write %s\n", path.c_str());
    return false;
  }
  std::printf("    wrote %s (%zu nodes)\n    rerun: %s\n", path.c_str(), small->nodes().size(), rerun.c_str());
  return true;
}

/// The graph a check or minimize works on: the file, or the generated graph of the seed.
StatusOr<ir::Graph> loadGraph(const Options& o, const plugin::Device& d, const ir::Context& ctx, std::string* text) {
  if (!o.generated) return text::parseGraphFile(ctx, o.graph);
  *text = randomGraph(o.seed, d.caps());
  return text::parseGraph(ctx, *text);
}

int runFuzz(const Options& o, const plugin::Device& d) {
  auto ctx = ir::makeDefaultContext();
  const std::string dir = o.out.empty() ? "fuzz-out" : o.out;
  uint64_t graphs = 0, failures = 0, rejected = 0, nodes = 0, worstGraph = 0;
  double worst = 0;  // the largest error / bound of a passing graph: how close to the tolerance
  const auto t0 = Clock::now();
  double lastReport = 0;
  std::printf("plugsdk-fuzz: %s, seed %llu, %.0f s\n", d.describe().c_str(), static_cast<unsigned long long>(o.seed),
              o.seconds);
  for (uint64_t k = 0; since(t0) < o.seconds && (o.count == 0 || k < o.count); ++k) {
    const uint64_t seed = graphSeed(o.seed, k);
    const std::string text = randomGraph(seed, d.caps(), o.fuzz);
    auto g = text::parseGraph(*ctx, text);
    std::error_code ec;
    if (!g.isOk()) {
      ++rejected;
      std::filesystem::create_directories(dir, ec);
      const std::string path = dir + "/rejected-" + std::to_string(k) + ".pgraph";
      writeFile(path, "# rejected by the core: " + g.status().toString() + "\n" + text);
      std::printf("graph %llu (seed %llu) REJECTED by the core: %s\n    wrote %s\n", static_cast<unsigned long long>(k),
                  static_cast<unsigned long long>(seed), g.status().toString().c_str(), path.c_str());
      continue;
    }
    ++graphs;
    nodes += g->nodes().size();
    const Failure f = checkFuzzGraph(d, ctx, *g, seed);
    if (f.worstRatio > worst) worst = f.worstRatio, worstGraph = k;
    if (f.failed()) {
      ++failures;
      std::filesystem::create_directories(dir, ec);
      const std::string base = dir + "/fail-" + std::to_string(k);
      writeFile(base + ".orig.pgraph", "# " + f.describe() + "\n# rerun: " + fuzzCommand("check", d, seed) + " " +
                                           base + ".orig.pgraph\n" + text);
      std::printf("graph %llu (seed %llu, %zu nodes) FAILED: %s\n", static_cast<unsigned long long>(k),
                  static_cast<unsigned long long>(seed), g->nodes().size(), f.describe().c_str());
      minimizeTo(d, ctx, *g, seed, f, base + ".orig.pgraph", base + ".pgraph");
    }
    if (since(t0) - lastReport >= 1) {
      lastReport = since(t0);
      std::printf("[%5.1f s] %llu graphs, %llu failures, %llu rejected\n", lastReport,
                  static_cast<unsigned long long>(graphs), static_cast<unsigned long long>(failures),
                  static_cast<unsigned long long>(rejected));
      std::fflush(stdout);
    }
  }
  std::printf("plugsdk-fuzz: %llu graphs (%llu nodes) in %.1f s, %llu failures, %llu rejected (seed %llu)\n",
              static_cast<unsigned long long>(graphs), static_cast<unsigned long long>(nodes), since(t0),
              static_cast<unsigned long long>(failures), static_cast<unsigned long long>(rejected),
              static_cast<unsigned long long>(o.seed));
  std::printf("plugsdk-fuzz: passing graphs came within %.3g of the tolerance at worst (graph %llu)\n", worst,
              static_cast<unsigned long long>(worstGraph));
  return failures || rejected ? 1 : 0;
}

int checkOne(const Options& o, const plugin::Device& d) {
  auto ctx = ir::makeDefaultContext();
  std::string text;
  auto g = loadGraph(o, d, *ctx, &text);
  if (o.print && !text.empty()) std::printf("%s", text.c_str());
  if (!g.isOk()) {
    std::fprintf(stderr, "plugsdk-fuzz: %s\n", g.status().toString().c_str());
    return 1;
  }
  const Failure f = checkFuzzGraph(d, ctx, *g, o.seed);
  std::printf("%s\n", f.describe().c_str());
  return f.failed() ? 1 : 0;
}

int minimizeOne(const Options& o, const plugin::Device& d) {
  auto ctx = ir::makeDefaultContext();
  std::string text;
  auto g = loadGraph(o, d, *ctx, &text);
  if (!g.isOk()) {
    std::fprintf(stderr, "plugsdk-fuzz: %s\n", g.status().toString().c_str());
    return 1;
  }
  const Failure f = checkFuzzGraph(d, ctx, *g, o.seed);
  if (!f.failed()) {
    std::fprintf(stderr, "plugsdk-fuzz: the graph does not fail (%s): nothing to minimize\n", f.describe().c_str());
    return 1;
  }
  std::printf("%s: %zu nodes, %s\n", o.generated ? "generated graph" : o.graph.c_str(), g->nodes().size(),
              f.describe().c_str());
  const std::string origin = o.generated ? "the generated graph of seed " + std::to_string(o.seed) : o.graph;
  return minimizeTo(d, ctx, *g, o.seed, f, origin, o.out) ? 0 : 1;
}

}  // namespace
}  // namespace plugsdk::conformance

int main(int argc, char** argv) {
  using namespace plugsdk;
  using conformance::kUsage;
  conformance::Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || (args[0] != "run" && args[0] != "check" && args[0] != "minimize")) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  o.verb = args[0];
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool hasValue = i + 1 < args.size();
    try {
      if (a == "--plugin" && hasValue)
        o.plugin = args[++i];
      else if (a == "--device" && hasValue)
        o.device = static_cast<uint32_t>(std::stoul(args[++i]));
      else if (a == "--seed" && hasValue)
        o.seed = std::stoull(args[++i]);
      else if (a == "--seconds" && hasValue)
        o.seconds = std::stod(args[++i]);
      else if (a == "--count" && hasValue)
        o.count = std::stoull(args[++i]);
      else if (a == "--out" && hasValue)
        o.out = args[++i];
      else if (a == "--float" && hasValue && ir::parseDType(args[i + 1]) &&
               ir::isFloating(*ir::parseDType(args[i + 1])))
        o.fuzz.floatType = ir::parseDType(args[++i]);
      else if (a == "--generated")
        o.generated = true;
      else if (a == "--print")
        o.print = true;
      else if (!a.empty() && a[0] != '-' && o.graph.empty() && o.verb != "run")
        o.graph = a;
      else {
        std::fprintf(stderr, "plugsdk-fuzz: unknown or incomplete option '%s'\n%s", a.c_str(), kUsage);
        return 2;
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "plugsdk-fuzz: bad number after '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  const bool needsGraph = o.verb != "run";
  if (o.plugin.empty() || (needsGraph && o.graph.empty() == !o.generated) || (o.verb == "minimize" && o.out.empty())) {
    std::fprintf(stderr, "plugsdk-fuzz: missing --plugin, a graph (a file or --generated) or --out\n%s", kUsage);
    return 2;
  }
  auto p = plugin::Loader(plugin::Loader::defaultSearchPath()).load(o.plugin);
  if (!p.isOk()) {
    std::fprintf(stderr, "plugsdk-fuzz: %s\n", p.status().toString().c_str());
    return 1;
  }
  auto d = plugin::Device::open(*p, o.device);
  if (!d.isOk()) {
    std::fprintf(stderr, "plugsdk-fuzz: %s\n", d.status().toString().c_str());
    return 1;
  }
  if (o.verb == "run") return conformance::runFuzz(o, **d);
  if (o.verb == "check") return conformance::checkOne(o, **d);
  return conformance::minimizeOne(o, **d);
}
