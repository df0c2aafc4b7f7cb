// DeviceProgram: capability checks, kernel and library compilation through the table,
// allocation by the memory plan, uploads, launches in order, downloads.
#include "core/plugin/device_program.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <set>

#include "core/exec/kernel_utils.h"
#include "core/exec/tensor_bytes.h"
#include "core/plugin/kernel_encoding.h"
#include "core/prims/prims.h"
#include "core/sched/interpreter.h"

namespace plugsdk::plugin {

using ir::SymExpr;
using Symbols = std::map<std::string, int64_t>;

compile::CompileOptions optionsFor(const DeviceCaps& caps, compile::CompileOptions o) {
  sched::FusionCaps& f = o.schedule.caps;
  f.horizontal = f.horizontal && caps.fusesHorizontal;
  f.reductionEpilogue = f.reductionEpilogue && caps.fusesReductionEpilogue;
  f.multiReduction = f.multiReduction && caps.fusesMultiReduction;
  // The scheduler fuses epilogues into matmul and convolution only (sched/fusion.cc), each as the
  // device's epilogue bit for it says. Sdpa's epilogue bit does not matter.
  f.matmulEpilogue = f.matmulEpilogue && (caps.epilogueOps & caps.libraryOps & PLUGSDK_LIBRARY_MATMUL);
  f.convolutionEpilogue = f.convolutionEpilogue && (caps.epilogueOps & caps.libraryOps & PLUGSDK_LIBRARY_CONVOLUTION);
  if (caps.maxKernelStmts) f.maxKernelStmts = std::min<int64_t>(f.maxKernelStmts, caps.maxKernelStmts);
  // Split reductions (ABI 1.5) are the device's to ask for: 0 (an older plugin) never splits.
  f.splitRowReductions = caps.splitRowReductions;
  f.splitColumnReductions = caps.splitColumnReductions;
  for (std::string_view op : prims::kLibraryPrims)
    if (!(caps.libraryOps & libraryOpBit(std::string(op)))) o.decomp.expand.insert(std::string(op));
  o.decomp.mixedMatmul = o.decomp.mixedMatmul && caps.mixedMatmul;
  // The forms of prims.convolution the device takes (ABI 1.4), within those `o` already asks.
  if (caps.convolutionDtypes) {
    std::vector<ir::DType> taken;
    for (int i = 0; i < ir::kNumDTypes; ++i) {
      const auto t = static_cast<ir::DType>(i);
      const auto& asked = o.decomp.convolutionDtypes;
      if (caps.takesConvolution(t, false) && (asked.empty() || std::count(asked.begin(), asked.end(), t)))
        taken.push_back(t);
    }
    o.decomp.convolutionDtypes = std::move(taken);
    // No dtype in common: none is taken, which an empty list would not say.
    if (o.decomp.convolutionDtypes.empty()) o.decomp.expand.insert("prims.convolution");
  }
  o.decomp.convolutionTransposed = o.decomp.convolutionTransposed && !caps.convolutionSkipsTransposed;
  // The operand dtypes of prims.matmul the device takes (ABI 1.6), likewise.
  if (caps.matmulDtypes) {
    std::vector<ir::DType> taken;
    for (int i = 0; i < ir::kNumDTypes; ++i) {
      const auto t = static_cast<ir::DType>(i);
      const auto& asked = o.decomp.matmulDtypes;
      if (caps.takesMatmul(t) && (asked.empty() || std::count(asked.begin(), asked.end(), t))) taken.push_back(t);
    }
    o.decomp.matmulDtypes = std::move(taken);
    if (o.decomp.matmulDtypes.empty()) o.decomp.expand.insert("prims.matmul");
    // An f32 result of f16/bf16 operands needs one of them taken: otherwise attention's
    // products are better converted to f32 first (a matmul the device takes) than left mixed
    // (expanded into loops).
    if (!caps.takesMatmul(ir::DType::kF16) && !caps.takesMatmul(ir::DType::kBF16)) o.decomp.mixedMatmul = false;
  }
  // The forms of prims.sdpa the device takes (ABI 1.7), within those `o` already asks.
  decomp::DecompOptions::SdpaForms& a = o.decomp.sdpa;
  if (caps.sdpaDtypes) {
    std::vector<ir::DType> taken;
    for (int i = 0; i < ir::kNumDTypes; ++i) {
      const auto t = static_cast<ir::DType>(i);
      if (((caps.sdpaDtypes >> i) & 1u) && (a.dtypes.empty() || std::count(a.dtypes.begin(), a.dtypes.end(), t)))
        taken.push_back(t);
    }
    a.dtypes = std::move(taken);
    if (a.dtypes.empty()) {
      o.decomp.expand.insert("prims.sdpa");
      o.decomp.expand.insert("prims.sdpa_backward");
    }
  }
  const uint32_t skips = caps.sdpaSkips;
  a.boolMask = a.boolMask && !(skips & PLUGSDK_SDPA_SKIPS_BOOL_MASK);
  a.floatMask = a.floatMask && !(skips & PLUGSDK_SDPA_SKIPS_FLOAT_MASK);
  a.dropout = a.dropout && !(skips & PLUGSDK_SDPA_SKIPS_DROPOUT);
  a.causal = a.causal && !(skips & PLUGSDK_SDPA_SKIPS_CAUSAL);
  a.unequalHeadDims = a.unequalHeadDims && !(skips & PLUGSDK_SDPA_SKIPS_UNEQUAL_HEAD_DIMS);
  if (caps.sdpaHeadDimMax)
    a.headDimMax = a.headDimMax ? std::min<int64_t>(a.headDimMax, caps.sdpaHeadDimMax) : caps.sdpaHeadDimMax;
  if (caps.sdpaHeadDimMultiple > 1)
    a.headDimMultiple = a.headDimMultiple > 1 ? std::lcm<int64_t>(a.headDimMultiple, caps.sdpaHeadDimMultiple)
                                              : caps.sdpaHeadDimMultiple;
  return o;
}

struct DeviceProgram::Executable {
  const Device* device = nullptr;
  plugsdk_executable_t* handle = nullptr;
  std::vector<std::string> symbols;  ///< the launch's symbol values, in this order
  std::string what;                  ///< "kernel k3" / "prims.matmul", for messages

