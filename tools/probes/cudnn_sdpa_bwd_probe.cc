// GPU probe for backends/cuda/library/sdpa_backward_graph.h: runs cuDNN's fused attention
// forward (sdpa_graph.h) for O and the logsumexp, then the fused backward, on random bf16 /
// f16 data, and compares dQ, dK and dV with a float64 reference on the host (three (batch,
// head) pairs a case, every element of them); prints the engine, the errors and the time a
// backward call. Compiled and run on the GPU machine by tools/probes/device_cudnn_sdpa.sh.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "backends/cuda/driver/cuda_api.h"
#include "backends/cuda/library/sdpa_backward_graph.h"
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
  bool causal, bshd;  // bshd: every tensor as [b, s, h, d] memory (a view of a projection)
};

int64_t at(const std::vector<int64_t>& st, int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * st[0] + b * st[1] + c * st[2] + d * st[3];
}

std::vector<int64_t> layout(const Case& c, int64_t s, int64_t d) {
  return c.bshd ? std::vector<int64_t>{s * c.h * d, d, c.h * d, 1} : std::vector<int64_t>{c.h * s * d, s * d, d, 1};
}

struct Buffer {
  const DriverApi& cu;
  CUdeviceptr p = 0;
  Buffer(const DriverApi& api, size_t bytes) : cu(api) { cu.memAlloc(&p, bytes ? bytes : 16); }
  ~Buffer() { cu.memFree(p); }
  void* ptr() const { return reinterpret_cast<void*>(p); }
};

