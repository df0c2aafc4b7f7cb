// The epilogue kernel after a library op (epilogue_kernel.h).
#include "backends/cuda/library/epilogue_kernel.h"

namespace plugsdk::cuda {

sdk::StatusOr<std::unique_ptr<EpilogueKernel>> EpilogueKernel::create(const sdk::KernelView& k, size_t numCallSymbols,
                                                                      const CompileKernel& compile) {
  auto e = std::make_unique<EpilogueKernel>();
  bool found = false;
  for (size_t i = 0; i < k.numArgs(); ++i)
    if (k.arg(i).access & PLUGSDK_ACCESS_ACCUMULATOR) {
      if (found)
        return sdk::invalidArgument("the epilogue kernel " + std::string(k.name()) + " has two ACCUMULATOR arguments");
      e->accumulator_ = i;
      e->accDtype_ = k.arg(i).dtype;
      found = true;
    }
  if (!found)
    return sdk::invalidArgument("the epilogue kernel " + std::string(k.name()) + " has no ACCUMULATOR argument");
  e->numArgs_ = k.numArgs();
  e->numCallSymbols_ = numCallSymbols;
  sdk::StatusOr<std::unique_ptr<LoadedKernel>> loaded = compile(k);
  if (!loaded.isOk()) return loaded.status().withContext("the epilogue kernel");
  e->kernel_ = std::move(*loaded);
  return e;
}

sdk::Status EpilogueKernel::launch(CUdeviceptr temp, const CUdeviceptr* extra, const std::vector<int64_t>& symbols,
                                   CUstream stream) const {
  args_.resize(numArgs_);
  for (size_t a = 0, next = 0; a < numArgs_; ++a) args_[a] = a == accumulator_ ? temp : extra[next++];
  symbols_.assign(symbols.begin() + static_cast<std::ptrdiff_t>(std::min(numCallSymbols_, symbols.size())),
                  symbols.end());
  return launchKernel(*kernel_, args_, symbols_, kernel_->status->address(kernel_->statusSlot), stream);
}

void makeRowMajor(OperandDesc& d, std::vector<plugsdk_index_insn_t>& pool) {
  auto append = [&](plugsdk_index_expr_t e) {
    for (uint32_t i = 0; i < e.count; ++i) pool.push_back(pool[e.first + i]);
  };
  std::vector<plugsdk_index_expr_t> strides(d.sizes.size());
  for (size_t i = d.sizes.size(); i-- > 0;) {
    const auto first = static_cast<uint32_t>(pool.size());
    if (i + 1 == d.sizes.size()) {
      pool.push_back({PLUGSDK_INDEX_CONST, 0, 1});
    } else {
      append(strides[i + 1]);
      append(d.sizes[i + 1]);
      pool.push_back({PLUGSDK_INDEX_MUL, 0, 0});
    }
    strides[i] = {first, static_cast<uint32_t>(pool.size()) - first};
  }
  d.strides = std::move(strides);
  d.offset = {static_cast<uint32_t>(pool.size()), 1};
  pool.push_back({PLUGSDK_INDEX_CONST, 0, 0});
}

}  // namespace plugsdk::cuda
