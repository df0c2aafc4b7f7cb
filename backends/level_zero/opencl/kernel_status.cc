// Kernel status words in SVM (see kernel_status.h).
#include "backends/level_zero/opencl/kernel_status.h"

#include <algorithm>

#include "backends/llvm_lowering/frame.h"

namespace plugsdk::level_zero::opencl {

sdk::StatusOr<std::unique_ptr<KernelStatus>> KernelStatus::create(const Device& device) {
  std::unique_ptr<KernelStatus> s(new KernelStatus(device));
  sdk::StatusOr<cl_command_queue> q = device.createQueue();
  if (!q.isOk()) return q.status().withContext("the kernel status words' queue");
  s->queue_ = *q;
  sdk::StatusOr<void*> p = device.allocate(4ull * kSlots);
  if (!p.isOk()) return p.status().withContext("allocating the kernel status words");
  s->words_ = static_cast<uint32_t*>(*p);
  const Api& api = device.api();
  const uint32_t zero = 0;
  sdk::Status st = api.check(api.enqueueSVMMemFill(s->queue_, s->words_, &zero, 4, 4ull * kSlots, 0, nullptr, nullptr),
                             "clearing the kernel status words");
  if (st.isOk()) st = api.check(api.finish(s->queue_), "clearing the kernel status words");
  if (!st.isOk()) return st;
  return s;
}

KernelStatus::~KernelStatus() {
  if (queue_) {
    device_.api().finish(queue_);
    device_.api().releaseCommandQueue(queue_);
  }
  device_.free(words_);
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
  const uint32_t zero = 0;
  const Api& api = device_.api();
  std::lock_guard<std::mutex> lock(mu_);
  api.enqueueSVMMemFill(queue_, address(slot), &zero, 4, 4, 0, nullptr, nullptr);
  api.finish(queue_);
  if (next_ <= kSlots) free_.push_back(slot);
}

sdk::Status KernelStatus::collect() {
  const Api& api = device_.api();
  std::lock_guard<std::mutex> lock(mu_);
  const uint32_t used = std::min(next_, kSlots);
  if (used == 0) return sdk::Status::ok();
  std::vector<int32_t> words(used);
  sdk::Status st =
      api.check(api.enqueueSVMMemcpy(queue_, CL_TRUE, words.data(), words_, 4ull * used, 0, nullptr, nullptr),
                "reading the kernel status words");
  if (!st.isOk()) return st;
  sdk::Status first = sdk::Status::ok();
  const uint32_t zero = 0;
  for (uint32_t i = 0; i < used; ++i) {
    if (words[i] == lowering::kStatusOk) continue;
    if (first.isOk()) first = lowering::statusError(words[i], owners_[i].name, owners_[i].checkMessages);
    api.enqueueSVMMemFill(queue_, address(i), &zero, 4, 4, 0, nullptr, nullptr);
  }
  if (!first.isOk()) api.finish(queue_);
  return first;
}

}  // namespace plugsdk::level_zero::opencl
