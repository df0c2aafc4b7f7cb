// plugsdk._C: the Python binding over the core. It knows nothing of torch: tensors cross as
// (data pointer, dtype name, shape, strides, memory kind) tuples that the Python layer
// (plugsdk/runtime.py) takes from torch tensors, so one build works with any torch version.
// Errors are raised as plugsdk._C.Error with the core's message; long calls release the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "core/cache/compiled_function.h"
#include "core/cache/disk_cache.h"
#include "core/compile/pipeline.h"
#include "core/decomp/decompose.h"
#include "core/plugin/device.h"
#include "core/plugin/device_program.h"
#include "core/plugin/loader.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

namespace py = pybind11;

namespace plugsdk::python {
namespace {

/// Raised for every core error; Python sees plugsdk._C.Error("<code>: <message>").
struct CoreError : std::runtime_error {
  explicit CoreError(const Status& s) : std::runtime_error(s.toString()) {}
};

void check(const Status& s) {
  if (!s.isOk()) throw CoreError(s);
}

template <typename T>
T take(StatusOr<T> v) {
  check(v.status());
  return std::move(*v);
}

ir::DType dtypeOf(const std::string& name) {
  std::optional<ir::DType> d = ir::parseDType(name);
  if (!d) throw CoreError(invalidArgument("unknown dtype '" + name + "'"));
  return *d;
}

/// An open device of a loaded plugin (the plugin stays loaded while it lives).
struct PyDevice {
  std::shared_ptr<const plugin::Plugin> plugin;
  std::unique_ptr<plugin::Device> device;
};

/// A captured graph on a device: the core's artifact cache (core/cache/compiled_function.h).
struct PyFunction {
  std::shared_ptr<PyDevice> device;  // outlives the function
  std::unique_ptr<cache::DiskCache> disk;
  std::unique_ptr<cache::CompiledFunction> fn;
};

/// One compiled specialization; keeps its function (and so its device) alive.
struct PyArtifact {
  std::shared_ptr<PyFunction> owner;
  std::shared_ptr<const cache::Artifact> a;
};

using TensorTuple = std::tuple<uintptr_t, std::string, std::vector<int64_t>, std::vector<int64_t>, uint32_t>;

plugin::TensorArg tensorArg(const TensorTuple& t) {
  plugin::TensorArg a;
  a.data = reinterpret_cast<void*>(std::get<0>(t));
  a.dtype = dtypeOf(std::get<1>(t));
  a.shape = std::get<2>(t);
  a.strides = std::get<3>(t);
  a.memoryKind = std::get<4>(t);
  return a;
}

std::vector<std::vector<int64_t>> outputShapes(const plugin::DeviceProgram& p,
                                               const std::vector<std::pair<std::string, std::vector<int64_t>>>& ins) {
  std::vector<sched::InputShape> shapes;
  for (const auto& [dt, shape] : ins) shapes.push_back({dtypeOf(dt), shape});
  return take(p.outputShapes(shapes));
}

std::vector<std::string> outputDtypes(const plugin::DeviceProgram& p) {
  std::vector<std::string> out;
  const sched::Program& pr = p.program();
  for (const sched::ProgramOutput& o : pr.outputs)
    out.emplace_back(ir::dtypeName(pr.buffers[static_cast<size_t>(o.buffer)].dtype));
  return out;
}

/// `stream`: a native stream handle (torch.cuda.current_stream().cuda_stream), 0 for none.
plugin::TransferStats runStats(const plugin::DeviceProgram& p, const std::vector<TensorTuple>& ins,
                               const std::vector<TensorTuple>& outs, uintptr_t stream) {
  std::vector<plugin::TensorArg> a, b;
  for (const TensorTuple& t : ins) a.push_back(tensorArg(t));
  for (const TensorTuple& t : outs) b.push_back(tensorArg(t));
  plugin::TransferStats st;
  {
    py::gil_scoped_release nogil;
    check(p.runInto(a, b, &st, reinterpret_cast<void*>(stream)));
  }
  return st;
}

py::tuple runProgram(const plugin::DeviceProgram& p, const std::vector<TensorTuple>& ins,
                     const std::vector<TensorTuple>& outs, uintptr_t stream) {
  const plugin::TransferStats st = runStats(p, ins, outs, stream);
  return py::make_tuple(st.imported, st.copied);
}

py::dict recordingCounts(const plugin::DeviceProgram& p) {
  const plugin::RecordingCounts c = p.recordingCounts();
  py::dict d;
  d["recorded"] = c.recorded;
  d["replayed"] = c.replayed;
  d["kept"] = c.kept;
  return d;
}

/// run, returning what it did and the host time of its phases (profiling).
py::dict runTimed(const plugin::DeviceProgram& p, const std::vector<TensorTuple>& ins,
                  const std::vector<TensorTuple>& outs, uintptr_t stream) {
  const plugin::TransferStats st = runStats(p, ins, outs, stream);
  py::dict d;
  d["imported"] = st.imported;
  d["copied"] = st.copied;
  d["waited"] = st.waited;
  d["prepare_s"] = st.prepareSeconds;
  d["kernel_launch_s"] = st.kernelSeconds;
  d["library_call_s"] = st.librarySeconds;
  d["wait_s"] = st.waitSeconds;
  d["kernels"] = st.kernels;
  d["library_calls"] = st.libraryCalls;
  d["recorded"] = st.recorded;
  d["replayed"] = st.replayed;
  return d;
}

constexpr const char* kRunDoc =
    "Runs on (data_ptr, dtype, shape, strides, memory_kind) tuples; outputs are written in place. "
    "stream: a native stream handle (torch's current CUDA stream) to queue the run on without "
    "waiting (needs imports_streams), 0: the device's own stream, waited for. Returns (tensors used "
    "in place, tensors copied). A training artifact's outputs are the graph's followed by the values "
    "saved for the backward; a backward's inputs are the saved forward inputs, the saved values and the "
    "tangents, its outputs the gradients.";

/// The backward half of a training artifact (keeps the artifact alive).
struct PyBackward {
  std::shared_ptr<PyArtifact> owner;
  const cache::BackwardProgram& b() const { return *owner->a->backward; }
  const plugin::DeviceProgram& program() const {
    if (!b().program) throw CoreError(failedPrecondition("no gradient flows: this artifact has no backward program"));
    return *b().program;
  }
};

std::shared_ptr<PyDevice> openDevice(const std::string& name, uint32_t index, const std::string& options,
                                     const std::vector<std::string>& extraSearchPath, bool probe) {
  std::vector<std::string> path = extraSearchPath;
  for (const std::string& d : plugin::Loader::defaultSearchPath()) path.push_back(d);
  auto d = std::make_shared<PyDevice>();
  {
    py::gil_scoped_release nogil;
    d->plugin = take(plugin::Loader(path).load(name, probe));
    d->device = take(plugin::Device::open(d->plugin, index, options));
  }
  return d;
}

using Signature = std::tuple<std::string, std::vector<int64_t>, std::vector<int64_t>, std::string, bool>;

cache::DynamicPolicy policyOf(const std::string& name) {
  if (name == "automatic") return cache::DynamicPolicy::kAutomatic;
  if (name == "symbolic") return cache::DynamicPolicy::kSymbolic;
  if (name == "static") return cache::DynamicPolicy::kStatic;
  throw CoreError(invalidArgument("dynamic policy '" + name + "': want automatic, symbolic or static"));
}

std::shared_ptr<PyFunction> makeFunction(const std::shared_ptr<PyDevice>& dev, const std::string& text,
                                         const std::string& dynamic, int recompileLimit, const std::string& inputDevice,
                                         const std::string& dumpDir, const std::string& cacheDir, bool autotune,
                                         bool training, const std::vector<bool>& differentiableOutputs) {
  auto out = std::make_shared<PyFunction>();
  out->device = dev;
  out->disk = std::make_unique<cache::DiskCache>(cacheDir == "off" ? "" : cacheDir);
  cache::FunctionOptions o;
  o.disk = out->disk.get();
  o.autotune = autotune;
  o.training = training;
  o.differentiableOutputs = differentiableOutputs;
  o.dynamic = policyOf(dynamic);
  o.recompileLimit = recompileLimit;
  o.inputDevice = inputDevice;
  o.compile.dumpDir = dumpDir;
  py::gil_scoped_release nogil;
  std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  ir::Graph g = take(text::parseGraph(*ctx, text));
  out->fn = std::make_unique<cache::CompiledFunction>(ctx, *dev->device, std::move(g), o);
  return out;
}

py::tuple selectArtifact(const std::shared_ptr<PyFunction>& f, const std::vector<Signature>& sigs) {
  std::vector<guard::TensorSignature> in;
  for (const auto& [dt, shape, strides, device, grad] : sigs) in.push_back({dtypeOf(dt), shape, strides, device, grad});
  cache::Selection s;
  {
    py::gil_scoped_release nogil;
    s = take(f->fn->select(in));
  }
  py::object art = py::none();
  if (s.artifact) art = py::cast(std::make_shared<PyArtifact>(PyArtifact{f, s.artifact}));
  return py::make_tuple(art, s.fallbackReason, s.compiled);
}

py::dict statsDict(const cache::FunctionStats& s) {
  py::dict d;
  d["compiles"] = s.compiles;
  d["hits"] = s.hits;
  d["misses"] = s.misses;
  d["fallbacks"] = s.fallbacks;
  d["disk_hits"] = s.diskHits;
  d["disk_rejected"] = s.diskRejected;
  d["last_disk_problem"] = s.lastDiskProblem;
  d["entries"] = s.entries;
  d["compile_seconds"] = s.compileSeconds;
  d["miss_reasons"] = s.missReasons;
  return d;
}

}  // namespace
}  // namespace plugsdk::python

