// ABI 1.9 recordings on the cuda plugin: what is queued on a stream between recording_begin
// and recording_end is captured into a CUDA graph on a private capture stream (so the
// caller's stream -- torch's legacy default stream among them, which cannot be captured --
// is never put in capture mode), instantiated once, and replayed with one cuGraphLaunch on
// the caller's stream. The capture is thread-local: a call on this thread that cannot be
// captured (an allocation, a synchronize) fails the capture, and the core then runs the
// work without recording; other threads are not affected.
#pragma once

#include <cstddef>
#include <memory>

#include "backends/cuda/driver/cuda_api.h"
#include "plugsdk/status.hpp"

namespace plugsdk::cuda {

/// An instantiated CUDA graph of a stream's work.
class GraphRecording {
 public:
  GraphRecording(const DriverApi& api, CUcontext context, CUgraphExec exec, size_t nodes)
      : api_(api), context_(context), exec_(exec), nodes_(nodes) {}
  ~GraphRecording();
  GraphRecording(const GraphRecording&) = delete;
  GraphRecording& operator=(const GraphRecording&) = delete;

  size_t nodes() const { return nodes_; }
  /// Queues the graph on `stream`; FAILED_PRECONDITION (nothing queued) while the caller is
  /// capturing that stream into a graph of its own (torch's CUDA graphs record the work
  /// launch by launch instead).
  sdk::Status launch(CUstream stream) const;

 private:
  const DriverApi& api_;
  CUcontext context_;
  CUgraphExec exec_;
  size_t nodes_;
};

/// Whether `stream` is being captured by its owner (UNIMPLEMENTED then: nothing is recorded
/// inside another capture). `context` must be current.
sdk::Status notCaptured(const DriverApi& api, CUstream stream);
/// Starts capturing `capture` (a stream of the plugin's own, idle).
sdk::Status beginCapture(const DriverApi& api, CUstream capture);
/// Ends the capture of `capture` and instantiates its graph (UNIMPLEMENTED, with the
/// driver's reason, when the capture was invalidated or instantiation fails).
sdk::StatusOr<std::unique_ptr<GraphRecording>> endCapture(const DriverApi& api, CUcontext context, CUstream capture);

}  // namespace plugsdk::cuda
