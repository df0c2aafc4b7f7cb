// GPU probe for backends/cuda/library/sdpa_graph.h: builds cuDNN's fused attention for the
// shapes the models and the conformance suite give, runs it on random bf16 / f16 data and
// compares O and the logsumexp with a float64 reference on the host; prints the engine, the
// error and the time a call. Compiled and run on the GPU machine (no toolkit needed):
//   g++ -O2 -std=c++20 -I. -Isdk/include tools/probes/cudnn_sdpa_probe.cc \
//     backends/cuda/library/{sdpa_graph,dnn_graph_builder,cudnn_api}.cc backends/cuda/driver/cuda_api.cc -ldl
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "backends/cuda/driver/cuda_api.h"
#include "backends/cuda/library/sdpa_graph.h"
#include "tools/probes/half_bits.h"
#include "tools/probes/probe_device.h"

using namespace plugsdk::cuda;

namespace {

using plugsdk::probes::fromBits;
using plugsdk::probes::toBits;

struct Case {
  const char* name;
  bool bf16;
  int64_t b, h, sq, skv, d, dv;
  bool causal, bias, headViews, oTransposed;
  int biasKind;  // 0: [1, 1, sq, skv]; 1: [b, 1, 1, skv] broadcast by stride 0; 2: a row of -inf
};

int64_t index4(const std::vector<int64_t>& st, int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * st[0] + b * st[1] + c * st[2] + d * st[3];
}

bool run(const DriverApi& cu, const dnn::Api& D, dnn::Handle handle, CUstream stream, const Case& c) {
  std::mt19937 rng(42);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  dnn::SdpaSpec s;
  s.dataType = c.bf16 ? dnn::kBfloat16 : dnn::kHalf;
  s.b = c.b, s.h = c.h, s.sq = c.sq, s.skv = c.skv, s.d = c.d, s.dv = c.dv;
  int64_t qOff = 0, kOff = 0, vOff = 0, inElems = 0;
  if (c.headViews) {  // q, k, v as views of one [b, s, 3, h, d] projection (vit's qkv)
    const int64_t row = 3 * c.h * c.d;
    s.q = s.k = s.v = {c.sq * row, c.d, row, 1};
    kOff = c.h * c.d, vOff = 2 * c.h * c.d, inElems = c.b * c.sq * row;
  } else {
    s.q = {c.h * c.sq * c.d, c.sq * c.d, c.d, 1};
    s.k = {c.h * c.skv * c.d, c.skv * c.d, c.d, 1};
    s.v = {c.h * c.skv * c.dv, c.skv * c.dv, c.dv, 1};
    kOff = c.b * c.h * c.sq * c.d;
    vOff = kOff + c.b * c.h * c.skv * c.d;
    inElems = vOff + c.b * c.h * c.skv * c.dv;
  }
  s.o = c.oTransposed ? std::vector<int64_t>{c.sq * c.h * c.dv, c.dv, c.h * c.dv, 1}
                      : std::vector<int64_t>{c.h * c.sq * c.dv, c.sq * c.dv, c.dv, 1};
  s.stats = {c.h * c.sq, c.sq, 1, 1};
  s.scale = 1.0f / std::sqrt(static_cast<float>(c.d));
  s.causal = c.causal;
  s.bias = c.bias;
  if (c.bias) {
    if (c.biasKind == 1)
      s.biasDims = {c.b, 1, 1, c.skv}, s.biasStrides = {c.skv, 0, 0, 1};
    else
      s.biasDims = {1, 1, c.sq, c.skv}, s.biasStrides = {c.sq * c.skv, c.sq * c.skv, c.skv, 1};
  }
  auto plan = dnn::SdpaGraphPlan::create(D, handle, s);
  if (!plan.isOk()) {
    std::printf("%-28s PLAN FAILED: %s\n", c.name, plan.status().message().c_str());
    return false;
  }
  std::vector<uint16_t> in(static_cast<size_t>(inElems));
  for (auto& x : in) x = toBits(nd(rng) * 0.5f, c.bf16);
  const int64_t biasElems = c.bias ? (c.biasKind == 1 ? c.b * c.skv : c.sq * c.skv) : 0;
  std::vector<uint16_t> bias(static_cast<size_t>(biasElems));
  for (size_t i = 0; i < bias.size(); ++i) {
    float x = nd(rng);
    if (c.biasKind == 2 && i < static_cast<size_t>(c.skv)) x = -INFINITY;  // query 0 sees nothing
    bias[i] = c.bf16 ? static_cast<uint16_t>(x == -INFINITY ? 0xff80 : toBits(x, true))
                     : static_cast<uint16_t>(x == -INFINITY ? 0xfc00 : toBits(x, false));
  }
  const int64_t oElems = c.b * c.h * c.sq * c.dv, sElems = c.b * c.h * c.sq;
  CUdeviceptr dIn = 0, dO = 0, dS = 0, dB = 0, dW = 0;
  cu.memAlloc(&dIn, in.size() * 2);
  cu.memAlloc(&dO, static_cast<size_t>(oElems) * 2);
  cu.memAlloc(&dS, static_cast<size_t>(sElems) * 4);
  if (biasElems) cu.memAlloc(&dB, bias.size() * 2);
  if ((*plan)->workspaceBytes()) cu.memAlloc(&dW, (*plan)->workspaceBytes());
  cu.memcpyHtoDAsync(dIn, in.data(), in.size() * 2, stream);
  if (biasElems) cu.memcpyHtoDAsync(dB, bias.data(), bias.size() * 2, stream);
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(p); };
  D.setStream(handle, stream);
  auto exec = [&] {
    return (*plan)->execute(handle, ptr(dIn + 2 * qOff), ptr(dIn + 2 * kOff), ptr(dIn + 2 * vOff), ptr(dO), ptr(dS),
                            ptr(dB), ptr(dW));
  };
  plugsdk::sdk::Status st = exec();
  cu.streamSynchronize(stream);
  if (!st.isOk()) {
    std::printf("%-28s EXECUTE FAILED: %s\n", c.name, st.message().c_str());
    return false;
  }
  const int reps = 50;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) (void)exec();
  cu.streamSynchronize(stream);
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
  std::vector<uint16_t> o(static_cast<size_t>(oElems));
  std::vector<float> stats(static_cast<size_t>(sElems));
  cu.memcpyDtoHAsync(o.data(), dO, o.size() * 2, stream);
  cu.memcpyDtoHAsync(stats.data(), dS, stats.size() * 4, stream);
  cu.streamSynchronize(stream);
  // float64 reference on a few (batch, head) pairs
  double maxErrO = 0, maxRef = 0, maxErrS = 0;
  int nanO = 0;
  const int64_t pairs = c.b * c.h;
  for (int64_t pi : {int64_t{0}, pairs / 2, pairs - 1}) {
    const int64_t bi = pi / c.h, hi = pi % c.h;
    std::vector<double> w(static_cast<size_t>(c.skv));
    for (int64_t i = 0; i < c.sq; ++i) {
      double mx = -INFINITY;
      for (int64_t j = 0; j < c.skv; ++j) {
        double acc = 0;
        for (int64_t e = 0; e < c.d; ++e)
          acc += fromBits(in[static_cast<size_t>(qOff + index4(s.q, bi, hi, i, e))], c.bf16) *
                 fromBits(in[static_cast<size_t>(kOff + index4(s.k, bi, hi, j, e))], c.bf16);
        acc *= s.scale;
        if (c.bias) {
          const int64_t bidx = c.biasKind == 1 ? bi * c.skv + j : i * c.skv + j;
          acc += fromBits(bias[static_cast<size_t>(bidx)], c.bf16);
        }
        if (c.causal && j > i) acc = -INFINITY;
        w[static_cast<size_t>(j)] = acc;
        mx = std::max(mx, acc);
      }
      double sum = 0;
      for (double& x : w) sum += (x = std::isinf(mx) ? 0 : std::exp(x - mx));
      const double lse = mx + std::log(sum);
      const float gotS = stats[static_cast<size_t>(bi * c.h * c.sq + hi * c.sq + i)];
      if (std::isfinite(lse))
        maxErrS = std::max(maxErrS, std::fabs(gotS - lse));
      else if (i == 0)
        std::printf("    row 0 fully masked: lse got %g\n", gotS);
      for (int64_t e = 0; e < c.dv; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < c.skv; ++j)
          acc += w[static_cast<size_t>(j)] / sum *
                 fromBits(in[static_cast<size_t>(vOff + index4(s.v, bi, hi, j, e))], c.bf16);
        const float got = fromBits(o[static_cast<size_t>(index4(s.o, bi, hi, i, e))], c.bf16);
        if (std::isnan(got)) ++nanO;
        if (!std::isfinite(lse)) {
          if (e == 0) std::printf("    row %lld fully masked: o got %g\n", static_cast<long long>(i), got);
          continue;
        }
        maxErrO = std::max(maxErrO, std::fabs(got - acc));
        maxRef = std::max(maxRef, std::fabs(acc));
      }
    }
  }
  const double flops = 2.0 * c.b * c.h * c.sq * c.skv * (c.d + c.dv);
  std::printf("%-28s %s  %8.1f us  %6.1f TFLOP/s  max|dO| %.3g (max|O| %.3g)  max|dlse| %.3g  NaN in O %d  ws %zu\n",
              c.name, (*plan)->engine().c_str(), us, flops / us * 1e-6, maxErrO, maxRef, maxErrS, nanO,
              (*plan)->workspaceBytes());
  cu.memFree(dIn);
  cu.memFree(dO);
  cu.memFree(dS);
  if (dB) cu.memFree(dB);
  if (dW) cu.memFree(dW);
  return true;
}

}  // namespace

