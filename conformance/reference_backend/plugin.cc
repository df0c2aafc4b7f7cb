// The reference executor as a plugin (libplugsdk_reference.so, plugin "reference"): one host
// device that runs what it is given with the core's own float64 machinery, so the
// conformance suite can be run through the ABI against the numbers it compares with. It is
// the suite's yardstick: every numeric case must pass on it, and a case that does not is a
// bug in the case or in the core, not in a backend. See README.md.
//
//  - kernels: decoded from the ABI encoding (plugin::decodeKernel) and run by the kernel
//    interpreter (kernel::runKernel) over HostTensors read from and written back to the
//    buffers' bytes (exec::decodeElements / encodeElements): float64 inside a kernel, rounded
//    to the argument's dtype only where it is stored;
//  - library ops: none claimed; the core expands matmul, convolution and sdpa into loop
//    kernels, which then run here like every other kernel;
//  - memory is host memory, streams run their work when it is queued, events are always
//    complete.
#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/exec/tensor_bytes.h"
#include "core/kernel/interpreter.h"
#include "core/plugin/kernel_encoding.h"
#include "plugsdk/plugsdk.hpp"

namespace {

namespace sdk = plugsdk::sdk;
using plugsdk::exec::HostTensor;

struct RefBuffer : sdk::Buffer {
  std::vector<uint8_t> data;
};

struct RefStream : sdk::Stream {};
struct RefEvent : sdk::Event {};

struct RefExecutable : sdk::Executable {
  plugsdk::kernel::Kernel kernel;
  std::vector<std::string> symbols;  // the encoding's order: launch's symbol_values follow it
};

/// A core Status as the SDK's (the two code enums have the ABI's values; sdk_abi_test checks).
sdk::Status toSdk(const plugsdk::Status& s, sdk::Code failed) {
  if (s.isOk()) return sdk::Status::ok();
  return sdk::Status(failed == sdk::Code::kOk ? static_cast<sdk::Code>(s.code()) : failed, s.message());
}

uint64_t hostMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : uint64_t{1} << 32;
}

/// Whether element i of `a` differs from element i of `b` in any bit (a NaN that stays NaN,
/// or 0.0 that stays 0.0, is unchanged; -0.0 after 0.0 is a change).
bool changed(const HostTensor& a, const HostTensor& b, size_t i) {
  if (!a.isFloating()) return a.ints()[i] != b.ints()[i];
  return std::memcmp(&a.doubles()[i], &b.doubles()[i], sizeof(double)) != 0;
}

class ReferenceBackend : public sdk::Backend<RefBuffer, RefStream, RefEvent, RefExecutable> {
 public:
  sdk::StatusOr<sdk::DeviceCount> deviceCount() override { return sdk::DeviceCount{1, ""}; }

  sdk::StatusOr<sdk::DeviceInfo> deviceInfo(uint32_t) override {
    sdk::DeviceInfo d;
    d.name = "reference0";
    d.dtypes = (1u << (PLUGSDK_DTYPE_F64 + 1)) - 1;  // all ten: the interpreter has them all
    d.memoryKinds = PLUGSDK_MEMORY_HOST | PLUGSDK_MEMORY_SHARED;
    d.memoryBytes = hostMemoryBytes();
    d.maxBufferBytes = d.memoryBytes;
    d.libraryOps = 0;  // matmul, convolution and sdpa arrive as loop kernels (README.md)
    d.epilogueOps = 0;
    d.maxKernelStmts = 0;  // no limit
    d.fusesHorizontal = true;
    d.fusesReductionEpilogue = true;
    d.fusesMultiReduction = true;
    return d;
  }

  sdk::StatusOr<std::unique_ptr<RefBuffer>> allocate(uint32_t, uint32_t, uint64_t bytes) override {
    auto b = std::make_unique<RefBuffer>();
    b->data.resize(bytes);  // std::bad_alloc becomes RESOURCE_EXHAUSTED
    return b;
  }

  sdk::Status copy(const Copy& c) override {
    switch (c.kind) {
      case PLUGSDK_COPY_HOST_TO_DEVICE: std::memcpy(c.dst->data.data() + c.dstOffset, c.hostSrc, c.bytes); break;
      case PLUGSDK_COPY_DEVICE_TO_HOST: std::memcpy(c.hostDst, c.src->data.data() + c.srcOffset, c.bytes); break;
      case PLUGSDK_COPY_DEVICE_TO_DEVICE:  // may overlap
        std::memmove(c.dst->data.data() + c.dstOffset, c.src->data.data() + c.srcOffset, c.bytes);
        break;
    }
    return sdk::Status::ok();
  }

  sdk::Status fill(const Fill& f) override {
    for (uint64_t i = 0; i < f.bytes; ++i) f.buffer.data[f.offset + i] = f.pattern[i % f.patternBytes];
    return sdk::Status::ok();
  }

