// Kernels over buffer bytes: decode each argument to the reference's float64 / int64
// elements, run the core's kernel interpreter, write back what changed (see reference.h).
#include <bit>
#include <cstdint>

#include "conformance/reference_backend/reference.h"
#include "core/exec/tensor_bytes.h"
#include "core/kernel/interpreter.h"

namespace plugsdk::reference {
namespace {

using exec::HostTensor;

/// Whether element i differs in any bit (NaN staying NaN is no change; 0.0 -> -0.0 is one).
bool changed(const HostTensor& a, const HostTensor& b, size_t i) {
  if (!a.isFloating()) return a.ints()[i] != b.ints()[i];
  return std::bit_cast<uint64_t>(a.doubles()[i]) != std::bit_cast<uint64_t>(b.doubles()[i]);
}

}  // namespace

void writeChanged(const HostTensor& now, const HostTensor& was, uint8_t* base) {
  const auto n = static_cast<size_t>(now.numel());
  const auto size = static_cast<size_t>(ir::dtypeSize(now.dtype()));
  for (size_t e = 0; e < n;) {
    if (!changed(now, was, e)) {
      ++e;
      continue;
    }
    size_t end = e + 1;  // a run of changed elements, encoded at once
    while (end < n && changed(now, was, end)) ++end;
    HostTensor run(now.dtype(), {static_cast<int64_t>(end - e)});
    for (size_t j = e; j < end; ++j) {
      if (now.isFloating())
        run.doubles()[j - e] = now.doubles()[j];
      else
        run.ints()[j - e] = now.ints()[j];
    }
    exec::encodeElements(run, base + e * size);
    e = end;
  }
}

Status runKernelOn(const kernel::Kernel& k, const std::vector<Bytes>& args, std::optional<size_t> accArg,
                   HostTensor* acc, const std::map<std::string, int64_t>& symbols) {
  if (args.size() != k.args.size())
    return invalidArgument("kernel @" + k.name + " takes " + std::to_string(k.args.size()) + " buffers, got " +
                           std::to_string(args.size()));
  // Each argument sees its buffer from its offset to the end, as the interpreter sees a flat
  // buffer: an index past that is the interpreter's bounds error, naming the element.
  std::vector<HostTensor> tensors(args.size()), before(args.size());
  std::vector<HostTensor*> ptrs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (accArg && *accArg == i) {
      ptrs.push_back(acc);
      continue;
    }
    if (!args[i].present) return invalidArgument("kernel @" + k.name + ": no buffer for %" + k.args[i].name);
    const auto n = static_cast<int64_t>(args[i].size / static_cast<uint64_t>(ir::dtypeSize(k.args[i].dtype)));
    tensors[i] = exec::decodeElements(k.args[i].dtype, {n}, args[i].data);
    if (k.args[i].written) before[i] = tensors[i];
    ptrs.push_back(&tensors[i]);
  }
  // The kernel was checked when it was decoded: what fails now is an access out of range or
  // a failed CHECK, which the ABI reports as OUT_OF_RANGE.
  if (Status s = kernel::runKernel(k, ptrs, symbols); !s.isOk()) return outOfRange(s.message());
  for (size_t i = 0; i < args.size(); ++i)
    if (k.args[i].written && !(accArg && *accArg == i)) writeChanged(tensors[i], before[i], args[i].data);
  return Status::ok();
}

}  // namespace plugsdk::reference
