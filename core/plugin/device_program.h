// A scheduled Program on a plugin device. Compiling checks everything the device must do
// against its capabilities first -- every dtype a kernel touches, every library op and
// epilogue -- so that an unsupported op is an error at compile time naming the op and the
// device (there is no host fallback), then compiles each kernel and library call into an
// executable. Running allocates through the plugin (inputs, outputs and one arena for the
// temporaries, as the memory plan lays them out), uploads, launches every step in order on
// the device's stream, synchronizes and downloads the outputs.
#pragma once

#include <memory>
#include <vector>

#include "core/compile/pipeline.h"
#include "core/exec/host_tensor.h"
#include "core/plugin/device.h"
#include "core/sched/program.h"

namespace plugsdk::plugin {

/// The compile options a device's capabilities call for: its fusion flags, its kernel size
/// limit, and the library ops it does not implement expanded into loop kernels.
compile::CompileOptions optionsFor(const DeviceCaps& caps, compile::CompileOptions base = {});

struct RunOptions {
  /// Fill the outputs and the temporaries' arena with 0xff bytes (NaN in every float dtype,
  /// -1 in the integers) before the first launch, so that an element a device never writes
  /// cannot pass for a correct 0 (the conformance suite runs this way).
  bool poison = false;
  /// Launch the whole program this many times over the same uploaded inputs (benchmarks:
  /// upload and download happen once, outside the timed part).
  int repeat = 1;
  /// When set, receives the wall time of each repetition: every launch, then synchronize.
  std::vector<double>* launchSeconds = nullptr;
};

class DeviceProgram {
 public:
  /// Compiles `program` (scheduled with optionsFor(device.caps())) for `device`, which must
  /// outlive the result.
  static StatusOr<std::unique_ptr<DeviceProgram>> compile(const Device& device, sched::Program program);
  ~DeviceProgram();
  DeviceProgram(const DeviceProgram&) = delete;
  DeviceProgram& operator=(const DeviceProgram&) = delete;

  /// Runs on logical (contiguous) inputs; returns the outputs. Thread-safe: runs from several
  /// threads take turns on the device's client.
  StatusOr<std::vector<exec::HostTensor>> run(const std::vector<exec::HostTensor>& inputs,
                                              const RunOptions& options = {}) const;

  const sched::Program& program() const { return program_; }
  /// The plugin's compiler log of every executable ("" when it has nothing to say).
  std::string log() const;

  struct Executable;  ///< a compiled step (device_program.cc)

 private:
  DeviceProgram(const Device& device, sched::Program program);
  const Device& device_;
  sched::Program program_;
  std::vector<std::unique_ptr<Executable>> steps_;  ///< one per program step
};

}  // namespace plugsdk::plugin
