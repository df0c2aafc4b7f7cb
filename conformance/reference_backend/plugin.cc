// The reference executor as a plugin (libplugsdk_reference.so, plugin "reference"): one host
// device that runs what it is given with the core's own float64 machinery, so the
// conformance suite can be run through the ABI against the numbers it compares with. It is
// the suite's yardstick: every numeric case must pass on it, and a case that does not is a
// bug in the case or in the core, not in a backend. See README.md.
//
//  - kernels: decoded from the ABI encoding (plugin::decodeKernel) and run by the kernel
//    interpreter (kernel::runKernel) over HostTensors read from and written back to the
//    buffers' bytes (exec::decodeElements / encodeElements): float64 inside a kernel, rounded
//    to the argument's dtype only where it is stored (run.cc);
//  - library ops (matmul, convolution, sdpa): the prims' reference kernels on gathered
//    strided operands, then the fused epilogue kernel (library.cc); the client option
//    "library=none" claims none, so the core expands them into loop kernels instead;
//  - memory is host memory, streams run their work when it is queued, events are always
//    complete.
#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "conformance/reference_backend/reference.h"
#include "core/plugin/kernel_encoding.h"
#include "plugsdk/plugsdk.hpp"

namespace {

namespace sdk = plugsdk::sdk;
namespace ref = plugsdk::reference;

struct RefBuffer : sdk::Buffer {
  std::vector<uint8_t> data;
};

struct RefStream : sdk::Stream {};
struct RefEvent : sdk::Event {};

struct RefExecutable : sdk::Executable {
  plugsdk::kernel::Kernel kernel;
  std::vector<std::string> symbols;         // the encoding's order: launch's symbol_values follow it
  std::optional<ref::LibraryPlan> library;  // a library call (kernel and symbols unused)
};

/// A core Status as the SDK's (the two code enums have the ABI's values; sdk_abi_test checks).
sdk::Status toSdk(const plugsdk::Status& s) {
  return s.isOk() ? sdk::Status::ok() : sdk::Status(static_cast<sdk::Code>(s.code()), s.message());
}

uint64_t hostMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : uint64_t{1} << 32;
}

class ReferenceBackend : public sdk::Backend<RefBuffer, RefStream, RefEvent, RefExecutable> {
 public:
  /// Options: "library=all" (the default: matmul, convolution, sdpa and sdpa_backward, with
  /// epilogues on the first two, as the minimal sample) or "library=none".
  sdk::Status initialize(const sdk::Options& options) override {
    const std::string library = options.get("library", "all");
    if (library != "all" && library != "none")
      return sdk::invalidArgument("option library: '" + library + "' is not all or none");
    libraryOps_ = library == "all" ? PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION | PLUGSDK_LIBRARY_SDPA |
                                         PLUGSDK_LIBRARY_SDPA_BACKWARD
                                   : 0;
    return sdk::Status::ok();
  }

  sdk::StatusOr<sdk::DeviceCount> deviceCount() override { return sdk::DeviceCount{1, ""}; }

  sdk::StatusOr<sdk::DeviceInfo> deviceInfo(uint32_t) override {
    sdk::DeviceInfo d;
    d.name = "reference0";
    d.dtypes = (1u << (PLUGSDK_DTYPE_F64 + 1)) - 1;  // all ten: the interpreter has them all
    d.memoryKinds = PLUGSDK_MEMORY_HOST | PLUGSDK_MEMORY_SHARED;
    d.memoryBytes = hostMemoryBytes();
    d.maxBufferBytes = d.memoryBytes;
    d.libraryOps = libraryOps_;
    d.epilogueOps = libraryOps_ & (PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION);
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
    if (c.bytes == 0) return sdk::Status::ok();  // an empty buffer's data() may be NULL: no memcpy on it
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
    if (!decoded.isOk()) return toSdk(decoded.status().withContext("compile_kernel"));
    auto e = std::make_unique<RefExecutable>();
    e->kernel = std::move(*decoded);
    for (size_t i = 0; i < k.numSymbols(); ++i) e->symbols.emplace_back(k.symbol(i));
    return e;
  }

  sdk::StatusOr<std::unique_ptr<RefExecutable>> compileLibrary(const sdk::LibraryCall& c) override {
    if ((libraryOps_ & c.op) == 0) return sdk::unimplemented("compile_library: this client claims no library ops");
    std::vector<std::string> symbols(c.symbols.begin(), c.symbols.end());
    plugsdk::StatusOr<ref::LibraryPlan> plan =
        ref::planLibrary(*ctx_, c.op, std::string(c.attributes), {c.inputs.begin(), c.inputs.end()},
                         {c.outputs.begin(), c.outputs.end()}, {c.indexPool.begin(), c.indexPool.end()}, symbols,
                         c.epilogue ? &c.epilogue->raw() : nullptr);
    if (!plan.isOk()) return toSdk(plan.status().withContext("compile_library"));
    auto e = std::make_unique<RefExecutable>();
    e->library = std::move(*plan);
    return e;
  }

  sdk::Status launch(const Launch& l) override {
    const RefExecutable& x = l.executable;
    std::vector<ref::Bytes> buffers;
    for (size_t i = 0; i < l.buffers.size(); ++i) {
      RefBuffer* b = l.buffers[i];  // NULL: an absent library input, or output 0 under an epilogue
      if (b)
        buffers.push_back({true, b->data.data() + l.offsets[i], b->data.size() - l.offsets[i]});
      else
        buffers.emplace_back();
    }
    if (x.library) {
      const std::vector<int64_t> values(l.symbolValues.begin(), l.symbolValues.end());
      return toSdk(ref::runLibrary(*ctx_, kernels_, *x.library, buffers, values).withContext("launch"));
    }
    std::map<std::string, int64_t> symbols;
    for (size_t i = 0; i < x.symbols.size() && i < l.symbolValues.size(); ++i)
      symbols[x.symbols[i]] = l.symbolValues[i];
    return toSdk(ref::runKernelOn(x.kernel, buffers, std::nullopt, nullptr, symbols).withContext("launch"));
  }

 private:
  uint32_t libraryOps_ = 0;
  std::shared_ptr<const plugsdk::ir::Context> ctx_ = plugsdk::ir::makeDefaultContext();
  plugsdk::exec::RefKernelTable kernels_ = plugsdk::exec::makeReferenceKernels();
};

}  // namespace

PLUGSDK_DEFINE_PLUGIN(ReferenceBackend, "reference", "0.1 (the core's float64 reference through the ABI)")