  // Work runs when it is queued: there is never anything to wait for.
  sdk::StatusOr<std::unique_ptr<RefStream>> createStream(uint32_t) override { return std::make_unique<RefStream>(); }
  sdk::Status synchronizeStream(RefStream&) override { return sdk::Status::ok(); }
  sdk::StatusOr<std::unique_ptr<RefEvent>> createEvent(RefStream*) override { return std::make_unique<RefEvent>(); }
  sdk::Status recordEvent(RefEvent&, RefStream&) override { return sdk::Status::ok(); }
  sdk::Status waitEvent(RefStream&, RefEvent&) override { return sdk::Status::ok(); }
  sdk::Status synchronizeEvent(RefEvent&) override { return sdk::Status::ok(); }

  sdk::StatusOr<std::unique_ptr<RefExecutable>> compileKernel(uint32_t, const sdk::KernelView& k,
                                                              std::string_view) override {
    plugsdk::StatusOr<plugsdk::kernel::Kernel> decoded = plugsdk::plugin::decodeKernel(k.raw());
    if (!decoded.isOk()) return toSdk(decoded.status().withContext("compile_kernel"), sdk::Code::kInvalidArgument);
    auto e = std::make_unique<RefExecutable>();
    e->kernel = std::move(*decoded);
    for (size_t i = 0; i < k.numSymbols(); ++i) e->symbols.emplace_back(k.symbol(i));
    return e;
  }

  sdk::Status launch(const Launch& l) override {
    const RefExecutable& x = l.executable;
    const plugsdk::kernel::Kernel& k = x.kernel;
    if (l.buffers.size() != k.args.size() || l.symbolValues.size() != x.symbols.size())
      return sdk::invalidArgument("launch: kernel @" + k.name + " takes " + std::to_string(k.args.size()) +
                                  " buffers and " + std::to_string(x.symbols.size()) + " symbol values");
    std::map<std::string, int64_t> symbols;
    for (size_t i = 0; i < x.symbols.size(); ++i) symbols[x.symbols[i]] = l.symbolValues[i];

    // Each argument sees its buffer from its offset to the end, as the core's interpreter
    // sees a flat buffer: an index past that is the interpreter's bounds error.
    std::vector<HostTensor> args, before;
    std::vector<HostTensor*> ptrs;
    args.reserve(k.args.size());
    for (size_t i = 0; i < k.args.size(); ++i) {
      const RefBuffer& b = *l.buffers[i];
      const auto size = static_cast<uint64_t>(plugsdk::ir::dtypeSize(k.args[i].dtype));
      const uint64_t n = (b.data.size() - l.offsets[i]) / size;
      args.push_back(plugsdk::exec::decodeElements(k.args[i].dtype, {static_cast<int64_t>(n)},
                                                   b.data.data() + l.offsets[i]));
    }
    before = args;
    for (HostTensor& t : args) ptrs.push_back(&t);
    // Arguments were checked when the kernel was decoded: what fails now is an access out of
    // range or a failed CHECK, which the ABI reports as OUT_OF_RANGE.
    sdk::Status s = toSdk(plugsdk::kernel::runKernel(k, ptrs, symbols), sdk::Code::kOutOfRange);
    if (!s.isOk()) return s.withContext("launch");

    // Only the elements the kernel changed go back: arguments may share a buffer (the
    // memory plan's arena), and bytes the kernel did not store keep their exact pattern.
    for (size_t i = 0; i < k.args.size(); ++i) {
      if (!k.args[i].written) continue;
      const HostTensor &now = args[i], &was = before[i];
      const size_t size = static_cast<size_t>(plugsdk::ir::dtypeSize(k.args[i].dtype));
      uint8_t* base = l.buffers[i]->data.data() + l.offsets[i];
      for (size_t e = 0; e < static_cast<size_t>(now.numel());) {
        if (!changed(now, was, e)) {
          ++e;
          continue;
        }
        size_t end = e + 1;  // a run of changed elements, encoded at once
        while (end < static_cast<size_t>(now.numel()) && changed(now, was, end)) ++end;
        HostTensor run(now.dtype(), {static_cast<int64_t>(end - e)});
        for (size_t j = e; j < end; ++j) {
          if (now.isFloating())
            run.doubles()[j - e] = now.doubles()[j];
          else
            run.ints()[j - e] = now.ints()[j];
        }
        plugsdk::exec::encodeElements(run, base + e * size);
        e = end;
      }
    }
    return sdk::Status::ok();
  }
};

}  // namespace

PLUGSDK_DEFINE_PLUGIN(ReferenceBackend, "reference", "0.1 (the core's float64 reference through the ABI)")
