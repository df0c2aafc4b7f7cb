// CUDA graphs of a stream's work (graph_recording.h).
#include "backends/cuda/runtime/graph_recording.h"

#include <memory>

#include "backends/cuda/runtime/device.h"

namespace plugsdk::cuda {

GraphRecording::~GraphRecording() {
  ContextGuard g(api_, context_);
  api_.graphExecDestroy(exec_);
}

sdk::Status GraphRecording::launch(CUstream stream) const {
  int capturing = 0;
  if (api_.streamIsCapturing(stream, &capturing) == CUDA_SUCCESS && capturing)
    return sdk::failedPrecondition("the stream is being captured into a CUDA graph by its owner");
  return api_.check(api_.graphLaunch(exec_, stream),
                    "cuGraphLaunch (a recording of " + std::to_string(nodes_) + " nodes)");
}

sdk::Status notCaptured(const DriverApi& api, CUstream stream) {
  int capturing = 0;
  const CUresult r = api.streamIsCapturing(stream, &capturing);
  if (r != CUDA_SUCCESS) return sdk::unimplemented("cuStreamIsCapturing: " + api.errorText(r));
  if (capturing) return sdk::unimplemented("the stream is being captured into a CUDA graph by its owner");
  return sdk::Status::ok();
}

sdk::Status beginCapture(const DriverApi& api, CUstream capture) {
  return api.check(api.streamBeginCapture(capture, kCaptureModeThreadLocal), "cuStreamBeginCapture");
}

sdk::StatusOr<std::unique_ptr<GraphRecording>> endCapture(const DriverApi& api, CUcontext context, CUstream capture) {
  CUgraph graph = nullptr;
  CUresult r = api.streamEndCapture(capture, &graph);
  if (r != CUDA_SUCCESS || !graph) {
    if (graph) api.graphDestroy(graph);
    return sdk::unimplemented("the work could not be captured into a CUDA graph: " + api.errorText(r));
  }
  size_t nodes = 0;
  api.graphGetNodes(graph, nullptr, &nodes);
  CUgraphExec exec = nullptr;
  r = api.graphInstantiate(&exec, graph, 0);
  api.graphDestroy(graph);
  if (r != CUDA_SUCCESS) return sdk::unimplemented("cuGraphInstantiate: " + api.errorText(r));
  return std::make_unique<GraphRecording>(api, context, exec, nodes);
}

}  // namespace plugsdk::cuda
