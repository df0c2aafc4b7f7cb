// GPU probe for backends/cuda/library/cudnn_graph.h's fused convolution epilogue: for
// resnet50-like bf16 convolutions, in NCHW (packed, as the plugin receives them) and NHWC
// (channels-last strides), builds the plain convolution and the convolution + bias + relu
// graph, prints whether an engine takes each (with the refusal otherwise) and the time a call
// (CUDA events, 20 calls after 3 warm-ups; the data is zeros: only plans and times matter
// here, python/tests/test_cuda_conv_epilogues.py checks values). Compiled and run on the GPU
// machine (tools/probes/device_cudnn_conv.sh).
#include <cstdio>
#include <string>
#include <vector>

#include "backends/cuda/driver/cuda_api.h"
#include "backends/cuda/library/cudnn_graph.h"
#include "tools/probes/probe_device.h"

using namespace plugsdk::cuda;

namespace {

struct Case {
  const char* name;
  int64_t n, c, h, w, k, r, stride, pad;
};

std::vector<int64_t> stridesOf(const std::vector<int64_t>& d, bool nhwc) {
  if (!nhwc) return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
  return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
}

void run(const DriverApi& C, const dnn::Api& D, dnn::Handle handle, CUstream stream, const Case& c) {
  const int64_t oh = (c.h + 2 * c.pad - c.r) / c.stride + 1, ow = (c.w + 2 * c.pad - c.r) / c.stride + 1;
  const std::vector<int64_t> x{c.n, c.c, c.h, c.w}, w{c.k, c.c, c.r, c.r}, y{c.n, c.k, oh, ow};
  auto bytes = [](const std::vector<int64_t>& d) { return static_cast<size_t>(d[0] * d[1] * d[2] * d[3]) * 2; };
  CUdeviceptr dx = 0, dw = 0, dy = 0, db = 0, ws = 0;
  C.memAlloc(&dx, bytes(x));
  C.memAlloc(&dw, bytes(w));
  C.memAlloc(&dy, bytes(y));
  C.memAlloc(&db, static_cast<size_t>(c.k) * 4);
  C.memsetD8Async(dx, 0, bytes(x), stream);
  C.memsetD8Async(dw, 0, bytes(w), stream);
  C.memsetD8Async(db, 0, static_cast<size_t>(c.k) * 4, stream);
  for (bool nhwc : {false, true})
    for (bool fused : {false, true}) {
      dnn::ConvSpec s;
      s.dataType = dnn::kBfloat16;
      s.computeType = dnn::kFloat;
      s.x = x;
      s.xStrides = stridesOf(x, nhwc);
      s.w = w;
      s.wStrides = stridesOf(w, nhwc);
      s.y = y;
      s.yStrides = stridesOf(y, nhwc);
      s.pad = {c.pad, c.pad};
      s.stride = {c.stride, c.stride};
      s.dilation = {1, 1};
      if (fused) {
        s.epilogue.on = true;
        s.epilogue.act = 1;
        s.epilogue.bias = true;
        s.epilogue.yType = dnn::kBfloat16;
        s.epilogue.biasType = dnn::kFloat;
      }
      const std::string what = std::string(c.name) + (nhwc ? " NHWC" : " NCHW") + (fused ? " +bias+relu" : "");
      auto plan = dnn::ConvGraphPlan::create(D, handle, s);
      if (!plan.isOk()) {
        std::printf("%-40s refused: %.400s\n", what.c_str(), plan.status().message().c_str());
        continue;
      }
      dnn::ConvGraphPlan& p = **plan;
      if (ws) C.memFree(ws);
      ws = 0;
      if (p.workspaceBytes()) C.memAlloc(&ws, p.workspaceBytes());
      D.setStream(handle, stream);
      auto ptr = [](CUdeviceptr q) { return reinterpret_cast<void*>(q); };
      auto once = [&] { return p.execute(handle, ptr(dx), ptr(dw), ptr(dy), ptr(db), nullptr, ptr(ws)); };
      plugsdk::sdk::Status st;
      for (int i = 0; i < 3 && st.isOk(); ++i) st = once();
      CUevent a = nullptr, b = nullptr;
      C.eventCreate(&a, 0);
      C.eventCreate(&b, 0);
      C.eventRecord(a, stream);
      for (int i = 0; i < 20 && st.isOk(); ++i) st = once();
      C.eventRecord(b, stream);
      C.streamSynchronize(stream);
      float ms = 0;
      C.eventElapsedTime(&ms, a, b);
      C.eventDestroy(a);
      C.eventDestroy(b);
      if (!st.isOk()) {
        std::printf("%-40s run failed: %.300s\n", what.c_str(), st.message().c_str());
        continue;
      }
      std::printf("%-40s %8.1f us  (%s, workspace %zu)\n", what.c_str(), 1000 * ms / 20, p.engine().c_str(),
                  p.workspaceBytes());
    }
  for (CUdeviceptr q : {dx, dw, dy, db, ws})
    if (q) C.memFree(q);
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
      {"test 4x16x19x23 -> 32, 3x3", 4, 16, 19, 23, 32, 3, 1, 1},
      {"resnet50 stem 32x3x224 -> 64, 7x7 s2", 32, 3, 224, 224, 64, 7, 2, 3},
      {"resnet50 32x64x56 -> 64, 3x3", 32, 64, 56, 56, 64, 3, 1, 1},
      {"resnet50 32x64x56 -> 256, 1x1", 32, 64, 56, 56, 256, 1, 1, 0},
      {"resnet50 32x256x14 -> 1024, 1x1", 32, 256, 14, 14, 1024, 1, 1, 0},
      {"resnet50 32x512x7 -> 512, 3x3", 32, 512, 7, 7, 512, 3, 1, 1},
  };
  for (const Case& c : cases) run(C, D, handle, stream, c);
  return 0;
}
