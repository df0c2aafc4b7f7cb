// Kernel status slots (see kernel_status.h).
#include "backends/level_zero/common/kernel_status.h"

#include <algorithm>

#include "backends/llvm_lowering/frame.h"

namespace plugsdk::level_zero {

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
  std::lock_guard<std::mutex> lock(mu_);
  words_->clear(slot);
  if (next_ <= kSlots) free_.push_back(slot);
}

sdk::Status KernelStatus::collect() {
  std::lock_guard<std::mutex> lock(mu_);
  const uint32_t used = std::min(next_, kSlots);
  if (used == 0) return sdk::Status::ok();
  std::vector<int32_t> words(used);
  sdk::Status st = words_->read(words.data(), used);
  if (!st.isOk()) return st.withContext("reading the kernel status words");
  sdk::Status first = sdk::Status::ok();
  for (uint32_t i = 0; i < used; ++i) {
    if (words[i] == lowering::kStatusOk) continue;
    if (first.isOk()) first = lowering::statusError(words[i], owners_[i].name, owners_[i].checkMessages);
    words_->clear(i);
  }
  return first;
}

}  // namespace plugsdk::level_zero
