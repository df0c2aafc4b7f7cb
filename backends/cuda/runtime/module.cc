// Loading PTX and launching generated kernels (see module.h).
#include "backends/cuda/runtime/module.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "backends/cuda/codegen/block_group.h"
#include "backends/cuda/codegen/kernel_wrapper.h"
#include "backends/cuda/runtime/device.h"
#include "backends/llvm_lowering/frame.h"

namespace plugsdk::cuda {

LoadedKernel::~LoadedKernel() {
  if (!module) return;
  ContextGuard g(*api, context);
  api->moduleUnload(module);
  if (status) status->release(statusSlot);
}

sdk::StatusOr<std::unique_ptr<LoadedKernel>> loadKernel(const DriverApi& api, const sdk::KernelView& k,
                                                        const PtxKernel& ptx, const GpuArch& arch,
                                                        const std::string& keepDir) {
  auto out = std::make_unique<LoadedKernel>();
  out->api = &api;
  out->name = std::string(k.name());
  std::vector<char> info(16384), error(16384);
  int options[] = {kJitInfoLogBuffer, kJitInfoLogBufferSizeBytes, kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes,
                   kJitLogVerbose};
  void* values[] = {info.data(), reinterpret_cast<void*>(info.size()), error.data(),
                    reinterpret_cast<void*>(error.size()), reinterpret_cast<void*>(1)};
  const CUresult r = api.moduleLoadDataEx(&out->module, ptx.ptx.c_str(), 5, options, values);
  if (r != CUDA_SUCCESS) {
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = !keepDir.empty() ? keepDir : tmp ? tmp : "/tmp";
    const std::string file = dir + "/plugsdk_" + ptx.entry + ".ptx";
    std::ofstream(file) << ptx.ptx;
    return sdk::Status(r == CUDA_ERROR_OUT_OF_MEMORY ? sdk::Code::kResourceExhausted : sdk::Code::kInternal,
                       "kernel @" + out->name + ": the driver rejected its PTX: " + api.errorText(r) + "\n" +
                           std::string(error.data()) + "\nreproduce: ptxas --gpu-name " + arch.name() + " " + file);
  }
  sdk::Status st = api.check(api.moduleGetFunction(&out->function, out->module, ptx.entry.c_str()),
                             "kernel @" + out->name + ": cuModuleGetFunction");
  if (!st.isOk()) return st;
  out->mapping = ptx.mapping;
  if (out->mapping.splittable) {
    size_t bytes = 0;
    st = api.check(api.moduleGetGlobal(&out->splitCounters, &bytes, out->module, kSplitCountersSymbol),
                   "kernel @" + out->name + ": cuModuleGetGlobal(" + kSplitCountersSymbol + ")");
    if (!st.isOk()) return st;
  }
  out->pool.assign(k.indexPool().begin(), k.indexPool().end());
  for (size_t d = 0; d < k.numGrid(); ++d) out->grid.push_back(k.grid(d));
  return out;
}

namespace {

/// How many blocks share each grid point's loop: enough blocks to fill the device (8 per
/// SM) when the points alone do not, each thread keeping at least 16 chunks of the loop, and
/// within block_group.h's limits. 1: no split.
uint64_t splitCount(const LoadedKernel& k, sdk::Span<const plugsdk_index_insn_t> pool,
                    const std::vector<int64_t>& symbols, uint64_t points) {
  const ThreadMapping& map = k.mapping;
  if (!map.splittable) return 1;
  const sdk::IndexEnv env{{}, {}, {symbols.data(), symbols.size()}};
  sdk::StatusOr<int64_t> n = sdk::evalIndex(pool, map.splitDim, env);
  if (!n.isOk() || *n <= 0) return 1;
  const uint64_t chunks = (static_cast<uint64_t>(*n) + map.lanes - 1) / map.lanes;
  const uint64_t want = (static_cast<uint64_t>(k.multiprocessors) * 8 + points - 1) / points;
  const uint64_t most = std::min<uint64_t>({chunks / (uint64_t{map.blockThreads} * 16),
                                            uint64_t{kSplitsPerThread} * map.blockThreads, kSplitSlots / points});
  const uint64_t splits = std::min(want, most);
  return splits < 2 ? 1 : splits;
}

}  // namespace

sdk::Status launchKernel(const LoadedKernel& k, const std::vector<CUdeviceptr>& args,
                         const std::vector<int64_t>& symbols, CUdeviceptr status, CUstream stream) {
  const sdk::Span<const plugsdk_index_insn_t> pool(k.pool.data(), k.pool.size());
  sdk::StatusOr<std::vector<int64_t>> extents = lowering::evalGrid(pool, k.grid, symbols, k.name);
  if (!extents.isOk()) return extents.status();
  std::vector<int64_t>& grid = *extents;
  uint64_t points = 1;
  for (int64_t g : grid) points *= static_cast<uint64_t>(g);
  if (points == 0) return sdk::Status::ok();
  const ThreadMapping& map = k.mapping;
  uint64_t blocks = 0, splits = 1;
  switch (map.kind) {
    case ThreadMapping::Kind::kPointPerThread: blocks = (points + map.blockThreads - 1) / map.blockThreads; break;
    case ThreadMapping::Kind::kBlockPerPoint: {
      blocks = (points + map.pointsPerBlock - 1) / map.pointsPerBlock;
      splits = splitCount(k, pool, symbols, points);
      break;
    }
    case ThreadMapping::Kind::kLanesPerThread: {
      const uint64_t inner = grid.empty() ? 1 : static_cast<uint64_t>(grid.back());
      const uint64_t threads = points / inner * ((inner + map.lanes - 1) / map.lanes);
      blocks = (threads + map.blockThreads - 1) / map.blockThreads;
      break;
    }
  }
  if (blocks > 0x7fffffffu)
    return sdk::unimplemented("kernel @" + k.name + ": " + std::to_string(points) +
                              " grid points exceed one launch's 2^31 blocks");
  // cuLaunchKernel takes a pointer to each parameter's value.
  if (splits > 1) {
    // Fresh arrival counts for this launch (block_group.h: kSplitCountersSymbol).
    sdk::Status st = k.api->check(k.api->memsetD32Async(k.splitCounters, 0, points, stream),
                                  "kernel @" + k.name + ": resetting the split counters");
    if (!st.isOk()) return st;
  }
  std::vector<void*> params;
  params.reserve(args.size() + symbols.size() + grid.size() + 1);
  for (const CUdeviceptr& a : args) params.push_back(const_cast<CUdeviceptr*>(&a));
  for (const int64_t& s : symbols) params.push_back(const_cast<int64_t*>(&s));
  for (int64_t& g : grid) params.push_back(&g);
  params.push_back(&status);
  const CUresult r = k.api->launchKernel(k.function, static_cast<unsigned>(blocks), static_cast<unsigned>(splits), 1,
                                         map.blockThreads, 1, 1, 0, stream, params.data(), nullptr);
  if (r == CUDA_SUCCESS) return sdk::Status::ok();  // (no message built per launch)
  return k.api->check(r, "kernel @" + k.name + ": launch");
}

}  // namespace plugsdk::cuda
