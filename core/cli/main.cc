// The `plugsdk` command line: check, print and run .pgraph files, list the op set.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/cli/cli_util.h"
#include "core/compile/pipeline.h"
#include "core/decomp/decompose.h"
#include "core/exec/npy.h"
#include "core/exec/reference_executor.h"
#include "core/ir/verifier.h"
#include "core/plugin/device_program.h"
#include "core/plugin/loader.h"
#include "core/prims/prims.h"
#include "core/sched/interpreter.h"
#include "core/sched/schedule.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

namespace plugsdk::cli {
const char* kUsage =
    "usage: plugsdk <command> [options]\n"
    "\n"
    "commands:\n"
    "  check FILE...          parse and verify .pgraph files\n"
    "  print FILE             print a graph in canonical form\n"
    "  lower FILE [--to STAGE]  print the graph lowered to STAGE: prims (ATen ops decomposed),\n"
    "                         program (fused kernels and library calls), program-unfused,\n"
    "                         program-loops (library ops expanded into loop kernels),\n"
    "                         program-im2col (convolution and sdpa expanded, matmul kept)\n"
    "  run FILE [options]     execute a graph and print its outputs and the time taken\n"
    "      --backend NAME       where to run it: reference (the default) or a plugin by name\n"
    "                           (plugsdk plugins lists them); a plugin runs the program stage\n"
    "      --device N           the plugin's device (default 0)\n"
    "      --backend-options S  plugin-specific client options, \"key=value;...\"\n"
    "      --lower STAGE        run the graph lowered to STAGE first: aten (as written, the\n"
    "                           default), prims, or a program stage (on the program interpreter)\n"
    "      --input NAME=PATH    an input from a .npy file (others are random)\n"
    "      --sym NAME=VALUE     the value of a size symbol for random inputs (default 8)\n"
    "      --seed N             seed for random inputs (default 0)\n"
    "      --save DIR           write outputs as DIR/<output-name>.npy\n"
    "      --repeat N           run N times, report the median time\n"
    "      --batch K            on a device: K runs per synchronize, each repetition's time / K\n"
    "      --json FILE          also write the times (and compile time) as JSON\n"
    "      --quiet              do not print output values\n"
    "  ops [--tsv]            list the registered ops (name, family, reference kernel, schema)\n"
    "  decomps                list the ATen-level ops with decomposition rules (one per line)\n"
    "  plugins                list the backend plugins on the search path (PLUGSDK_PLUGIN_PATH,\n"
    "                         then the install dir): ABI version and devices, or why one fails to load\n"
    "  report FILE... [--sym NAME=VALUE]  per graph: prim nodes, kernels before/after fusion,\n"
    "                         temporary memory before/after planning, program vs reference error\n"
    "  autograd FILE [options]  the training graphs (core/autograd): joint, forward and backward\n"
    "                         sizes, bytes saved for the backward with and without recomputation\n"
    "      --requires-grad A,B  inputs to differentiate (default: every floating input)\n"
    "      --no-recompute       save every forward value the backward reads\n"
    "      --print forward|backward  print that graph instead\n"
    "  --version\n";
}  // namespace plugsdk::cli