PYBIND11_MODULE(_C, m) {
  using namespace plugsdk;
  using namespace plugsdk::python;
  m.doc() = "plugsdk core binding (see plugsdk/__init__.py for the Python API)";
  py::register_exception<CoreError>(m, "Error");  // message: "<code>: <what failed>"
  m.attr("ABI_VERSION") = py::make_tuple(PLUGSDK_ABI_VERSION_MAJOR, PLUGSDK_ABI_VERSION_MINOR);
  m.attr("MEMORY_HOST") = static_cast<uint32_t>(PLUGSDK_MEMORY_HOST);
  m.attr("MEMORY_DEVICE") = static_cast<uint32_t>(PLUGSDK_MEMORY_DEVICE);
#ifdef PLUGSDK_PY_BUILD_PLUGIN_DIR
  m.attr("BUILD_PLUGIN_DIR") = PLUGSDK_PY_BUILD_PLUGIN_DIR;
#endif

  py::class_<PyDevice, std::shared_ptr<PyDevice>>(m, "Device")
      .def("describe", [](const PyDevice& d) { return d.device->describe(); })
      .def_property_readonly("plugin", [](const PyDevice& d) { return d.plugin->name(); })
      .def_property_readonly("plugin_path", [](const PyDevice& d) { return d.plugin->path(); })
      .def_property_readonly(
          "abi", [](const PyDevice& d) { return py::make_tuple(d.plugin->abiMajor(), d.plugin->abiMinor()); });
  m.def("open_device", &openDevice, py::arg("name"), py::arg("index") = 0, py::arg("options") = "",
        py::arg("search_path") = std::vector<std::string>{}, py::arg("probe") = true,
        "Loads plugin `name` (lib<plugsdk_NAME>.so on search_path, PLUGSDK_PLUGIN_PATH, then the "
        "install dirs) and opens device `index` with client options \"key=value;...\".");

  py::class_<PyArtifact, std::shared_ptr<PyArtifact>>(m, "Artifact")
      .def_property_readonly("stage_seconds", [](const PyArtifact& p) { return p.a->stageSeconds; })
      .def_property_readonly("kernels", [](const PyArtifact& p) { return p.a->kernels; })
      .def_property_readonly("library_calls", [](const PyArtifact& p) { return p.a->libraryCalls; })
      .def_property_readonly("specialized", [](const PyArtifact& p) { return p.a->specialized; })
      .def_property_readonly("guards", [](const PyArtifact& p) { return p.a->guards.toString(); })
      .def_property_readonly("from_disk", [](const PyArtifact& p) { return p.a->fromDisk; })
      .def_property_readonly("autotune", [](const PyArtifact& p) { return p.a->autotuneMillis; })
      .def_property_readonly("autotune_winner", [](const PyArtifact& p) { return p.a->autotuneWinner; })
      .def("output_shapes",
           [](const PyArtifact& p, const std::vector<std::pair<std::string, std::vector<int64_t>>>& ins) {
             return outputShapes(*p.a->program, ins);
           })
      .def("output_dtypes", [](const PyArtifact& p) { return outputDtypes(*p.a->program); })
      .def(
          "run",
          [](const PyArtifact& p, const std::vector<TensorTuple>& ins, const std::vector<TensorTuple>& outs,
             uintptr_t stream) { return runProgram(*p.a->program, ins, outs, stream); },
          py::arg("ins"), py::arg("outs"), py::arg("stream") = 0, kRunDoc)
      .def(
          "run_timed",
          [](const PyArtifact& p, const std::vector<TensorTuple>& ins, const std::vector<TensorTuple>& outs,
             uintptr_t stream) { return runTimed(*p.a->program, ins, outs, stream); },
          py::arg("ins"), py::arg("outs"), py::arg("stream") = 0,
          "run, returning a dict: imported, copied, waited, the host seconds of its phases (prepare_s, "
          "kernel_launch_s, library_call_s, wait_s), the launch calls made (kernels, library_calls), and "
          "whether the run was recorded or replayed a recording (recorded, replayed; ABI 1.9).")
      .def_property_readonly("imports_streams", [](const PyArtifact& p) { return p.a->program->importsStreams(); })
      .def_property_readonly(
          "recording_off", [](const PyArtifact& p) { return p.a->program->recordingOff(); },
          "Why runs of this program are not recorded: '' while they are (or the plugin records nothing).")
      .def_property_readonly(
          "recording_counts", [](const PyArtifact& p) { return recordingCounts(*p.a->program); },
          "{'recorded', 'replayed', 'kept'}: recordings of runs made (ABI 1.9), runs replayed, recordings kept.")
      .def_property_readonly(
          "memory_generation", [](const PyArtifact& p) { return p.a->program->memoryGeneration(); },
          "Counts the times a run replaced the program's kept temporaries: a CUDA graph recorded "
          "from a run may be replayed only while it is unchanged.")
      .def_property_readonly(
          "backward",
          [](const std::shared_ptr<PyArtifact>& p) -> py::object {
            if (!p->a->backward) return py::none();
            return py::cast(std::make_shared<PyBackward>(PyBackward{p}));
          },
          "A training artifact's backward (None for an inference artifact).")
      .def("log", [](const PyArtifact& p) { return p.a->program->log(); });

  py::class_<PyBackward, std::shared_ptr<PyBackward>>(m, "Backward")
      .def_property_readonly("has_program", [](const PyBackward& p) { return p.b().program != nullptr; })
      .def_property_readonly("saved_inputs", [](const PyBackward& p) { return p.b().savedInputs; })
      .def_property_readonly("num_saved", [](const PyBackward& p) { return p.b().numSavedValues; })
      .def_property_readonly("tangent_of", [](const PyBackward& p) { return p.b().tangentOf; })
      .def_property_readonly("grad_of", [](const PyBackward& p) { return p.b().gradOf; })
      .def_property_readonly("grad_tangents", [](const PyBackward& p) { return p.b().gradTangents; })
      .def_property_readonly("stats",
                             [](const PyBackward& p) {
                               const autograd::PartitionStats& s = p.b().stats;
                               py::dict d;
                               d["saved_bytes"] = s.savedBytes;
                               d["saved_bytes_no_recompute"] = s.savedBytesNoRecompute;
                               d["saved_input_bytes"] = s.savedInputBytes;
                               d["saved"] = s.saved;
                               d["saved_no_recompute"] = s.savedNoRecompute;
                               d["recomputed"] = s.recomputed;
                               return d;
                             })
      .def("output_shapes",
           [](const PyBackward& p, const std::vector<std::pair<std::string, std::vector<int64_t>>>& ins) {
             return outputShapes(p.program(), ins);
           })
      .def("output_dtypes", [](const PyBackward& p) { return outputDtypes(p.program()); })
      .def(
          "run",
          [](const PyBackward& p, const std::vector<TensorTuple>& ins, const std::vector<TensorTuple>& outs,
             uintptr_t stream) { return runProgram(p.program(), ins, outs, stream); },
          py::arg("ins"), py::arg("outs"), py::arg("stream") = 0, kRunDoc)
      .def(
          "run_timed",
          [](const PyBackward& p, const std::vector<TensorTuple>& ins, const std::vector<TensorTuple>& outs,
             uintptr_t stream) { return runTimed(p.program(), ins, outs, stream); },
          py::arg("ins"), py::arg("outs"), py::arg("stream") = 0, "Artifact.run_timed, for the backward program.")
      .def_property_readonly("imports_streams", [](const PyBackward& p) { return p.program().importsStreams(); })
      .def_property_readonly("recording_off", [](const PyBackward& p) { return p.program().recordingOff(); })
      .def_property_readonly("recording_counts", [](const PyBackward& p) { return recordingCounts(p.program()); });

  py::class_<PyFunction, std::shared_ptr<PyFunction>>(m, "Function")
      .def(py::init(&makeFunction), py::arg("device"), py::arg("pgraph"), py::arg("dynamic") = "automatic",
           py::arg("recompile_limit") = 8, py::arg("input_device") = "cpu", py::arg("dump_dir") = "",
           py::arg("cache_dir") = "", py::arg("autotune") = false, py::arg("training") = false,
           py::arg("differentiable_outputs") = std::vector<bool>{},
           "A .pgraph text (ATen-level ops, symbolic sizes allowed) to be compiled for the device on "
           "demand: select() returns the artifact whose guards admit the inputs, compiling on a miss.")
      .def("select", &selectArtifact, py::arg("signatures"),
           "signatures: (dtype, shape, strides, device, requires_grad) per input. Returns (artifact or "
           "None, fallback reason, compiled now).")
      .def(
          "count_hit", [](PyFunction& f) { f.fn->countHit(); },
          "A hit the caller served from its own memo of select()'s answers (counted in stats).")
      .def("stats", [](const PyFunction& f) { return statsDict(f.fn->stats()); });
  m.def("default_cache_dir", &cache::DiskCache::defaultDir,
        "The persistent program cache's directory: $PLUGSDK_CACHE_DIR/core, $XDG_CACHE_HOME/plugsdk/core "
        "or ~/.cache/plugsdk/core (\"\" when PLUGSDK_CACHE_DIR=off).");

  m.def(
      "decomposed_ops", [] { return decomp::makeDefaultDecompositions().ops(); },
      "The ATen-level ops the core lowers to prims (the ops a graph may hold).");
}
