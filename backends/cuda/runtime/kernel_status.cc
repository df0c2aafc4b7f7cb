// Kernel status words on the device (see kernel_status.h).
#include "backends/cuda/runtime/kernel_status.h"

#include <algorithm>

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
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = next_++ % kSlots;
  }
  owners_[slot] = Owner{name, std::move(checkMessages)};
  return slot;
}

void KernelStatus::release(uint32_t slot) {
  api_.memsetD32Async(address(slot), 0, 1, nullptr);
  std::lock_guard<std::mutex> lock(mu_);
  if (next_ <= kSlots) free_.push_back(slot);
}

sdk::Status KernelStatus::collect(CUstream stream) {
  uint32_t used;
  {
    std::lock_guard<std::mutex> lock(mu_);
    used = std::min(next_, kSlots);
  }
  if (used == 0) return sdk::Status::ok();
  std::vector<int32_t> words(used);
  sdk::Status st = api_.check(api_.memcpyDtoHAsync(words.data(), base_, 4ull * used, stream), "reading kernel status");
  if (st.isOk())
    st = api_.check(stream ? api_.streamSynchronize(stream) : api_.ctxSynchronize(), "reading kernel status");
  if (!st.isOk()) return st;
  sdk::Status first = sdk::Status::ok();
  std::lock_guard<std::mutex> lock(mu_);
  for (uint32_t i = 0; i < used; ++i) {
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