  Executable() = default;
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;
  ~Executable() {
    if (!handle) return;
    auto held = device->lock();
    plugsdk_executable_destroy_args_t a{};
    a.struct_size = sizeof(a);
    a.client = device->client();
    a.executable = handle;
    (void)device->check(device->api().executable_destroy(&a), "executable_destroy");
  }
};

DeviceProgram::DeviceProgram(const Device& device, sched::Program program)
    : device_(device), program_(std::move(program)) {}
DeviceProgram::~DeviceProgram() = default;

namespace {

/// The dtypes of a kernel's values that need the device's claim. Not the kernel language's
/// own: bool predicates (comparisons, load masks, WHERE and CHECK operands) and i64 index
/// values (INDEX results and integer constants compared with them), which a padded
/// convolution or a concat makes in every kernel that reads across a boundary.
void collectDTypes(const std::vector<kernel::Stmt>& body, std::set<ir::DType>& out) {
  for (const kernel::Stmt& s : body) {
    const bool indexValue =
        s.dtype == ir::DType::kI64 && (s.kind == kernel::StmtKind::kIndex || s.kind == kernel::StmtKind::kConst);
    if (s.kind != kernel::StmtKind::kStore && s.kind != kernel::StmtKind::kLoop && s.kind != kernel::StmtKind::kCheck &&
        s.dtype != ir::DType::kBool && !indexValue)
      out.insert(s.dtype);
    collectDTypes(s.body, out);
  }
}

/// Every dtype a kernel keeps in memory or computes in must be one the device claims (but
/// predicates and index values, above).
Status checkKernelDTypes(const Device& device, const kernel::Kernel& k, const std::string& where) {
  std::set<ir::DType> used;
  collectDTypes(k.body, used);
  for (const kernel::Arg& a : k.args) used.insert(a.dtype);
  for (ir::DType t : used)
    if (!device.caps().supports(t))
      return unimplemented(where + " (kernel " + k.name + ") uses dtype " + std::string(ir::dtypeName(t)) +
                           ", which device " + device.describe() +
                           " does not support (it supports: " + device.caps().dtypeList() + ")");
  return Status::ok();
}

std::string stepName(size_t i, const sched::Step& s) {
  return "step " + std::to_string(i) + " (" + (s.origin.empty() ? "?" : s.origin) + ")";
}

StatusOr<std::unique_ptr<DeviceProgram::Executable>> compileKernel(const Device& d, const kernel::Kernel& k) {
  ASSIGN_OR_RETURN(std::unique_ptr<EncodedKernel> enc, encodeKernel(k));
  plugsdk_compile_kernel_args_t a{};
  a.struct_size = sizeof(a);
  a.client = d.client();
  a.device = d.index();
  a.kernel = &enc->get();
  RETURN_IF_ERROR(d.check(d.api().compile_kernel(&a), "compile_kernel of " + k.name));
  if (!a.out_executable)
    return internalError("plugin " + d.plugin().path() + ": compile_kernel of " + k.name +
                         " succeeded but returned a NULL executable");
  auto e = std::make_unique<DeviceProgram::Executable>();
  e->device = &d;
  e->handle = a.out_executable;
  e->what = "kernel " + k.name;
  for (size_t i = 0; i < enc->get().num_symbols; ++i) e->symbols.emplace_back(enc->get().symbols[i]);
  return e;
}

LibraryOperand operandOf(const sched::Program& p, const sched::View& v, std::optional<ir::DType> dtype) {
  LibraryOperand o;
  o.dtype = dtype ? dtype : std::optional<ir::DType>(p.buffers[static_cast<size_t>(v.buffer)].dtype);
  o.shape = v.shape;
  o.strides = v.strides;
  o.offset = v.offset;
  return o;
}

StatusOr<std::unique_ptr<DeviceProgram::Executable>> compileCall(const Device& d, const sched::Program& p,
                                                                 const sched::LibraryCall& c,
                                                                 const std::string& where) {
  const uint32_t bit = libraryOpBit(c.op);
  if (!(d.caps().libraryOps & bit))
    return unimplemented(where + ": " + c.op + " is not implemented by device " + d.describe() +
                         " (compile the program with optionsFor() its capabilities to expand it into loop kernels)");
  if (c.op == "prims.convolution" && !c.inputs.empty() && c.inputs[0]) {
    const ir::DType t = p.buffers[static_cast<size_t>(c.inputs[0]->buffer)].dtype;
    auto transposed = c.attrs.find("transposed");
    const bool isTransposed = transposed != c.attrs.end() && transposed->second.asBool().value_or(false);
    if (!d.caps().takesConvolution(t, isTransposed))
      return unimplemented(where + ": device " + d.describe() + " takes no " + (isTransposed ? "transposed " : "") +
                           c.op + " on dtype " + std::string(ir::dtypeName(t)) +
                           " (compile the program with optionsFor() its capabilities to expand it into loop kernels)");
  }
  if (c.op == "prims.matmul" && !c.inputs.empty() && c.inputs[0]) {
    const ir::DType t = p.buffers[static_cast<size_t>(c.inputs[0]->buffer)].dtype;
    if (!d.caps().takesMatmul(t))
      return unimplemented(where + ": device " + d.describe() + " takes no " + c.op + " on dtype " +
                           std::string(ir::dtypeName(t)) +
                           " (compile the program with optionsFor() its capabilities to expand it into loop kernels)");
  }
  const size_t query = c.op == "prims.sdpa_backward" ? 1 : 0;
  if ((c.op == "prims.sdpa" || c.op == "prims.sdpa_backward") && c.inputs.size() > query && c.inputs[query] &&
      d.caps().sdpaDtypes) {
    const ir::DType t = p.buffers[static_cast<size_t>(c.inputs[query]->buffer)].dtype;
    if (!((d.caps().sdpaDtypes >> static_cast<unsigned>(t)) & 1u))
      return unimplemented(where + ": device " + d.describe() + " takes no " + c.op + " on dtype " +
                           std::string(ir::dtypeName(t)) +
                           " (compile the program with optionsFor() its capabilities to expand it)");
  }
  const kernel::Kernel* epilogue = c.epilogue >= 0 ? &p.kernels[static_cast<size_t>(c.epilogue)] : nullptr;
  if (epilogue && !(d.caps().epilogueOps & bit))
    return unimplemented(where + ": device " + d.describe() + " takes no fused epilogue on " + c.op);
  std::optional<ir::DType> accDType;
  if (epilogue) {
    RETURN_IF_ERROR(checkKernelDTypes(d, *epilogue, where + ": the epilogue of " + c.op));
    for (const kernel::Arg& a : epilogue->args)
      if (a.accumulator) accDType = a.dtype;
  }
  std::vector<LibraryOperand> ins, outs;
  for (const auto& v : c.inputs) ins.push_back(v ? operandOf(p, *v, std::nullopt) : LibraryOperand{});
  for (const sched::View& v : c.outputs) outs.push_back(operandOf(p, v, v.buffer < 0 ? accDType : std::nullopt));
  for (const auto* list : {&ins, &outs})
    for (const LibraryOperand& o : *list)
      if (o.dtype && !d.caps().supports(*o.dtype))
        return unimplemented(where + ": " + c.op + " on dtype " + std::string(ir::dtypeName(*o.dtype)) +
                             ", which device " + d.describe() +
                             " does not support (it supports: " + d.caps().dtypeList() + ")");
  ASSIGN_OR_RETURN(std::unique_ptr<EncodedLibraryCall> call, encodeLibraryCall(c.op, c.attrs, ins, outs));
  std::unique_ptr<EncodedKernel> encEpilogue;
  if (epilogue) {
    ASSIGN_OR_RETURN(encEpilogue, encodeKernel(*epilogue));
  }
  plugsdk_compile_library_args_t a{};
  a.struct_size = sizeof(a);
  a.client = d.client();
  a.device = d.index();
  a.op = call->op;
  a.attributes = call->attributes.c_str();
  a.num_inputs = call->inputs.size();
  a.inputs = call->inputs.data();
  a.num_outputs = call->outputs.size();
  a.outputs = call->outputs.data();
  a.index_insns = call->insns.data();
  a.num_index_insns = call->insns.size();
  a.symbols = call->symbolPtrs.data();
  a.num_symbols = call->symbolPtrs.size();
  a.epilogue = encEpilogue ? &encEpilogue->get() : nullptr;
  RETURN_IF_ERROR(d.check(d.api().compile_library(&a), "compile_library of " + c.op));
  if (!a.out_executable)
    return internalError("plugin " + d.plugin().path() + ": compile_library of " + c.op +
                         " succeeded but returned a NULL executable");
  auto e = std::make_unique<DeviceProgram::Executable>();
  e->device = &d;
  e->handle = a.out_executable;
  e->what = c.op;
  e->symbols = call->symbols;
  // The epilogue's own symbols follow the call's (one launch binds both).
  if (encEpilogue)
    for (size_t i = 0; i < encEpilogue->get().num_symbols; ++i) e->symbols.emplace_back(encEpilogue->get().symbols[i]);
  return e;
}

}  // namespace

StatusOr<std::unique_ptr<DeviceProgram>> DeviceProgram::compile(const Device& device, sched::Program program) {
  auto held = device.lock();
  std::unique_ptr<DeviceProgram> dp(new DeviceProgram(device, std::move(program)));
  const sched::Program& p = dp->program_;
  // Capabilities first: nothing is compiled for a program the device cannot run.
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const sched::Step& s = p.steps[i];
    if (s.kind == sched::Step::Kind::kLaunch)
      RETURN_IF_ERROR(checkKernelDTypes(device, p.kernels[static_cast<size_t>(s.launch.kernel)], stepName(i, s)));
  }
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const sched::Step& s = p.steps[i];
    auto e = s.kind == sched::Step::Kind::kLaunch
                 ? compileKernel(device, p.kernels[static_cast<size_t>(s.launch.kernel)])
                 : compileCall(device, p, s.call, stepName(i, s));
    if (!e.isOk()) return e.status().withContext(stepName(i, s) + " of program @" + p.name);
    dp->steps_.push_back(std::move(*e));
  }
  for (const kernel::Kernel& k : p.kernels) dp->mayFail_ = dp->mayFail_ || k.mayFail();
  return dp;
}

