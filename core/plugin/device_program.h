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
#include "core/plugin/run_recordings.h"
#include "core/sched/interpreter.h"
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
  /// Launch the program this many times back to back in each repetition before its one
  /// synchronize (benchmarks of short programs: the synchronize's cost is spread over them).
  int batch = 1;
  /// When set, receives the wall time of each repetition (every launch, then synchronize)
  /// divided by `batch`: the time of one program.
  std::vector<double>* launchSeconds = nullptr;
};

/// A tensor in the caller's memory (a torch tensor's storage), borrowed for one run.
struct TensorArg {
  void* data = nullptr;
  ir::DType dtype = ir::DType::kF32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;               ///< elements; empty: contiguous
  uint32_t memoryKind = PLUGSDK_MEMORY_HOST;  ///< what `data` is (plugsdk_memory_kind_t)
};

/// How a runInto moved its tensors (tests and logs).
struct TransferStats {
  int imported = 0;    ///< tensors used in place (buffer_import)
  int copied = 0;      ///< tensors copied in or out
  bool waited = true;  ///< the run returned after its work completed (false: queued on the caller's stream)
  // Host time of the run's phases (seconds): binding sizes, importing and placing buffers and
  // copying inputs; the plugin's launch calls, for kernels and for library calls; waiting for
  // the work (and copying outputs back).
  double prepareSeconds = 0, kernelSeconds = 0, librarySeconds = 0, waitSeconds = 0;
  int kernels = 0, libraryCalls = 0;  ///< launch calls made
  bool recorded = false;              ///< the run's work was recorded (ABI 1.9) and then replayed
  bool replayed = false;              ///< the run replayed an earlier run's recording: no launch calls
};

/// DeviceProgram::recordingCounts.
struct RecordingCounts {
  uint64_t recorded = 0, replayed = 0, kept = 0;
};

/// Whether runInto waits for its work: always on the device's own stream; on an imported one
/// only when a kernel can fail at run time and the plugin does not raise that on the stream
/// itself (ABI 1.3 async_stream_failures), or when a copied tensor's buffer is freed on return.
inline bool runWaits(bool importedStream, bool mayFail, bool asyncStreamFailures, bool copies) {
  return !importedStream || (mayFail && !asyncStreamFailures) || copies;
}

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

  /// Runs on the caller's tensors: `outputs` are allocated by the caller with the shapes
  /// outputShapes() gives. A tensor is used in place when the plugin implements buffer_import
  /// (ABI 1.1) for its memory and its layout is the program's (inputs: the program's strides
  /// on every dim of size > 1; outputs: contiguous); otherwise it is copied, so any strides
  /// work. Thread-safe like run().
  ///
  /// `nativeStream` (a device's native stream, e.g. torch's current stream): the launches
  /// are queued on it (stream_import, ABI 1.2) behind the caller's own work there, and the
  /// run returns without waiting unless a kernel can fail at run time (Kernel::mayFail: a
  /// CHECK, an integer division) or an output is copied back; the caller orders later work
  /// on that stream. Null: the device's own stream, waited for; the caller must have finished
  /// writing the inputs.
  Status runInto(const std::vector<TensorArg>& inputs, const std::vector<TensorArg>& outputs,
                 TransferStats* stats = nullptr, void* nativeStream = nullptr) const;
  /// Whether runInto can take a native stream (the plugin implements stream_import).
  bool importsStreams() const { return device_.importsStreams(); }
  /// Counts the times runInto replaced its kept temporaries (a run needed a larger arena).
  /// Launches recorded for replay (a graph of a run captured on a native stream) hold the arena's
  /// address: they may be replayed only while this number is the one seen when recording.
  uint64_t memoryGeneration() const;
  /// Why runs are not recorded ("" while they are, or the plugin records nothing): a
  /// plugin refused to record this program's work once, and it is not asked again.
  std::string recordingOff() const;
  /// Recordings made, runs replayed from one, recordings kept (tests, logs).
  RecordingCounts recordingCounts() const;
  /// The output shapes for inputs of these dtypes and shapes (checked as run() checks them).
  StatusOr<std::vector<std::vector<int64_t>>> outputShapes(const std::vector<sched::InputShape>& inputs) const;

  const sched::Program& program() const { return program_; }
  /// The plugin's compiler log of every executable ("" when it has nothing to say).
  std::string log() const;

  struct Executable;  ///< a compiled step (device_program.cc)

 private:
  DeviceProgram(const Device& device, sched::Program program);
  const Device& device_;
  sched::Program program_;
  std::vector<std::unique_ptr<Executable>> steps_;  ///< one per program step
  bool mayFail_ = false;                            ///< some kernel can end a run in an error (Kernel::mayFail)
  mutable DeviceBuffer arena_;            ///< runInto's temporaries, kept from run to run (under the device lock)
  mutable uint64_t arenaGeneration_ = 0;  ///< times arena_ was replaced (memoryGeneration)
  /// runInto's recordings on native streams (under the device lock); declared after the
  /// executables and the arena they use, so destroyed before them.
  mutable RunRecordings recordings_;
};

}  // namespace plugsdk::plugin