namespace {

using namespace plugsdk;
using cli::fail;
using cli::kUsage;
using cli::randomTensor;
using cli::usageError;

void printTensor(const std::string& name, const exec::HostTensor& t) {
  std::printf("%s: %s\n  [", name.c_str(), t.typeString().c_str());
  int64_t n = std::min<int64_t>(t.numel(), 8);
  for (int64_t i = 0; i < n; ++i) {
    if (t.isFloating())
      std::printf("%s%.6g", i ? ", " : "", t.getDouble(i));
    else
      std::printf("%s%lld", i ? ", " : "", static_cast<long long>(t.getInt(i)));
  }
  std::printf("%s]\n", t.numel() > n ? ", ..." : "");
}

int cmdCheck(const ir::Context& ctx, const std::vector<std::string>& files) {
  if (files.empty()) return usageError("check needs at least one FILE");
  int rc = 0;
  for (const auto& f : files) {
    auto g = text::parseGraphFile(ctx, f);
    if (!g.isOk()) {
      fail(g.status());
      rc = 1;
      continue;
    }
    std::printf("%s: ok (%zu nodes, %zu inputs, %zu outputs)\n", f.c_str(), g->nodes().size(), g->inputs().size(),
                g->outputs().size());
  }
  return rc;
}

int cmdPrint(const ir::Context& ctx, const std::vector<std::string>& args) {
  if (args.size() != 1) return usageError("print needs exactly one FILE");
  auto g = text::parseGraphFile(ctx, args[0]);
  if (!g.isOk()) return fail(g.status());
  std::fputs(text::printGraph(*g).c_str(), stdout);
  return 0;
}

bool isProgramStage(const std::string& stage) {
  return stage == "program" || stage == "program-unfused" || stage == "program-loops" || stage == "program-im2col";
}

/// A graph lowered through the pipeline (PLUGSDK_DUMP honoured): stage "aten" keeps the
/// graph, "prims" stops after prim reduction, the program stages also schedule.
struct Lowered {
  ir::Graph graph;
  std::optional<sched::Program> program;
};

/// `caps`: lower for that device (its fusion flags; library ops it lacks become loops).
StatusOr<Lowered> lowerTo(const ir::Context& ctx, ir::Graph g, const std::string& stage,
                          const plugin::DeviceCaps* caps = nullptr) {
  if (stage == "aten") return Lowered{std::move(g), std::nullopt};
  if (stage != "prims" && !isProgramStage(stage))
    return invalidArgument("unknown stage '" + stage +
                           "' (stages: aten, prims, program, program-unfused, program-loops, program-im2col)");
  compile::CompileOptions options = compile::optionsFromEnvironment();
  options.schedule.caps.fuse = stage != "program-unfused";
  if (stage == "program-loops") options.decomp.expand.insert(prims::kLibraryPrims.begin(), prims::kLibraryPrims.end());
  if (stage == "program-im2col")  // a device with matmul only
    options.decomp.expand = {"prims.convolution", "prims.sdpa", "prims.sdpa_backward"};
  if (caps) options = plugin::optionsFor(*caps, options);
  ASSIGN_OR_RETURN(compile::Compiled c, compile::compileGraph(ctx, g, options));
  if (stage == "prims") return Lowered{std::move(c.prims), std::nullopt};
  return Lowered{std::move(c.prims), std::move(c.program)};
}

int cmdLower(const ir::Context& ctx, const std::vector<std::string>& args) {
  std::string file, stage = "prims";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--to" && i + 1 < args.size())
      stage = args[++i];
    else if (!args[i].empty() && args[i][0] == '-')
      return usageError("unknown option '" + args[i] + "'");
    else if (file.empty())
      file = args[i];
    else
      return usageError("lower takes one FILE");
  }
  if (file.empty()) return usageError("lower needs a FILE");
  auto g = text::parseGraphFile(ctx, file);
  if (!g.isOk()) return fail(g.status());
  auto lowered = lowerTo(ctx, std::move(*g), stage);
  if (!lowered.isOk()) return fail(lowered.status());
  if (lowered->program)
    std::fputs(sched::printProgram(*lowered->program).c_str(), stdout);
  else
    std::fputs(text::printGraph(lowered->graph).c_str(), stdout);
  return 0;
}