std::string DeviceProgram::log() const {
  auto held = device_.lock();
  std::string out;
  for (const auto& e : steps_) {
    plugsdk_executable_log_args_t a{};
    a.struct_size = sizeof(a);
    a.client = device_.client();
    a.executable = e->handle;
    if (!device_.check(device_.api().executable_log(&a), "executable_log").isOk() || !a.out_log || !*a.out_log)
      continue;
    const std::string text = a.out_log;  // non-empty here
    out += e->what + ":\n" + text + (text.back() == '\n' ? "" : "\n");
  }
  return out;
}

namespace {

StatusOr<int64_t> evalOr(const SymExpr& e, const Symbols& s, const std::string& what) {
  auto v = e.evaluate(s);
  if (!v) return invalidArgument("cannot evaluate " + what + " " + e.toString() + " (unbound size symbol)");
  return *v;
}

/// Where each program buffer lives on the device: its own allocation or a place in the arena.
struct Placement {
  std::vector<DeviceBuffer> own;  ///< per program buffer (inputs and outputs)
  DeviceBuffer arena;             ///< owned here unless kept by the program
  plugsdk_buffer_t* arenaHandle = nullptr;
  std::vector<plugsdk_buffer_t*> handle;
  std::vector<uint64_t> offset;
};

/// `given` holds the buffers the caller's tensors provide (imported), by program buffer;
/// the other inputs and outputs get their own allocation. With `keptArena`, the arena is
/// that buffer, reallocated only when the run needs more (so repeated runs do not allocate
/// and fault in their temporaries again); the caller holds the device lock across the run.
StatusOr<Placement> place(const Device& d, const sched::Program& p, const Symbols& s,
                          std::vector<DeviceBuffer> given = {}, DeviceBuffer* keptArena = nullptr) {
  Placement pl;
  pl.own = std::move(given);
  pl.own.resize(p.buffers.size());
  pl.handle.assign(p.buffers.size(), nullptr);
  pl.offset.assign(p.buffers.size(), 0);
  ASSIGN_OR_RETURN(int64_t arenaBytes, evalOr(p.arenaBytes, s, "the arena size"));
  if (keptArena && keptArena->handle() && keptArena->bytes() >= static_cast<uint64_t>(arenaBytes)) {
    pl.arenaHandle = keptArena->handle();
  } else {
    ASSIGN_OR_RETURN(pl.arena, d.allocate(static_cast<uint64_t>(arenaBytes)));
    pl.arenaHandle = pl.arena.handle();
    if (keptArena) {
      *keptArena = std::move(pl.arena);
      pl.arena = DeviceBuffer();
    }
  }
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const sched::Buffer& b = p.buffers[i];
    if (b.role == sched::BufferRole::kTemp) {
      ASSIGN_OR_RETURN(int64_t at, evalOr(b.offset, s, "the arena offset of %" + b.name));
      pl.handle[i] = pl.arenaHandle;
      pl.offset[i] = static_cast<uint64_t>(at);
      continue;
    }
    if (!pl.own[i].handle()) {
      ASSIGN_OR_RETURN(int64_t n, evalOr(b.numel, s, "the size of %" + b.name));
      ASSIGN_OR_RETURN(pl.own[i], d.allocate(static_cast<uint64_t>(n * sched::dtypeBytes(b.dtype))));
    }
    pl.handle[i] = pl.own[i].handle();
  }
  return pl;
}

