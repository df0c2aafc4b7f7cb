// Kernel status words on the device (see kernel_status.h).
#include "backends/cuda/runtime/kernel_status.h"

#include "backends/llvm_lowering/frame.h"

namespace plugsdk::cuda {

sdk::StatusOr<std::unique_ptr<KernelStatus>> KernelStatus::create(const DriverApi& api) {
  std::unique_ptr<KernelStatus> s(new KernelStatus(api));
  sdk::Status st = api.check(api.memAlloc(&s->base_, 4ull * kSlots), "allocating the kernel status words");
  if (!st.isOk()) return st;
  st = api.check(api.memsetD32Async(s->base_, 0, kSlots, nullptr), "clearing the kernel status words");
  if (!st.isOk()) return st;
  st = api.check(api.ctxSynchronize(), "clearing the kernel status words");
  if (!st.isOk()) return st;
  return s;
}

KernelStatus::~KernelStatus() {
  if (base_) api_.memFree(base_);
}

uint32_t KernelStatus::assign(const std::string& name, std::vector<std::string> checkMessages) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint32_t slot = next_++ % kSlots;
  owners_[slot] = Owner{name, std::move(checkMessages)};
  return slot;
}

sdk::Status KernelStatus::collect(CUstream stream) {
  std::vector<int32_t> words(kSlots);
  sdk::Status st =
      api_.check(api_.memcpyDtoHAsync(words.data(), base_, 4ull * kSlots, stream), "reading kernel status");
  if (st.isOk())
    st = api_.check(stream ? api_.streamSynchronize(stream) : api_.ctxSynchronize(), "reading kernel status");
  if (!st.isOk()) return st;
  sdk::Status first = sdk::Status::ok();
  std::lock_guard<std::mutex> lock(mu_);
  for (uint32_t i = 0; i < kSlots; ++i) {
    if (words[i] == lowering::kStatusOk) continue;
    if (first.isOk()) first = lowering::statusError(words[i], owners_[i].name, owners_[i].checkMessages);
    api_.memsetD32Async(address(i), 0, 1, stream);
  }
  if (!first.isOk()) {  // the error to report is the kernel's, whatever the clearing says
    if (stream)
      api_.streamSynchronize(stream);
    else
      api_.ctxSynchronize();
  }
  return first;
}

}  // namespace plugsdk::cuda
