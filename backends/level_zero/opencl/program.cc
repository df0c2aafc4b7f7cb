// Building SPIR-V on the OpenCL device and launching its kernels (see program.h).
#include "backends/level_zero/opencl/program.h"

namespace plugsdk::level_zero::opencl {

Program::~Program() {
  if (program) api->releaseProgram(program);
}

Kernel::~Kernel() {
  if (kernel) api->releaseKernel(kernel);
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
  const std::string file = keepRejectedModule(words, stem, keepDir);
  return sdk::Status(
      err == CL_OUT_OF_HOST_MEMORY || err == CL_OUT_OF_RESOURCES ? sdk::Code::kResourceExhausted : sdk::Code::kInternal,
      what + ": " + device.props().name +
          " rejected its SPIR-V: " + (p->program ? "clBuildProgram" : "clCreateProgramWithIL") + " returned " +
          errorName(err) + (!log.empty() ? "; build log:\n" + log : "\n(no build log)") +
          "\nreproduce: " + reproduceCommand(file) + "   (spirv-dis " + file + " for the module)");
}

sdk::StatusOr<std::unique_ptr<Kernel>> createKernel(const Api& api, std::shared_ptr<Program> program,
                                                    const std::string& entry, LaunchShape shape) {
  auto out = std::make_unique<Kernel>();
  out->api = &api;
  out->shape = std::move(shape);
  cl_int err = CL_SUCCESS;
  out->kernel = api.createKernel(program->program, entry.c_str(), &err);
  sdk::Status st = api.check(err, "kernel @" + out->shape.name + ": clCreateKernel(" + entry + ")");
  if (!st.isOk()) return st;
  out->program = std::move(program);
  return out;
}

sdk::Status launchKernel(Kernel& k, const std::vector<void*>& args, const std::vector<int64_t>& symbols,
                         cl_command_queue queue) {
  sdk::StatusOr<uint64_t> n = k.shape.points(symbols);
  if (!n.isOk()) return n.status();
  const uint64_t points = *n;
  if (points == 0) return sdk::Status::ok();
  const Api& api = *k.api;
  void* const status = k.status->address(k.statusSlot);
  const std::vector<KernelParam> params = kernelParams(args, status, symbols);
  std::lock_guard<std::mutex> lock(k.mu);
  for (cl_uint i = 0; i < params.size(); ++i) {
    const KernelParam& p = params[i];
    const cl_int err = p.pointer ? api.setKernelArgSVMPointer(k.kernel, i, *static_cast<void* const*>(p.value))
                                 : api.setKernelArg(k.kernel, i, p.size, p.value);
    if (err != CL_SUCCESS)
      return api.check(err, "kernel @" + k.shape.name + ": setting parameter " + std::to_string(i));
  }
  // One work-item per point, the device picking the work-group size (the kernel guards
  // against work-items past the last point, so any rounding is safe); or one work-group of
  // the module's fixed size per point.
  const size_t local = k.shape.groupSize;
  const size_t global = static_cast<size_t>(points) * (local ? local : 1);
  const cl_int err =
      api.enqueueNDRangeKernel(queue, k.kernel, 1, nullptr, &global, local ? &local : nullptr, 0, nullptr, nullptr);
  if (err == CL_SUCCESS) return sdk::Status::ok();
  return api.check(err, "kernel @" + k.shape.name + ": clEnqueueNDRangeKernel(" + std::to_string(global) +
                            " work-items" + (local ? " in groups of " + std::to_string(local) : "") + ")");
}

sdk::Status launchGroups(Kernel& k, const std::vector<KernelParam>& params, const std::array<uint32_t, 3>& local,
                         const std::array<uint64_t, 3>& groups, cl_command_queue queue) {
  const Api& api = *k.api;
  std::lock_guard<std::mutex> lock(k.mu);
  for (cl_uint i = 0; i < params.size(); ++i) {
    const KernelParam& p = params[i];
    const cl_int err = p.pointer ? api.setKernelArgSVMPointer(k.kernel, i, *static_cast<void* const*>(p.value))
                                 : api.setKernelArg(k.kernel, i, p.size, p.value);
    if (err != CL_SUCCESS) return api.check(err, k.shape.name + ": setting parameter " + std::to_string(i));
  }
  size_t global[3], loc[3];
  for (int d = 0; d < 3; ++d) {
    loc[d] = local[d];
    global[d] = static_cast<size_t>(groups[d]) * local[d];
  }
  const cl_int err = api.enqueueNDRangeKernel(queue, k.kernel, 3, nullptr, global, loc, 0, nullptr, nullptr);
  if (err == CL_SUCCESS) return sdk::Status::ok();
  return api.check(err, k.shape.name + ": clEnqueueNDRangeKernel(" + std::to_string(groups[0]) + " x " +
                            std::to_string(groups[1]) + " x " + std::to_string(groups[2]) + " groups)");
}

}  // namespace plugsdk::level_zero::opencl