/// An input laid out in its buffer by the program's strides for it.
StatusOr<std::string> inputBytes(const sched::Program& p, const sched::ProgramInput& in, const exec::HostTensor& t,
                                 const Symbols& s) {
  const sched::Buffer& b = p.buffers[static_cast<size_t>(in.buffer)];
  ASSIGN_OR_RETURN(int64_t n, evalOr(b.numel, s, "the size of %" + b.name));
  std::vector<int64_t> strides;
  for (const SymExpr& st : in.type.effectiveStrides()) {
    ASSIGN_OR_RETURN(int64_t v, evalOr(st, s, "a stride of input %" + in.name));
    strides.push_back(v);
  }
  exec::HostTensor storage(b.dtype, {n});
  exec::forEachIndex(t.shape(), [&](const std::vector<int64_t>& idx, int64_t linear) {
    const int64_t at = exec::offsetOf(idx, strides);
    if (t.isFloating())
      storage.setDouble(at, t.getDouble(linear));
    else
      storage.setInt(at, t.getInt(linear));
  });
  std::string bytes(static_cast<size_t>(n * sched::dtypeBytes(b.dtype)), '\0');
  exec::encodeElements(storage, bytes.data());
  return bytes;
}

/// Launches every step of the program in order over `pl` on `stream`, options.batch times
/// per repetition, options.repeat repetitions, each synchronized unless `wait` is false.
Status launchSteps(const Device& device_, const sched::Program& p,
                   const std::vector<std::unique_ptr<DeviceProgram::Executable>>& steps_, const Placement& pl,
                   const Symbols& s, const RunOptions& options, plugsdk_stream_t* stream, bool wait = true,
                   TransferStats* stats = nullptr) {
  for (int rep = 0; rep < std::max(1, options.repeat); ++rep) {
    const auto started = std::chrono::steady_clock::now();
    const int batch = std::max(1, options.batch);
    for (size_t n = 0; n < static_cast<size_t>(batch) * p.steps.size(); ++n) {
      const size_t i = n % p.steps.size();
      const sched::Step& step = p.steps[i];
      const DeviceProgram::Executable& e = *steps_[i];
      std::vector<plugsdk_buffer_t*> bufs;
      std::vector<uint64_t> offs;
      auto add = [&](int b) {
        bufs.push_back(b >= 0 ? pl.handle[static_cast<size_t>(b)] : nullptr);
        offs.push_back(b >= 0 ? pl.offset[static_cast<size_t>(b)] : 0);
      };
      if (step.kind == sched::Step::Kind::kLaunch) {
        for (int b : step.launch.args) add(b);
      } else {
        for (const auto& v : step.call.inputs) add(v ? v->buffer : -1);
        for (const sched::View& v : step.call.outputs) add(v.buffer);
        for (int b : step.call.epilogueArgs)
          if (b >= 0) add(b);
      }
      std::vector<int64_t> values;
      for (const std::string& name : e.symbols) {
        auto it = s.find(name);
        if (it == s.end())
          return internalError(stepName(i, step) + ": " + e.what + " needs size symbol " + name +
                               ", which no input binds");
        values.push_back(it->second);
      }
      plugsdk_launch_args_t a{};
      a.struct_size = sizeof(a);
      a.client = device_.client();
      a.stream = stream;
      a.executable = e.handle;
      a.num_buffers = bufs.size();
      a.buffers = bufs.data();
      a.offsets = offs.data();
      a.num_symbols = values.size();
      a.symbol_values = values.data();
      const auto called = std::chrono::steady_clock::now();
      plugsdk_error_t* err = device_.api().launch(&a);
      if (stats) {
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - called).count();
        const bool kernel = step.kind == sched::Step::Kind::kLaunch;
        (kernel ? stats->kernelSeconds : stats->librarySeconds) += t;
        ++(kernel ? stats->kernels : stats->libraryCalls);
      }
      if (err) {
        Status st = device_.check(err, "launch of " + e.what);
        return st.withContext(stepName(i, step) + " of program @" + p.name);
      }
    }
    if (wait) {
      const auto waiting = std::chrono::steady_clock::now();
      RETURN_IF_ERROR(device_.synchronize(stream));
      if (stats)
        stats->waitSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - waiting).count();
    }
    if (options.launchSeconds)
      options.launchSeconds->push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() / batch);
  }
  return Status::ok();
}

}  // namespace

