// plugsdk._C: the Python binding over the core. It knows nothing of torch: tensors cross as
// (data pointer, dtype name, shape, strides, memory kind) tuples that the Python layer
// (plugsdk/runtime.py) takes from torch tensors, so one build works with any torch version.
// Errors are raised as plugsdk._C.Error with the core's message; long calls release the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

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

/// A graph compiled for a device: the stages' times (seconds) and texts for explain() and
/// dumps, and the executable program.
struct PyProgram {
  std::shared_ptr<PyDevice> device;  // outlives the program
  std::unique_ptr<plugin::DeviceProgram> program;
  std::vector<std::pair<std::string, double>> stageSeconds;
  size_t kernels = 0, libraryCalls = 0;
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

std::shared_ptr<PyProgram> compileText(const std::shared_ptr<PyDevice>& dev, const std::string& text,
                                       const std::string& dumpDir) {
  auto out = std::make_shared<PyProgram>();
  out->device = dev;
  py::gil_scoped_release nogil;
  auto clock = [] { return std::chrono::steady_clock::now(); };
  auto since = [&](auto t0) { return std::chrono::duration<double>(clock() - t0).count(); };
  std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  auto t0 = clock();
  ir::Graph g = take(text::parseGraph(*ctx, text));
  out->stageSeconds.push_back({"import", since(t0)});
  compile::CompileOptions base;
  base.dumpDir = dumpDir;
  t0 = clock();
  compile::Compiled c = take(compile::compileGraph(*ctx, g, plugin::optionsFor(dev->device->caps(), base)));
  out->stageSeconds.push_back({"prims+schedule", since(t0)});
  for (const sched::Step& s : c.program.steps)
    (s.kind == sched::Step::Kind::kLaunch ? out->kernels : out->libraryCalls)++;
  t0 = clock();
  out->program = take(plugin::DeviceProgram::compile(*dev->device, std::move(c.program)));
  out->stageSeconds.push_back({"codegen", since(t0)});
  return out;
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

  py::class_<PyProgram, std::shared_ptr<PyProgram>>(m, "Program")
      .def_readonly("stage_seconds", &PyProgram::stageSeconds)
      .def_readonly("kernels", &PyProgram::kernels)
      .def_readonly("library_calls", &PyProgram::libraryCalls)
      .def("output_shapes",
           [](const PyProgram& p, const std::vector<std::pair<std::string, std::vector<int64_t>>>& ins) {
             std::vector<sched::InputShape> shapes;
             for (const auto& [dt, shape] : ins) shapes.push_back({dtypeOf(dt), shape});
             return take(p.program->outputShapes(shapes));
           })
      .def("output_dtypes",
           [](const PyProgram& p) {
             std::vector<std::string> out;
             const sched::Program& pr = p.program->program();
             for (const sched::ProgramOutput& o : pr.outputs)
               out.emplace_back(ir::dtypeName(pr.buffers[static_cast<size_t>(o.buffer)].dtype));
             return out;
           })
      .def(
          "run",
          [](const PyProgram& p, const std::vector<TensorTuple>& ins, const std::vector<TensorTuple>& outs) {
            std::vector<plugin::TensorArg> a, b;
            for (const TensorTuple& t : ins) a.push_back(tensorArg(t));
            for (const TensorTuple& t : outs) b.push_back(tensorArg(t));
            plugin::TransferStats st;
            {
              py::gil_scoped_release nogil;
              check(p.program->runInto(a, b, &st));
            }
            return py::make_tuple(st.imported, st.copied);
          },
          "Runs on (data_ptr, dtype, shape, strides, memory_kind) tuples; outputs are written in "
          "place. Returns (tensors used in place, tensors copied).")
      .def("log", [](const PyProgram& p) { return p.program->log(); });

  m.def("compile", &compileText, py::arg("device"), py::arg("pgraph"), py::arg("dump_dir") = "",
        "Compiles a .pgraph text (ATen-level ops, symbolic sizes allowed) for the device: prims, "
        "schedule, the plugin's code generation.");
  m.def(
      "decomposed_ops", [] { return decomp::makeDefaultDecompositions().ops(); },
      "The ATen-level ops the core lowers to prims (the ops a graph may hold).");
}