bool run(const DriverApi& cu, const dnn::Api& D, dnn::Handle handle, CUstream stream, const Case& c) {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  dnn::SdpaBackwardSpec bs;
  dnn::SdpaSpec& s = bs.forward;
  s.dataType = c.bf16 ? dnn::kBfloat16 : dnn::kHalf;
  s.b = c.b, s.h = c.h, s.sq = c.sq, s.skv = c.skv, s.d = c.d, s.dv = c.dv;
  s.q = bs.dQ = layout(c, c.sq, c.d);
  s.k = bs.dK = layout(c, c.skv, c.d);
  s.v = bs.dV = layout(c, c.skv, c.dv);
  s.o = bs.dO = layout(c, c.sq, c.dv);
  s.stats = {c.h * c.sq, c.sq, 1, 1};
  s.scale = 1.0f / std::sqrt(static_cast<float>(c.d));
  s.causal = c.causal;
  auto fwd = dnn::SdpaGraphPlan::create(D, handle, s);
  if (!fwd.isOk()) return std::printf("%-26s FORWARD PLAN FAILED: %s\n", c.name, fwd.status().message().c_str()), false;
  auto bwd = dnn::SdpaBackwardGraphPlan::create(D, handle, bs);
  if (!bwd.isOk()) return std::printf("%-26s PLAN FAILED: %s\n", c.name, bwd.status().message().c_str()), false;
  const int64_t nq = c.b * c.h * c.sq * c.d, nk = c.b * c.h * c.skv * c.d, nv = c.b * c.h * c.skv * c.dv,
                no = c.b * c.h * c.sq * c.dv, ns = c.b * c.h * c.sq;
  auto fill = [&](int64_t n) {
    std::vector<uint16_t> x(static_cast<size_t>(n));
    for (auto& e : x) e = toBits(nd(rng) * 0.5f, c.bf16);
    return x;
  };
  std::vector<uint16_t> hq = fill(nq), hk = fill(nk), hv = fill(nv), hdo = fill(no);
  Buffer q(cu, nq * 2), k(cu, nk * 2), v(cu, nv * 2), o(cu, no * 2), st(cu, ns * 4), dO(cu, no * 2), dQ(cu, nq * 2),
      dK(cu, nk * 2), dV(cu, nv * 2), wf(cu, (*fwd)->workspaceBytes()), wb(cu, (*bwd)->workspaceBytes());
  cu.memcpyHtoDAsync(q.p, hq.data(), hq.size() * 2, stream);
  cu.memcpyHtoDAsync(k.p, hk.data(), hk.size() * 2, stream);
  cu.memcpyHtoDAsync(v.p, hv.data(), hv.size() * 2, stream);
  cu.memcpyHtoDAsync(dO.p, hdo.data(), hdo.size() * 2, stream);
  D.setStream(handle, stream);
  plugsdk::sdk::Status r = (*fwd)->execute(handle, q.ptr(), k.ptr(), v.ptr(), o.ptr(), st.ptr(), nullptr, wf.ptr());
  if (!r.isOk()) return std::printf("%-26s FORWARD FAILED: %s\n", c.name, r.message().c_str()), false;
  const dnn::SdpaBackwardGraphPlan& plan = **bwd;
  auto exec = [&] {
    cu.memsetD8Async(wb.p + plan.accumulatorOffset(), 0, plan.accumulatorBytes(), stream);
    return (*bwd)->execute(handle, q.ptr(), k.ptr(), v.ptr(), o.ptr(), st.ptr(), dO.ptr(), dQ.ptr(), dK.ptr(), dV.ptr(),
                           wb.ptr());
  };
  r = exec();
  const CUresult sync = cu.streamSynchronize(stream);
  if (!r.isOk() || sync != CUDA_SUCCESS)
    return std::printf("%-26s EXECUTE FAILED: %s (sync %d)\n", c.name, r.message().c_str(), int(sync)), false;
  const int reps = 30;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) (void)exec();
  cu.streamSynchronize(stream);
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
  auto back = [&](const Buffer& b, int64_t n) {
    std::vector<uint16_t> x(static_cast<size_t>(n));
    cu.memcpyDtoHAsync(x.data(), b.p, x.size() * 2, stream);
    return x;
  };
  std::vector<uint16_t> gq = back(dQ, nq), gk = back(dK, nk), gv = back(dV, nv);
  cu.streamSynchronize(stream);
  auto f = [&](const std::vector<uint16_t>& x, int64_t i) {
    return static_cast<double>(fromBits(x[size_t(i)], c.bf16));
  };
  double err[3] = {}, ref[3] = {};
  int nan = 0;
  const int64_t pairs = c.b * c.h;
  for (int64_t pi : {int64_t{0}, pairs / 2, pairs - 1}) {
    const int64_t bi = pi / c.h, hi = pi % c.h;
    std::vector<double> P(size_t(c.sq * c.skv)), dS(size_t(c.sq * c.skv));
    for (int64_t i = 0; i < c.sq; ++i) {
      double mx = -INFINITY;
      for (int64_t j = 0; j < c.skv; ++j) {
        double a = 0;
        for (int64_t e = 0; e < c.d; ++e) a += f(hq, at(s.q, bi, hi, i, e)) * f(hk, at(s.k, bi, hi, j, e));
        a = (c.causal && j > i) ? -INFINITY : a * s.scale;
        P[size_t(i * c.skv + j)] = a;
        mx = std::max(mx, a);
      }
      double sum = 0;
      for (int64_t j = 0; j < c.skv; ++j) sum += (P[size_t(i * c.skv + j)] = std::exp(P[size_t(i * c.skv + j)] - mx));
      double dsum = 0;
      for (int64_t j = 0; j < c.skv; ++j) {
        double& p = P[size_t(i * c.skv + j)];
        p /= sum;
        double dp = 0;
        for (int64_t e = 0; e < c.dv; ++e) dp += f(hdo, at(s.o, bi, hi, i, e)) * f(hv, at(s.v, bi, hi, j, e));
        dS[size_t(i * c.skv + j)] = dp;
        dsum += p * dp;
      }
      for (int64_t j = 0; j < c.skv; ++j)
        dS[size_t(i * c.skv + j)] = P[size_t(i * c.skv + j)] * (dS[size_t(i * c.skv + j)] - dsum);
    }
    auto check = [&](int which, double want, double got) {
      if (std::isnan(got)) ++nan;
      err[which] = std::max(err[which], std::fabs(got - want));
      ref[which] = std::max(ref[which], std::fabs(want));
    };
    for (int64_t i = 0; i < c.sq; ++i)
      for (int64_t e = 0; e < c.d; ++e) {
        double a = 0;
        for (int64_t j = 0; j < c.skv; ++j) a += dS[size_t(i * c.skv + j)] * f(hk, at(s.k, bi, hi, j, e));
        check(0, a * s.scale, f(gq, at(bs.dQ, bi, hi, i, e)));
      }
    for (int64_t j = 0; j < c.skv; ++j) {
      for (int64_t e = 0; e < c.d; ++e) {
        double a = 0;
        for (int64_t i = 0; i < c.sq; ++i) a += dS[size_t(i * c.skv + j)] * f(hq, at(s.q, bi, hi, i, e));
        check(1, a * s.scale, f(gk, at(bs.dK, bi, hi, j, e)));
      }
      for (int64_t e = 0; e < c.dv; ++e) {
        double a = 0;
        for (int64_t i = 0; i < c.sq; ++i) a += P[size_t(i * c.skv + j)] * f(hdo, at(s.o, bi, hi, i, e));
        check(2, a, f(gv, at(bs.dV, bi, hi, j, e)));
      }
    }
  }
  const double flops = 2.5 * 2.0 * c.b * c.h * c.sq * c.skv * (c.d + c.dv);
  std::printf("%-26s %s %8.1f us %6.1f TFLOP/s  dQ %.3g/%.3g  dK %.3g/%.3g  dV %.3g/%.3g  NaN %d  ws %zu\n", c.name,
              plan.engine().c_str(), us, flops / us * 1e-6, err[0], ref[0], err[1], ref[1], err[2], ref[2], nan,
              plan.workspaceBytes());
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
  std::printf("cuDNN %zu: attention backward (error / max|reference| per gradient)\n", D.getVersion());
  const Case cases[] = {
      {"vit b32 h12 s197 d64 bshd", true, 32, 12, 197, 197, 64, 64, false, true},
      {"bert b32 h12 s128 d64", true, 32, 12, 128, 128, 64, 64, false, false},
      {"gpt2 causal b16 h12 s128", true, 16, 12, 128, 128, 64, 64, true, false},
      {"causal sq77 skv90 f16", false, 2, 4, 77, 90, 64, 64, true, false},
      {"sq40 skv77 bshd", true, 2, 4, 40, 77, 32, 32, false, true},
      {"d128", true, 4, 8, 256, 256, 128, 128, false, false},
      {"d64 dv32", true, 2, 4, 50, 50, 64, 32, false, false},
      {"d8 s1", true, 2, 4, 1, 1, 8, 8, false, false},
  };
  int failed = 0;
  for (const Case& c : cases) failed += run(C, D, handle, stream, c) ? 0 : 1;
  std::printf("%d of %zu cases failed to plan or run\n", failed, sizeof(cases) / sizeof(cases[0]));
  return 0;
}