StatusOr<std::vector<exec::HostTensor>> DeviceProgram::run(const std::vector<exec::HostTensor>& inputs,
                                                           const RunOptions& options) const {
  const sched::Program& p = program_;
  ASSIGN_OR_RETURN(Symbols s, sched::bindInputs(p, inputs));
  auto held = device_.lock();  // one run at a time per client (the ABI's threading rule)
  ASSIGN_OR_RETURN(Placement pl, place(device_, p, s));
  if (options.poison) {
    RETURN_IF_ERROR(device_.fill(pl.arena, 0, pl.arena.bytes(), 0xff));
    for (const DeviceBuffer& b : pl.own)
      if (b.handle()) RETURN_IF_ERROR(device_.fill(b, 0, b.bytes(), 0xff));  // inputs are uploaded over it
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const sched::ProgramInput& in = p.inputs[i];
    ASSIGN_OR_RETURN(std::string bytes, inputBytes(p, in, inputs[i], s));
    const auto b = static_cast<size_t>(in.buffer);
    RETURN_IF_ERROR(device_.upload(pl.own[b], pl.offset[b], bytes.data(), bytes.size()));
  }
  RETURN_IF_ERROR(launchSteps(device_, p, steps_, pl, s, options, device_.stream()));
  std::vector<exec::HostTensor> outs;
  for (const sched::ProgramOutput& o : p.outputs) {
    std::vector<int64_t> shape;
    int64_t n = 1;
    for (const SymExpr& dim : o.shape) {
      ASSIGN_OR_RETURN(int64_t v, evalOr(dim, s, "a dim of output %" + o.name));
      shape.push_back(v);
      n *= v;
    }
    const sched::Buffer& b = p.buffers[static_cast<size_t>(o.buffer)];
    std::string bytes(static_cast<size_t>(n * sched::dtypeBytes(b.dtype)), '\0');
    const auto bi = static_cast<size_t>(o.buffer);
    if (b.role == sched::BufferRole::kTemp)
      return internalError("output %" + o.name + " lives in the arena (the schedule gives outputs their own buffers)");
    RETURN_IF_ERROR(device_.download(pl.own[bi], pl.offset[bi], bytes.data(), bytes.size()));
    outs.push_back(exec::decodeElements(b.dtype, shape, bytes.data()));
  }
  return outs;
}

