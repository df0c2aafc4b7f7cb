// The C++ API as a user sees it: builds a small MLP with the graph builder, prints its graph,
// and runs it on the reference executor (float64) with random weights, printing results and
// time. With --backend NAME it also compiles the model for that plugin's device, runs it
// there and compares with the reference (ctest runs it on the cpu plugin). --save DIR writes
// the inputs and both outputs as .npy.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include <cstring>
#include <string>

#include "core/builder/builder.h"
#include "core/compile/pipeline.h"
#include "core/exec/npy.h"
#include "core/exec/reference_executor.h"
#include "core/plugin/device_program.h"
#include "core/text/printer.h"

using namespace plugsdk;
using builder::Tensor;
using ir::DType;
using ir::SymExpr;

namespace {

/// Compiles the graph for the plugin's first device, runs it 5 times, compares with `want`.
int runOnBackend(const std::shared_ptr<const ir::Context>& ctx, const ir::Graph& graph, const std::string& backend,
                 const std::vector<exec::HostTensor>& inputs, const exec::HostTensor& want, double refMs,
                 const std::string& saveDir) {
  auto fail = [&](const Status& s) {
    std::fprintf(stderr, "demo: backend %s: %s\n", backend.c_str(), s.toString().c_str());
    return 1;
  };
  auto plugin = plugin::Loader(plugin::Loader::defaultSearchPath()).load(backend);
  if (!plugin.isOk()) return fail(plugin.status());
  auto device = plugin::Device::open(*plugin);
  if (!device.isOk()) return fail(device.status());
  auto t0 = std::chrono::steady_clock::now();
  auto compiled = compile::compileGraph(*ctx, graph, plugin::optionsFor((*device)->caps()));
  if (!compiled.isOk()) return fail(compiled.status());
  auto program = plugin::DeviceProgram::compile(**device, compiled->program);
  if (!program.isOk()) return fail(program.status());
  double compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // One warm-up run, then 5 timed repetitions of the launches alone (inputs uploaded once).
  StatusOr<std::vector<exec::HostTensor>> out = (*program)->run(inputs);
  if (!out.isOk()) return fail(out.status());
  std::vector<double> times;
  out = (*program)->run(inputs, {.repeat = 5, .launchSeconds = &times});
  if (!out.isOk()) return fail(out.status());
  for (double& t : times) t *= 1e3;
  std::sort(times.begin(), times.end());
  if (!saveDir.empty()) {
    Status s = exec::writeNpy(saveDir + "/device_out.npy", (*out)[0]);
    if (!s.isOk()) return fail(s);
    std::FILE* f = std::fopen((saveDir + "/device_ms.txt").c_str(), "w");
    if (f) {
      std::fprintf(f, "%.4f\n", times[2]);
      std::fclose(f);
    }
  }
  const exec::HostTensor& got = (*out)[0];
  double maxDiff = 0;
  for (int64_t i = 0; i < got.numel(); ++i)
    maxDiff = std::max(maxDiff, std::fabs(got.getDouble(i) - want.getDouble(i)));
  std::printf("== %s (%d kernels, %d library calls; compiled in %.1f ms) ==\n", (*device)->describe().c_str(),
              compiled->program.numLaunches(), compiled->program.numCalls(), compileMs);
  std::printf("time: median %.2f ms over 5 runs (reference %.2f ms: %.2fx); max |diff| vs reference %.3g\n", times[2],
              refMs, refMs / times[2], maxDiff);
  return maxDiff < 1e-5 ? 0 : 1;  // f32 storage on the device, float64 in the reference
}

}  // namespace