int cmdRun(const std::shared_ptr<const ir::Context>& ctx, const std::vector<std::string>& args) {
  std::string file, backend = "reference", saveDir, stage = "aten", backendOptions, jsonFile;
  uint32_t deviceIndex = 0;
  bool stageGiven = false;
  std::map<std::string, std::string> inputFiles;
  std::map<std::string, int64_t> syms;
  uint64_t seed = 0;
  int repeat = 1;
  int batch = 1;
  bool quiet = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* opt) -> const std::string* {
      if (i + 1 >= args.size()) {
        usageError(std::string(opt) + " needs a value");
        return nullptr;
      }
      return &args[++i];
    };
    auto splitKV = [](const std::string& kv, std::string& k, std::string& v) {
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) return false;
      k = kv.substr(0, eq);
      v = kv.substr(eq + 1);
      return true;
    };
    try {
      if (a == "--backend") {
        auto v = value("--backend");
        if (!v) return 2;
        backend = *v;
      } else if (a == "--device") {
        auto v = value("--device");
        if (!v) return 2;
        deviceIndex = static_cast<uint32_t>(std::stoul(*v));
      } else if (a == "--backend-options") {
        auto v = value("--backend-options");
        if (!v) return 2;
        backendOptions = *v;
      } else if (a == "--input") {
        auto v = value("--input");
        if (!v) return 2;
        std::string k, p;
        if (!splitKV(*v, k, p)) return usageError("--input expects NAME=PATH, got '" + *v + "'");
        if (!k.empty() && k[0] == '%') k = k.substr(1);
        inputFiles[k] = p;
      } else if (a == "--sym") {
        auto v = value("--sym");
        if (!v) return 2;
        std::string k, n;
        if (!splitKV(*v, k, n)) return usageError("--sym expects NAME=VALUE, got '" + *v + "'");
        syms[k] = std::stoll(n);
        if (syms[k] < 0) return usageError("--sym " + k + " must be >= 0");
      } else if (a == "--seed") {
        auto v = value("--seed");
        if (!v) return 2;
        seed = std::stoull(*v);
      } else if (a == "--save") {
        auto v = value("--save");
        if (!v) return 2;
        saveDir = *v;
      } else if (a == "--repeat") {
        auto v = value("--repeat");
        if (!v) return 2;
        repeat = std::max(1, std::stoi(*v));
      } else if (a == "--batch") {
        auto v = value("--batch");
        if (!v) return 2;
        batch = std::max(1, std::stoi(*v));
      } else if (a == "--json") {
        auto v = value("--json");
        if (!v) return 2;
        jsonFile = *v;
      } else if (a == "--lower") {
        auto v = value("--lower");
        if (!v) return 2;
        stage = *v;
        stageGiven = true;
      } else if (a == "--quiet")
        quiet = true;
      else if (!a.empty() && a[0] == '-')
        return usageError("unknown option '" + a + "'");
      else if (file.empty())
        file = a;
      else
        return usageError("run takes one FILE");
    } catch (const std::exception&) {
      return usageError("bad number in '" + a + " " + args[i] + "'");
    }
  }
  if (file.empty()) return usageError("run needs a FILE");
  std::unique_ptr<plugin::Device> device;
  if (backend != "reference") {
    plugin::Loader loader(plugin::Loader::defaultSearchPath());
    auto p = loader.load(backend);
    if (!p.isOk()) {
      std::string have;
      for (const std::string& n : loader.available()) have += " " + n;
      return fail(p.status().withContext("backend '" + backend +
                                         "' (plugins found:" + (have.empty() ? std::string(" none") : have) + ")"));
    }
    auto d = plugin::Device::open(*p, deviceIndex, backendOptions);
    if (!d.isOk()) return fail(d.status());
    device = std::move(*d);
    if (!stageGiven) stage = "program";
    if (!isProgramStage(stage))
      return usageError("--backend " + backend + " runs a program: --lower must be a program stage, not " + stage);
  }
  auto parsed = text::parseGraphFile(*ctx, file);
  if (!parsed.isOk()) return fail(parsed.status());
  std::vector<std::string> outNames;  // as written: lowering may rename or forward outputs
  for (const ir::Value* v : parsed->outputs()) outNames.push_back(v->name());
  auto lowered = lowerTo(*ctx, std::move(*parsed), stage, device ? &device->caps() : nullptr);
  if (!lowered.isOk()) return fail(lowered.status());
  const ir::Graph* g = &lowered->graph;

  // Unknown --input names are an error, not silently ignored.
  for (const auto& [name, path] : inputFiles) {
    bool found = false;
    for (const ir::Value* v : g->inputs()) found |= v->name() == name;
    if (!found) return fail(invalidArgument("--input " + name + ": the graph has no input %" + name));
  }
  std::vector<exec::HostTensor> inputs;
  std::mt19937_64 rng(seed);
  // Symbols bound by given .npy inputs first.
  std::vector<std::optional<exec::HostTensor>> loaded(g->inputs().size());
  for (size_t i = 0; i < g->inputs().size(); ++i) {
    const ir::Value* v = g->inputs()[i];
    auto it = inputFiles.find(v->name());
    if (it == inputFiles.end()) continue;
    auto t = exec::readNpy(it->second);
    if (!t.isOk()) return fail(t.status());
    if (v->type().dtype == ir::DType::kBF16 && t->dtype() == ir::DType::kF32) {
      exec::HostTensor c(ir::DType::kBF16, t->shape());
      for (int64_t k = 0; k < t->numel(); ++k)
        c.setDouble(k, exec::roundToFloatType(t->getDouble(k), ir::DType::kBF16));
      *t = c;
    }
    for (size_t d = 0; d < v->type().shape.size() && static_cast<int>(d) < t->rank(); ++d)
      if (v->type().shape[d].isSymbol()) syms.emplace(v->type().shape[d].symbols()[0], t->shape()[d]);
    loaded[i] = std::move(*t);
  }
  for (size_t i = 0; i < g->inputs().size(); ++i) {
    const ir::Value* v = g->inputs()[i];
    if (loaded[i]) {
      inputs.push_back(*loaded[i]);
      continue;
    }
    std::vector<int64_t> shape;
    for (const auto& d : v->type().shape) {
      for (const auto& s : d.symbols()) syms.emplace(s, 8);
      auto n = d.evaluate(syms);
      if (!n || *n < 0) return fail(invalidArgument("input " + v->ref() + ": cannot size dim " + d.toString()));
      shape.push_back(*n);
    }
    inputs.push_back(randomTensor(v->type(), shape, rng));
  }

  exec::ReferenceExecutor ex(ctx);
  std::vector<double> times;
  StatusOr<std::vector<exec::HostTensor>> outs = Status(internalError("not run"));
  exec::RunStats stats;
  const std::optional<sched::Program>& program = lowered->program;
  sched::ProgramInterpreter interp(ctx);
  std::unique_ptr<plugin::DeviceProgram> onDevice;
  double compileSeconds = 0;
  if (device) {
    auto start = std::chrono::steady_clock::now();
    auto dp = plugin::DeviceProgram::compile(*device, *program);
    if (!dp.isOk()) return fail(dp.status());
    onDevice = std::move(*dp);
    compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  // On a device the launches are timed by themselves (inputs uploaded and outputs
  // downloaded once, around all repetitions); one untimed run first warms the device.
  std::vector<double> deviceTimes;
  if (onDevice) {
    outs = onDevice->run(inputs);
    if (!outs.isOk()) return fail(outs.status());
    outs = onDevice->run(inputs, {.repeat = repeat, .batch = batch, .launchSeconds = &deviceTimes});
    if (!outs.isOk()) return fail(outs.status());
    times = deviceTimes;
  }
  for (int r = 0; r < (onDevice ? 0 : repeat); ++r) {
    auto start = std::chrono::steady_clock::now();
    outs = program ? interp.run(*program, inputs) : ex.run(*g, inputs, &stats);
    if (!outs.isOk()) return fail(outs.status());
    times.push_back(program ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                            : stats.seconds);
  }
  std::sort(times.begin(), times.end());
  if (!saveDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(saveDir, ec);
    for (size_t i = 0; i < outs->size(); ++i) {
      Status s = exec::writeNpy(saveDir + "/" + outNames[i] + ".npy", (*outs)[i]);
      if (!s.isOk()) return fail(s);
    }
  }
  if (!quiet)
    for (size_t i = 0; i < outs->size(); ++i) printTensor("%" + outNames[i], (*outs)[i]);
  if (!jsonFile.empty()) {
    std::FILE* f = std::fopen(jsonFile.c_str(), "w");
    if (!f) return fail(invalidArgument("--json: cannot write " + jsonFile));
    std::string all;
    for (double t : times) all += (all.empty() ? "" : ", ") + std::to_string(t * 1e3);
    std::fprintf(f,
                 "{\"graph\": \"%s\", \"backend\": \"%s\", \"device\": \"%s\", \"kernels\": %d, "
                 "\"library_calls\": %d, \"compile_ms\": %.3f, \"run_ms_median\": %.4f, \"run_ms\": [%s]}\n",
                 g->name().c_str(), backend.c_str(), device ? device->describe().c_str() : backend.c_str(),
                 program ? program->numLaunches() : 0, program ? program->numCalls() : 0, compileSeconds * 1e3,
                 times[times.size() / 2] * 1e3, all.c_str());
    std::fclose(f);
  }
  if (onDevice)
    std::printf(
        "ran @%s as a program (%d kernels, %d library calls) on %s: %.3f ms (median of %d), compiled in %.1f ms\n",
        g->name().c_str(), program->numLaunches(), program->numCalls(), device->describe().c_str(),
        times[times.size() / 2] * 1e3, repeat, compileSeconds * 1e3);
  else if (program)
    std::printf(
        "ran @%s as a program (%d kernels, %d library calls) on the program interpreter: %.3f ms (median of %d)\n",
        g->name().c_str(), program->numLaunches(), program->numCalls(), times[times.size() / 2] * 1e3, repeat);
  else
    std::printf("ran @%s on %s: %zu nodes, %.3f ms (median of %d), peak live %.1f MiB\n", g->name().c_str(),
                backend.c_str(), g->nodes().size(), times[times.size() / 2] * 1e3, repeat,
                static_cast<double>(stats.peakLiveBytes) / (1 << 20));
  return 0;
}