namespace {

/// Row-major strides of `shape` (elements).
std::vector<int64_t> rowMajor(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) st[d - 1] = st[d] * shape[d];
  return st;
}

/// Whether strides `a` and `b` address the same elements of `shape` (dims of size 1 are free).
bool sameLayout(const std::vector<int64_t>& shape, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] > 1 && a[d] != b[d]) return false;
  return true;
}

/// Copies the elements of `shape` between two strided layouts of one dtype (host memory).
void copyStrided(const std::vector<int64_t>& shape, size_t elemBytes, const uint8_t* src,
                 const std::vector<int64_t>& srcStrides, uint8_t* dst, const std::vector<int64_t>& dstStrides) {
  exec::forEachIndex(shape, [&](const std::vector<int64_t>& idx, int64_t) {
    std::memcpy(dst + exec::offsetOf(idx, dstStrides) * static_cast<int64_t>(elemBytes),
                src + exec::offsetOf(idx, srcStrides) * static_cast<int64_t>(elemBytes), elemBytes);
  });
}

std::vector<int64_t> stridesOf(const TensorArg& t) { return t.strides.empty() ? rowMajor(t.shape) : t.strides; }

/// What a run's launches depend on besides the program (run_recordings.h): the arena's
/// generation, the symbols' values, and every tensor's address, memory kind and strides (the
/// shapes follow from the symbols, which bindInputs checked them against).
RunKey runKey(const std::vector<TensorArg>& inputs, const std::vector<TensorArg>& outputs, const Symbols& s,
              uint64_t arenaGeneration) {
  RunKey k;
  k.reserve(1 + s.size() + 8 * (inputs.size() + outputs.size()));
  k.push_back(arenaGeneration);
  for (const auto& [name, v] : s) k.push_back(static_cast<uint64_t>(v));
  for (const std::vector<TensorArg>* ts : {&inputs, &outputs})
    for (const TensorArg& t : *ts) {
      k.push_back(reinterpret_cast<uintptr_t>(t.data));
      k.push_back(t.memoryKind);
      k.push_back(t.strides.size());
      for (int64_t v : t.strides) k.push_back(static_cast<uint64_t>(v));
    }
  return k;
}

