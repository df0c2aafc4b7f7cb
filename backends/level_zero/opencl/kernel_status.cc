// Kernel status words in SVM (see kernel_status.h).
#include "backends/level_zero/opencl/kernel_status.h"

namespace plugsdk::level_zero::opencl {

namespace {

class SvmWords : public KernelStatus::Words {
 public:
  SvmWords(const Device& device, cl_command_queue queue, uint32_t* words)
      : device_(device), queue_(queue), words_(words) {}
  ~SvmWords() override {
    device_.api().finish(queue_);
    device_.api().releaseCommandQueue(queue_);
    device_.free(words_);
  }
  uint32_t* base() const override { return words_; }
  sdk::Status read(int32_t* out, uint32_t count) override {
    const Api& api = device_.api();
    return api.check(api.enqueueSVMMemcpy(queue_, CL_TRUE, out, words_, 4ull * count, 0, nullptr, nullptr),
                     "clEnqueueSVMMemcpy");
  }
  void clear(uint32_t slot) override {
    const uint32_t zero = 0;
    device_.api().enqueueSVMMemFill(queue_, words_ + slot, &zero, 4, 4, 0, nullptr, nullptr);
    device_.api().finish(queue_);
  }

 private:
  const Device& device_;
  cl_command_queue queue_;
  uint32_t* words_;
};

}  // namespace

sdk::StatusOr<std::unique_ptr<KernelStatus>> createKernelStatus(const Device& device) {
  sdk::StatusOr<cl_command_queue> q = device.createQueue();
  if (!q.isOk()) return q.status().withContext("the kernel status words' queue");
  sdk::StatusOr<void*> p = device.allocate(4ull * KernelStatus::kSlots);
  if (!p.isOk()) {
    device.api().releaseCommandQueue(*q);
    return p.status().withContext("allocating the kernel status words");
  }
  auto words = std::make_unique<SvmWords>(device, *q, static_cast<uint32_t*>(*p));
  const Api& api = device.api();
  const uint32_t zero = 0;
  sdk::Status st = api.check(api.enqueueSVMMemFill(*q, *p, &zero, 4, 4ull * KernelStatus::kSlots, 0, nullptr, nullptr),
                             "clearing the kernel status words");
  if (st.isOk()) st = api.check(api.finish(*q), "clearing the kernel status words");
  if (!st.isOk()) return st;
  return std::make_unique<KernelStatus>(std::move(words));
}

}  // namespace plugsdk::level_zero::opencl
