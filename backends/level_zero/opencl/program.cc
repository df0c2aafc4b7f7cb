// Building SPIR-V on the OpenCL device and launching its kernels (see program.h).
#include "backends/level_zero/opencl/program.h"

#include <cstdlib>
#include <fstream>

#include "backends/llvm_lowering/frame.h"

namespace plugsdk::level_zero::opencl {

Program::~Program() {
  if (program) api->releaseProgram(program);
}

Kernel::~Kernel() {
  if (kernel) api->releaseKernel(kernel);
  if (status) status->release(statusSlot);
}

std::string reproduceCommand(const std::string& file) { return "plugsdk-opencl-build " + file; }

sdk::StatusOr<std::shared_ptr<Program>> buildProgram(const Device& device, const std::vector<uint32_t>& words,
                                                     const std::string& what, const std::string& stem,
                                                     const std::string& keepDir) {
  const Api& api = device.api();
  auto p = std::make_shared<Program>();
  p->api = &api;
  cl_int err = CL_SUCCESS;
  p->program = api.createProgramWithIL(device.context(), words.data(), words.size() * 4, &err);
  std::string log;
  if (err == CL_SUCCESS) {
    // The reference computes f32 division and sqrt correctly rounded; OpenCL allows 2.5 and
    // 3 ulp unless asked (and the device says it can).
    const char* options = device.props().correctlyRoundedDivSqrt ? "-cl-fp32-correctly-rounded-divide-sqrt" : "";
    cl_device_id id = device.id();
    err = api.buildProgram(p->program, 1, &id, options, nullptr, nullptr);
    if (err != CL_SUCCESS) {
      size_t n = 0;
      api.getProgramBuildInfo(p->program, id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
      log.assign(n, '\0');
      if (n) api.getProgramBuildInfo(p->program, id, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
      log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
    }
  }
  if (err == CL_SUCCESS) return p;
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = !keepDir.empty() ? keepDir : tmp ? tmp : "/tmp";
  const std::string file = dir + "/" + stem + ".spv";
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
  return sdk::Status(
      err == CL_OUT_OF_HOST_MEMORY || err == CL_OUT_OF_RESOURCES ? sdk::Code::kResourceExhausted : sdk::Code::kInternal,
      what + ": " + device.props().name +
          " rejected its SPIR-V: " + (p->program ? "clBuildProgram" : "clCreateProgramWithIL") + " returned " +
          errorName(err) + (!log.empty() ? "; build log:\n" + log : "\n(no build log)") +
          "\nreproduce: " + reproduceCommand(file) + "   (spirv-dis " + file + " for the module)");
}

sdk::StatusOr<std::unique_ptr<Kernel>> createKernel(const Api& api, std::shared_ptr<Program> program,
                                                    const std::string& entry, const sdk::KernelView& k) {
  auto out = std::make_unique<Kernel>();
  out->api = &api;
  out->name = std::string(k.name());
  cl_int err = CL_SUCCESS;
  out->kernel = api.createKernel(program->program, entry.c_str(), &err);
  sdk::Status st = api.check(err, "kernel @" + out->name + ": clCreateKernel(" + entry + ")");
  if (!st.isOk()) return st;
  out->program = std::move(program);
  out->pool.assign(k.indexPool().begin(), k.indexPool().end());
  for (size_t d = 0; d < k.numGrid(); ++d) out->grid.push_back(k.grid(d));
  out->numArgs = k.numArgs();
  out->numSymbols = k.numSymbols();
  return out;
}

sdk::Status launchKernel(Kernel& k, const std::vector<void*>& args, const std::vector<int64_t>& symbols,
                         cl_command_queue queue) {
  const sdk::Span<const plugsdk_index_insn_t> pool(k.pool.data(), k.pool.size());
  sdk::StatusOr<std::vector<int64_t>> extents = lowering::evalGrid(pool, k.grid, symbols, k.name);
  if (!extents.isOk()) return extents.status();
  uint64_t points = 1;
  for (int64_t g : *extents) points *= static_cast<uint64_t>(g);
  if (points == 0) return sdk::Status::ok();
  const Api& api = *k.api;
  std::lock_guard<std::mutex> lock(k.mu);
  cl_uint i = 0;
  cl_int err = CL_SUCCESS;
  for (void* a : args)
    if (err == CL_SUCCESS) err = api.setKernelArgSVMPointer(k.kernel, i++, a);
  if (err == CL_SUCCESS) err = api.setKernelArgSVMPointer(k.kernel, i++, k.status->address(k.statusSlot));
  for (const int64_t& s : symbols)
    if (err == CL_SUCCESS) err = api.setKernelArg(k.kernel, i++, sizeof s, &s);
  if (err != CL_SUCCESS) return api.check(err, "kernel @" + k.name + ": setting parameter " + std::to_string(i - 1));
  // One work-item per point; the device picks the work-group size (the kernel guards
  // against work-items past the last point, so any rounding is safe).
  const size_t global = static_cast<size_t>(points);
  err = api.enqueueNDRangeKernel(queue, k.kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
  if (err == CL_SUCCESS) return sdk::Status::ok();
  return api.check(err, "kernel @" + k.name + ": clEnqueueNDRangeKernel(" + std::to_string(points) + " work-items)");
}

}  // namespace plugsdk::level_zero::opencl