/// The output shapes of `p` with its size symbols bound to `s`.
StatusOr<std::vector<std::vector<int64_t>>> outputShapesFor(const sched::Program& p, const Symbols& s) {
  std::vector<std::vector<int64_t>> shapes;
  for (const sched::ProgramOutput& o : p.outputs) {
    std::vector<int64_t> shape;
    for (const SymExpr& dim : o.shape) {
      ASSIGN_OR_RETURN(int64_t v, evalOr(dim, s, "a dim of output %" + o.name));
      shape.push_back(v);
    }
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

}  // namespace

StatusOr<std::vector<std::vector<int64_t>>> DeviceProgram::outputShapes(
    const std::vector<sched::InputShape>& inputs) const {
  ASSIGN_OR_RETURN(Symbols s, sched::bindInputs(program_, inputs));
  return outputShapesFor(program_, s);
}

Status DeviceProgram::runInto(const std::vector<TensorArg>& inputs, const std::vector<TensorArg>& outputs,
                              TransferStats* stats, void* nativeStream) const {
  const auto started = std::chrono::steady_clock::now();
  const sched::Program& p = program_;
  std::vector<sched::InputShape> shapes;
  for (const TensorArg& t : inputs) shapes.push_back({t.dtype, t.shape});
  ASSIGN_OR_RETURN(Symbols s, sched::bindInputs(p, shapes));
  ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> outShapes, outputShapesFor(p, s));
  if (outputs.size() != p.outputs.size())
    return invalidArgument("program @" + p.name + " has " + std::to_string(p.outputs.size()) + " outputs, got " +
                           std::to_string(outputs.size()) + " tensors for them");
  for (const TensorArg& t : inputs)
    if (t.strides.size() != 0 && t.strides.size() != t.shape.size())
      return invalidArgument("an input tensor has " + std::to_string(t.strides.size()) + " strides for rank " +
                             std::to_string(t.shape.size()));
  std::vector<int> outputUses(p.buffers.size(), 0);
  for (const sched::ProgramOutput& o : p.outputs) ++outputUses[static_cast<size_t>(o.buffer)];
  for (size_t i = 0; i < outputs.size(); ++i) {
    const sched::ProgramOutput& o = p.outputs[i];
    const ir::DType want = p.buffers[static_cast<size_t>(o.buffer)].dtype;
    if (outputs[i].dtype != want || outputs[i].shape != outShapes[i])
      return invalidArgument("output %" + o.name + ": expected " + std::string(ir::dtypeName(want)) +
                             exec::shapeString(outShapes[i]) + ", got a tensor of " +
                             std::string(ir::dtypeName(outputs[i].dtype)) + exec::shapeString(outputs[i].shape));
    if (!outputs[i].strides.empty() && outputs[i].strides.size() != outputs[i].shape.size())
      return invalidArgument("output %" + o.name + ": " + std::to_string(outputs[i].strides.size()) +
                             " strides for rank " + std::to_string(outputs[i].shape.size()));
  }
  TransferStats local;
  TransferStats& st = stats ? *stats : local;
  auto held = device_.lock();
  // On the caller's stream: queued behind the caller's work, and not waited for unless a
  // kernel can report a run-time error that the plugin does not raise on that stream itself
  // (ABI 1.3 async_stream_failures), or a tensor is copied.
  plugsdk_stream_t* stream = device_.stream();
  if (nativeStream) {
    ASSIGN_OR_RETURN(stream, device_.importStream(nativeStream));
    ASSIGN_OR_RETURN(int64_t arenaBytes, evalOr(p.arenaBytes, s, "the arena size"));
    // A larger arena replaces the kept one, which earlier queued runs may still be using.
    if (arena_.handle() && arena_.bytes() < static_cast<uint64_t>(arenaBytes))
      RETURN_IF_ERROR(device_.synchronize(stream));
  }
  // A run with the key of a kept recording replays it: no import, no launch call.
  const bool recordable = nativeStream && device_.records() && recordings_.off().empty();
  RunKey key;
  if (recordable) {
    key = runKey(inputs, outputs, s, arenaGeneration_);
    if (const RunRecordings::Entry* r = recordings_.find(key)) {
      Status replayed = device_.launchRecording(r->recording, stream);
      if (replayed.isOk()) {
        st.imported = r->imported;
        st.copied = r->copied;
        st.waited = false;
        st.replayed = true;
        ++recordings_.replayed;
        st.prepareSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return Status::ok();
      }
      recordings_.erase(key);  // it can no longer run: the run below queues the work again
      if (replayed.code() != StatusCode::kFailedPrecondition) return replayed;
    }
  }
  // Import what can be used in place; the rest is copied around the launches.
  std::vector<DeviceBuffer> given(p.buffers.size());
  std::vector<std::vector<int64_t>> inStrides(inputs.size());
  std::vector<bool> inImported(inputs.size(), false), outImported(outputs.size(), false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const sched::ProgramInput& in = p.inputs[i];
    for (const SymExpr& e : in.type.effectiveStrides()) {
      ASSIGN_OR_RETURN(int64_t v, evalOr(e, s, "a stride of input %" + in.name));
      inStrides[i].push_back(v);
    }
    const auto b = static_cast<size_t>(in.buffer);
    if (given[b].handle() || !sameLayout(inputs[i].shape, stridesOf(inputs[i]), inStrides[i])) continue;
    ASSIGN_OR_RETURN(int64_t n, evalOr(p.buffers[b].numel, s, "the size of %" + p.buffers[b].name));
    StatusOr<DeviceBuffer> imp = device_.import(inputs[i].memoryKind, inputs[i].data,
                                                static_cast<uint64_t>(n * sched::dtypeBytes(in.type.dtype)));
    if (!imp.isOk()) {
      if (imp.status().code() != StatusCode::kUnimplemented) return imp.status();
      continue;
    }
    given[b] = std::move(*imp);
    inImported[i] = true;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto b = static_cast<size_t>(p.outputs[i].buffer);
    // A buffer that holds several outputs (equal values merged: a residual block's two bias
    // gradients) is the first one's memory; the others are copied from it on the device.
    if (p.buffers[b].role != sched::BufferRole::kOutput || given[b].handle() ||
        !sameLayout(outputs[i].shape, stridesOf(outputs[i]), rowMajor(outputs[i].shape)))
      continue;
    int64_t n = 1;
    for (int64_t d : outShapes[i]) n *= d;
    StatusOr<DeviceBuffer> imp = device_.import(outputs[i].memoryKind, outputs[i].data,
                                                static_cast<uint64_t>(n * sched::dtypeBytes(outputs[i].dtype)));
    if (!imp.isOk()) {
      if (imp.status().code() != StatusCode::kUnimplemented) return imp.status();
      continue;
    }
    given[b] = std::move(*imp);
    outImported[i] = true;
  }
  const plugsdk_buffer_t* keptArena = arena_.handle();
  std::vector<bool> bufferGiven(given.size());
  for (size_t b = 0; b < given.size(); ++b) bufferGiven[b] = given[b].handle() != nullptr;
  ASSIGN_OR_RETURN(Placement pl, place(device_, p, s, std::move(given), &arena_));
  if (keptArena && arena_.handle() != keptArena) ++arenaGeneration_;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inImported[i]) {
      ++st.imported;
      continue;
    }
    if (inputs[i].memoryKind != PLUGSDK_MEMORY_HOST)
      return unimplemented("input %" + p.inputs[i].name + " is in device memory the plugin cannot import, and " +
                           "only host memory is copied");
    const auto b = static_cast<size_t>(p.inputs[i].buffer);
    ASSIGN_OR_RETURN(int64_t n, evalOr(p.buffers[b].numel, s, "the size of %" + p.buffers[b].name));
    const size_t eb = static_cast<size_t>(sched::dtypeBytes(inputs[i].dtype));
    std::string bytes(static_cast<size_t>(n) * eb, '\0');
    copyStrided(inputs[i].shape, eb, static_cast<const uint8_t*>(inputs[i].data), stridesOf(inputs[i]),
                reinterpret_cast<uint8_t*>(bytes.data()), inStrides[i]);
    RETURN_IF_ERROR(device_.upload(pl.own[b], pl.offset[b], bytes.data(), bytes.size()));
    ++st.copied;
  }
  // A copied tensor's own device buffer is freed when the run returns: wait for it then.
  bool copies = false;
  for (bool imported : inImported) copies = copies || !imported;
  for (size_t i = 0; i < outputs.size(); ++i)
    copies = copies || (!outImported[i] && !bufferGiven[static_cast<size_t>(p.outputs[i].buffer)]);
  const bool wait = runWaits(nativeStream != nullptr, mayFail_, device_.caps().asyncStreamFailures, copies);
  st.waited = wait;
  st.prepareSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // The launches, then the outputs that share another output's memory, copied on the device.
  auto queue = [&]() -> Status {
    RETURN_IF_ERROR(launchSteps(device_, p, steps_, pl, s, RunOptions{}, stream, wait, &st));
    for (size_t i = 0; i < outputs.size(); ++i) {
      const auto b = static_cast<size_t>(p.outputs[i].buffer);
      if (outImported[i] || outputs[i].memoryKind == PLUGSDK_MEMORY_HOST) continue;
      int64_t n = 1;
      for (int64_t d : outShapes[i]) n *= d;
      const uint64_t bytes = static_cast<uint64_t>(n * sched::dtypeBytes(outputs[i].dtype));
      StatusOr<DeviceBuffer> dst =
          outputUses[b] > 1 && sameLayout(outputs[i].shape, stridesOf(outputs[i]), rowMajor(outputs[i].shape))
              ? device_.import(outputs[i].memoryKind, outputs[i].data, bytes)
              : StatusOr<DeviceBuffer>(unimplemented(""));
      if (!dst.isOk())
        return unimplemented("output %" + p.outputs[i].name + " is in device memory the plugin cannot import, and " +
                             "only host memory is copied");
      RETURN_IF_ERROR(device_.copyOnDevice(pl.own[b], pl.offset[b], *dst, 0, bytes, stream));
    }
    return Status::ok();
  };
  // A key seen again within the last few runs is recorded, then replayed (run_recordings.h); the
  // key must still name this run's arena (place() may have replaced it).
  bool recording = recordable && recordings_.repeated(key) && !wait && key[0] == arenaGeneration_;
  if (recording) {
    const Status begun = device_.beginRecording(stream);
    if (!begun.isOk() && begun.code() != StatusCode::kUnimplemented) return begun;
    recording = begun.isOk();
  }
  const Status queued = queue();
  DeviceRecording made;
  if (recording) {
    // Nothing recorded has run. Any failure while recording (a call the plugin cannot record
    // fails too) or of the fresh recording's launch stops recording this program, and the
    // work is queued again unrecorded: a real error then comes back from that.
    StatusOr<DeviceRecording> ended = device_.endRecording(stream);
    Status why = !queued.isOk() ? queued : ended.status();
    if (why.isOk()) {
      why = device_.launchRecording(*ended, stream);
      if (why.isOk()) {
        made = std::move(*ended);
        st.recorded = true;
        ++recordings_.recorded;
      }
    }
    if (!why.isOk()) {
      recordings_.turnOff(why.message());
      st.kernels = st.libraryCalls = 0;
      st.kernelSeconds = st.librarySeconds = 0;
      RETURN_IF_ERROR(queue());
    }
  } else {
    RETURN_IF_ERROR(queued);
  }
  const auto copyingOut = std::chrono::steady_clock::now();
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outImported[i]) {
      ++st.imported;
      continue;
    }
    const auto b = static_cast<size_t>(p.outputs[i].buffer);
    if (outputs[i].memoryKind != PLUGSDK_MEMORY_HOST) {
      ++st.copied;  // copied on the device by queue()
      continue;
    }
    if (p.buffers[b].role == sched::BufferRole::kTemp)
      return internalError("output %" + p.outputs[i].name + " lives in the arena");
    int64_t n = 1;
    for (int64_t d : outShapes[i]) n *= d;
    const size_t eb = static_cast<size_t>(sched::dtypeBytes(outputs[i].dtype));
    std::string bytes(static_cast<size_t>(n) * eb, '\0');
    RETURN_IF_ERROR(device_.download(pl.own[b], pl.offset[b], bytes.data(), bytes.size()));
    copyStrided(outputs[i].shape, eb, reinterpret_cast<const uint8_t*>(bytes.data()), rowMajor(outputs[i].shape),
                static_cast<uint8_t*>(outputs[i].data), stridesOf(outputs[i]));
    ++st.copied;
  }
  st.waitSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - copyingOut).count();
  if (made.handle()) recordings_.keep(std::move(key), std::move(made), st.imported, st.copied);
  return Status::ok();
}

std::string DeviceProgram::recordingOff() const {
  auto held = device_.lock();
  return recordings_.off();
}

RecordingCounts DeviceProgram::recordingCounts() const {
  auto held = device_.lock();
  return {recordings_.recorded, recordings_.replayed, recordings_.size()};
}

uint64_t DeviceProgram::memoryGeneration() const {
  auto held = device_.lock();
  return arenaGeneration_;
}

}  // namespace plugsdk::plugin