int main(int argc, char** argv) {
  int64_t batch = 64;
  std::string backend, saveDir;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--backend") == 0 && i + 1 < argc)
      backend = argv[++i];
    else if (std::strcmp(argv[i], "--save") == 0 && i + 1 < argc)
      saveDir = argv[++i];
    else
      batch = std::atoll(argv[i]);
  }
  if (batch <= 0) {
    std::fprintf(stderr, "usage: %s [batch > 0] [--backend NAME] [--save DIR]\n", argv[0]);
    return 2;
  }
  auto ctx = ir::makeDefaultContext();
  auto t0 = std::chrono::steady_clock::now();

  // MLP 784 -> 256 -> 128 -> 10 with a symbolic batch size.
  builder::GraphBuilder b(ctx, "mlp");
  SymExpr n = SymExpr::symbol("batch");
  Tensor x = b.input("x", DType::kF32, {n, 784});
  const int64_t dims[] = {784, 256, 128, 10};
  std::vector<Tensor> params;
  Tensor h = x;
  for (int l = 0; l < 3; ++l) {
    Tensor w = b.input("w" + std::to_string(l), DType::kF32, {dims[l + 1], dims[l]});
    Tensor bias = b.input("b" + std::to_string(l), DType::kF32, {dims[l + 1]});
    params.push_back(w);
    params.push_back(bias);
    h = builder::linear(h, w, bias);
    if (l < 2) h = builder::relu(h);
  }
  Tensor probs = builder::softmax(h, -1);
  auto graph = b.finish({probs});
  if (!graph.isOk()) {
    std::fprintf(stderr, "demo: building the graph failed: %s\n", graph.status().toString().c_str());
    return 1;
  }
  double buildMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("== graph built with the C++ builder (%.2f ms) ==\n%s\n", buildMs, text::printGraph(*graph).c_str());

  // Random inputs and weights (Kaiming-uniform-like scale), seeded.
  std::mt19937_64 rng(42);
  std::vector<exec::HostTensor> inputs;
  for (const ir::Value* v : graph->inputs()) {
    std::vector<int64_t> shape;
    for (const auto& d : v->type().shape) shape.push_back(d.evaluate({{"batch", batch}}).value_or(0));
    exec::HostTensor t(v->type().dtype, shape);
    double scale = v->name() == "x" ? 1.0 : 1.0 / std::sqrt(static_cast<double>(shape.back()));
    std::uniform_real_distribution<double> u(-scale, scale);
    for (int64_t i = 0; i < t.numel(); ++i) t.setDouble(i, exec::roundToFloatType(u(rng), DType::kF32));
    inputs.push_back(std::move(t));
  }

  exec::ReferenceExecutor ex(ctx);
  exec::RunStats stats;
  std::vector<double> times;
  StatusOr<std::vector<exec::HostTensor>> out = Status(internalError("not run"));
  for (int r = 0; r < 5; ++r) {
    out = ex.run(*graph, inputs, &stats);
    if (!out.isOk()) {
      std::fprintf(stderr, "demo: run failed: %s\n", out.status().toString().c_str());
      return 1;
    }
    times.push_back(stats.seconds * 1e3);
  }
  std::sort(times.begin(), times.end());
  const exec::HostTensor& p = (*out)[0];
  double flops = 2.0 * static_cast<double>(batch) * (784 * 256 + 256 * 128 + 128 * 10);
  std::printf("== reference executor (float64), batch %lld ==\n", static_cast<long long>(batch));
  std::printf("output %s; row 0:", p.typeString().c_str());
  double rowSum = 0;
  for (int64_t j = 0; j < 10; ++j) {
    std::printf(" %.4f", p.getDouble(j));
    rowSum += p.getDouble(j);
  }
  int64_t argmax = 0;
  for (int64_t j = 1; j < 10; ++j)
    if (p.getDouble(j) > p.getDouble(argmax)) argmax = j;
  std::printf("\nrow 0 sums to %.12f, predicts class %lld\n", rowSum, static_cast<long long>(argmax));
  std::printf("time: median %.2f ms over 5 runs (min %.2f), %.2f GFLOP/s, peak live %.1f MiB\n", times[2], times[0],
              flops / (times[2] * 1e-3) / 1e9, static_cast<double>(stats.peakLiveBytes) / (1 << 20));
  if (std::fabs(rowSum - 1.0) >= 1e-9) return 1;
  if (!saveDir.empty()) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      Status s = exec::writeNpy(saveDir + "/" + graph->inputs()[i]->name() + ".npy", inputs[i]);
      if (!s.isOk()) {
        std::fprintf(stderr, "demo: %s\n", s.toString().c_str());
        return 1;
      }
    }
    if (!exec::writeNpy(saveDir + "/reference_out.npy", p).isOk()) return 1;
  }
  return backend.empty() ? 0 : runOnBackend(ctx, *graph, backend, inputs, p, times[2], saveDir);
}