/// Each plugin on the search path: loaded (ABI, devices) or the error; a bad plugin never stops the listing.
int cmdPlugins() {
  plugin::Loader loader(plugin::Loader::defaultSearchPath());
  std::string path;
  for (const std::string& d : loader.searchPath()) path += (path.empty() ? "" : ":") + d;
  std::printf("search path: %s\n", path.c_str());
  int rc = 0;
  for (const std::string& name : loader.available()) {
    auto p = loader.load(name);
    if (!p.isOk()) {
      std::printf("  %-12s FAILED: %s\n", name.c_str(), p.status().toString().c_str());
      rc = 1;
      continue;
    }
    const plugsdk_api_t& api = (*p)->api();
    plugsdk_client_create_args_t c{};
    c.struct_size = sizeof(c);
    std::string devices;
    Status s = (*p)->check(api.client_create(&c), "client_create");
    if (s.isOk()) {
      plugsdk_device_count_args_t d{};
      d.struct_size = sizeof(d);
      d.client = c.out_client;
      s = (*p)->check(api.device_count(&d), "device_count");
      if (s.isOk())
        devices = std::to_string(d.out_count) + " device(s)" +
                  (d.out_count == 0 && d.out_reason ? std::string(": ") + d.out_reason : std::string());
      plugsdk_client_destroy_args_t x{};
      x.struct_size = sizeof(x);
      x.client = c.out_client;
      if (Status ds = (*p)->check(api.client_destroy(&x), "client_destroy"); s.isOk()) s = ds;
    }
    if (!s.isOk()) devices = "error: " + s.message();
    std::printf("  %-12s ABI %u.%u  %s  (%s)\n", (*p)->name().c_str(), (*p)->abiMajor(), (*p)->abiMinor(),
                devices.c_str(), (*p)->path().c_str());
  }
  return rc;
}