int main() {
  std::optional<ProbeDevice> dev = openProbeDevice();
  if (!dev) return 1;
  const DriverApi& C = *dev->driver;
  const dnn::Api& D = *dev->dnn;
  dnn::Handle handle = dev->handle;
  CUstream stream = dev->stream;
  std::printf("cuDNN %zu (%s)\n", D.getVersion(), D.path.c_str());
  const Case cases[] = {
      {"vit b32 h12 s197 d64 views", true, 32, 12, 197, 197, 64, 64, false, false, true, true, 0},
      {"vit packed o", true, 32, 12, 197, 197, 64, 64, false, false, true, false, 0},
      {"bert b32 h12 s128 d64", true, 32, 12, 128, 128, 64, 64, false, false, false, false, 0},
      {"gpt2 causal b16 h12 s128", true, 16, 12, 128, 128, 64, 64, true, false, false, false, 0},
      {"causal sq 77 skv 90 f16", false, 2, 4, 77, 90, 64, 64, true, false, false, false, 0},
      {"bias [1,1,sq,skv] d32", true, 2, 4, 33, 40, 32, 32, false, true, false, false, 0},
      {"bias [b,1,1,skv] stride 0", true, 2, 4, 33, 40, 32, 32, false, true, false, false, 1},
      {"bias row of -inf", true, 2, 4, 33, 40, 32, 32, false, true, false, false, 2},
      {"d128", true, 4, 8, 256, 256, 128, 128, false, false, false, false, 0},
      {"d80", true, 2, 4, 50, 50, 80, 80, false, false, false, false, 0},
      {"d64 dv32", true, 2, 4, 50, 50, 64, 32, false, false, false, false, 0},
      {"d256", true, 2, 4, 64, 64, 256, 256, false, false, false, false, 0},
      {"s1 skv1", true, 2, 4, 1, 1, 64, 64, false, false, false, false, 0},
  };
  int failed = 0;
  for (const Case& c : cases) failed += run(C, D, handle, stream, c) ? 0 : 1;
  std::printf("%d of %zu cases failed to plan or run\n", failed, sizeof(cases) / sizeof(cases[0]));
  return 0;
}