int cmdOps(const std::shared_ptr<const ir::Context>& ctx, const std::vector<std::string>& args) {
  bool tsv = !args.empty() && args[0] == "--tsv";
  if (!args.empty() && !tsv) return usageError("ops takes no argument but --tsv");
  auto kernels = exec::makeReferenceKernels();
  for (const ir::OpDef* d : ctx->ops.all()) {
    bool k = kernels.find(d->schema.name) != nullptr;
    if (tsv)
      std::printf("%s\t%s\t%s\t%s\t%s\n", d->schema.name.c_str(), d->category.c_str(), k ? "kernel" : "none",
                  d->schema.text.c_str(), d->doc.c_str());
    else
      std::printf("%-45s %-10s %s\n", d->schema.name.c_str(), d->category.c_str(), k ? "kernel" : "NO KERNEL");
  }
  if (!tsv) std::printf("%zu ops\n", ctx->ops.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::printf("plugsdk 0.1.0\n");
    return 0;
  }
  std::string cmd = args[0];
  args.erase(args.begin());
  auto ctx = ir::makeDefaultContext();
  if (cmd == "check") return cmdCheck(*ctx, args);
  if (cmd == "print") return cmdPrint(*ctx, args);
  if (cmd == "run") return cmdRun(ctx, args);
  if (cmd == "lower") return cmdLower(*ctx, args);
  if (cmd == "report") return cli::cmdReport(args);
  if (cmd == "autograd") return cli::cmdAutograd(*ctx, args);
  if (cmd == "plugins") return cmdPlugins();
  if (cmd == "decomps") {
    for (const std::string& op : decomp::makeDefaultDecompositions().ops()) std::printf("%s\n", op.c_str());
    return 0;
  }
  if (cmd == "ops") return cmdOps(ctx, args);
  return usageError("unknown command '" + cmd + "'");
}
