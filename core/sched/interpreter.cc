// ProgramInterpreter: symbol binding, buffer storage, steps in order, and the memory-plan
// checks on the arena's byte ranges.
#include "core/sched/interpreter.h"

#include <algorithm>
#include <cmath>

#include "core/exec/kernel_utils.h"
#include "core/exec/reference_executor.h"
#include "core/kernel/interpreter.h"
#include "core/sched/memory_plan.h"

namespace plugsdk::sched {

struct ProgramInterpreter::Impl {
  std::shared_ptr<const ir::Context> ctx;
  exec::RefKernelTable kernels = exec::makeReferenceKernels();
};

ProgramInterpreter::ProgramInterpreter(std::shared_ptr<const ir::Context> ctx) : impl_(std::make_unique<Impl>()) {
  impl_->ctx = std::move(ctx);
}
ProgramInterpreter::~ProgramInterpreter() = default;

namespace {

using Symbols = std::map<std::string, int64_t>;

StatusOr<int64_t> evalSize(const SymExpr& e, const Symbols& s, const std::string& what) {
  auto v = e.evaluate(s);
  if (!v) return invalidArgument("cannot evaluate " + what + " " + e.toString() + " (unbound size symbol)");
  return *v;
}

StatusOr<std::vector<int64_t>> evalShape(const Shape& shape, const Symbols& s, const std::string& what) {
  std::vector<int64_t> out;
  for (const SymExpr& d : shape) {
    ASSIGN_OR_RETURN(int64_t v, evalSize(d, s, what));
    out.push_back(v);
  }
  return out;
}

void copyElement(const exec::HostTensor& from, int64_t i, exec::HostTensor& to, int64_t j) {
  if (from.isFloating())
    to.doubles()[static_cast<size_t>(j)] = from.doubles()[static_cast<size_t>(i)];
  else
    to.ints()[static_cast<size_t>(j)] = from.ints()[static_cast<size_t>(i)];
}

/// A view's elements gathered into a contiguous tensor.
StatusOr<exec::HostTensor> gather(const exec::HostTensor& storage, const View& v, const Symbols& s) {
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, evalShape(v.shape, s, "view shape"));
  ASSIGN_OR_RETURN(std::vector<int64_t> strides, evalShape(v.strides, s, "view stride"));
  ASSIGN_OR_RETURN(int64_t offset, evalSize(v.offset, s, "view offset"));
  exec::HostTensor out(storage.dtype(), shape);
  Status st = Status::ok();
  exec::forEachIndex(shape, [&](const std::vector<int64_t>& idx, int64_t linear) {
    const int64_t at = offset + exec::offsetOf(idx, strides);
    if (at < 0 || at >= storage.numel()) {
      st = invalidArgument("a library operand view reads element " + std::to_string(at) + " of a buffer of " +
                           std::to_string(storage.numel()));
      return;
    }
    copyElement(storage, at, out, linear);
  });
  if (!st.isOk()) return st;
  return out;
}

class Run {
 public:
  Run(const ProgramInterpreter::Impl& impl, const Program& p, Symbols s) : impl_(impl), p_(p), s_(std::move(s)) {}

  Status allocate(const std::vector<exec::HostTensor>& inputs) {
    for (const Buffer& b : p_.buffers) {
      ASSIGN_OR_RETURN(int64_t n, evalSize(b.numel, s_, "buffer %" + b.name + " size"));
      storage_.emplace_back(b.dtype, std::vector<int64_t>{n});
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      const ProgramInput& in = p_.inputs[i];
      exec::HostTensor& buf = storage_[static_cast<size_t>(in.buffer)];
      ASSIGN_OR_RETURN(std::vector<int64_t> strides, evalShape(in.type.effectiveStrides(), s_, "input stride"));
      exec::forEachIndex(inputs[i].shape(), [&](const std::vector<int64_t>& idx, int64_t linear) {
        copyElement(inputs[i], linear, buf, exec::offsetOf(idx, strides));
      });
    }
    ASSIGN_OR_RETURN(int64_t arena, evalSize(p_.arenaBytes, s_, "arena size"));
    for (const Buffer& b : p_.buffers) {
      int64_t lo = 0, hi = 0;
      if (b.role == BufferRole::kTemp) {
        ASSIGN_OR_RETURN(lo, evalSize(b.offset, s_, "buffer %" + b.name + " offset"));
        ASSIGN_OR_RETURN(int64_t n, evalSize(b.numel, s_, "buffer %" + b.name + " size"));
        hi = lo + n * dtypeBytes(b.dtype);
        if (lo < 0 || hi > arena)
          return internalError("memory plan: %" + b.name + " (bytes " + std::to_string(lo) + ".." + std::to_string(hi) +
                               ") lies outside the arena of " + std::to_string(arena) + " bytes");
      }
      begin_.push_back(lo);
      end_.push_back(hi);
    }
    // Slots and offsets must agree (a backend may use either): one offset per slot, and
    // different slots on disjoint bytes.
    for (size_t a = 0; a < p_.buffers.size(); ++a)
      for (size_t b = a + 1; b < p_.buffers.size(); ++b) {
        const Buffer &x = p_.buffers[a], &y = p_.buffers[b];
        if (x.role != BufferRole::kTemp || y.role != BufferRole::kTemp) continue;
        if (x.slot == y.slot ? begin_[a] != begin_[b] : overlap(static_cast<int>(a), static_cast<int>(b)))
          return internalError(
              "memory plan: " + where(static_cast<int>(a)) + " and " + where(static_cast<int>(b)) +
              (x.slot == y.slot ? " share a slot at different offsets" : " overlap in different slots"));
      }
    // Temporaries on exactly the same bytes share storage, so an in-place update is literal.
    for (size_t b = 0; b < p_.buffers.size(); ++b) {
      memoryOf_.push_back(static_cast<int>(b));
      if (p_.buffers[b].role != BufferRole::kTemp || begin_[b] == end_[b]) continue;
      for (size_t o = 0; o < b; ++o)
        if (p_.buffers[o].role == BufferRole::kTemp && begin_[o] == begin_[b] && end_[o] == end_[b] &&
            p_.buffers[o].dtype == p_.buffers[b].dtype) {
          memoryOf_[b] = memoryOf_[o];
          break;
        }
    }
    everWritten_.assign(p_.buffers.size(), false);
    clobberedBy_.assign(p_.buffers.size(), -1);
    return Status::ok();
  }

  /// One buffer a step touches: a kernel argument (kernel, arg) or a library operand (kernel -1).
  struct Use {
    int buffer = -1;
    bool read = false;
    bool written = false;
    int kernel = -1;
    int arg = -1;
  };

  std::vector<Use> usesOf(const Step& s) const {
    std::vector<Use> uses;
    auto kernelUses = [&](int kernel, const std::vector<int>& bufs) {
      const kernel::Kernel& k = p_.kernels[static_cast<size_t>(kernel)];
      for (size_t i = 0; i < bufs.size(); ++i)
        if (bufs[i] >= 0) uses.push_back(Use{bufs[i], k.args[i].read, k.args[i].written, kernel, static_cast<int>(i)});
    };
    if (s.kind == Step::Kind::kLaunch) {
      kernelUses(s.launch.kernel, s.launch.args);
      return uses;
    }
    for (const auto& v : s.call.inputs)
      if (v) uses.push_back(Use{v->buffer, true, false, -1, -1});
    for (const View& v : s.call.outputs)
      if (v.buffer >= 0) uses.push_back(Use{v.buffer, false, true, -1, -1});
    if (s.call.epilogue >= 0) kernelUses(s.call.epilogue, s.call.epilogueArgs);
    return uses;
  }

  bool isTemp(int b) const { return p_.buffers[static_cast<size_t>(b)].role == BufferRole::kTemp; }
  /// Whether two temporaries' byte ranges in the arena intersect (empty ranges never do).
  bool overlap(int a, int b) const {
    const size_t x = static_cast<size_t>(a), y = static_cast<size_t>(b);
    return begin_[x] < end_[x] && begin_[y] < end_[y] && begin_[x] < end_[y] && begin_[y] < end_[x];
  }
  std::string where(int b) const {
    const Buffer& buf = p_.buffers[static_cast<size_t>(b)];
    return "%" + buf.name + " (slot " + std::to_string(buf.slot) + ", bytes " +
           std::to_string(begin_[static_cast<size_t>(b)]) + ".." + std::to_string(end_[static_cast<size_t>(b)]) + ")";
  }

  /// The memory plan, checked on the arena's real byte ranges (not slot numbers): everything
  /// a step reads still holds what was last written to it, no two results of a step overlap,
  /// and a result overlaps an operand of the same step only where the kernel updates it in
  /// place (inPlaceLegal). A device runs the plan literally, so each violation is a wrong
  /// result there, though here only buffers on exactly the same bytes share storage.
  Status checkStep(const Step& s) const {
    const std::vector<Use> uses = usesOf(s);
    for (const Use& u : uses)  // an argument the kernel both writes and reads may be its own, new result
      if (u.read && isTemp(u.buffer) && (!u.written || everWritten_[static_cast<size_t>(u.buffer)]))
        RETURN_IF_ERROR(checkOwner(u.buffer));
    for (const Use& w : uses) {
      if (!w.written || !isTemp(w.buffer)) continue;
      for (const Use& o : uses) {
        if (o.buffer == w.buffer || !isTemp(o.buffer) || !overlap(w.buffer, o.buffer)) continue;
        if (o.written)
          return internalError("memory plan: %" + p_.buffers[static_cast<size_t>(w.buffer)].name + " and " +
                               where(o.buffer) + " are both written by the same step and overlap in the arena");
        const bool inPlace = w.kernel >= 0 && w.kernel == o.kernel &&
                             inPlaceLegal(p_.kernels[static_cast<size_t>(w.kernel)], o.arg, w.arg);
        if (!inPlace)
          return internalError("memory plan: " + where(w.buffer) + " is written over " + where(o.buffer) +
                               ", which the same step reads, and the write is not an in-place update");
      }
    }
    return Status::ok();
  }

  /// After a step: what it wrote is current; every other temporary overlapping it is gone.
  void wrote(const Step& s) {
    for (const Use& w : usesOf(s)) {
      if (!w.written || !isTemp(w.buffer)) continue;
      clobberedBy_[static_cast<size_t>(w.buffer)] = -1;
      everWritten_[static_cast<size_t>(w.buffer)] = true;
      for (size_t o = 0; o < p_.buffers.size(); ++o)
        if (static_cast<int>(o) != w.buffer && isTemp(static_cast<int>(o)) && everWritten_[o] && clobberedBy_[o] < 0 &&
            overlap(w.buffer, static_cast<int>(o)))
          clobberedBy_[o] = w.buffer;
    }
  }

  Status steps() {
    for (size_t si = 0; si < p_.steps.size(); ++si) {
      const Step& s = p_.steps[si];
      if (Status a = checkStep(s); !a.isOk())
        return a.withContext("step " + std::to_string(si) + " (" + s.origin + ")");
      Status st = s.kind == Step::Kind::kLaunch ? launch(s.launch.kernel, s.launch.args, nullptr) : call(s.call);
      if (!st.isOk()) return st.withContext("step " + std::to_string(si) + " (" + s.origin + ")");
      wrote(s);
    }
    return Status::ok();
  }

  StatusOr<std::vector<exec::HostTensor>> outputs() {
    std::vector<exec::HostTensor> out;
    for (const ProgramOutput& o : p_.outputs) {
      RETURN_IF_ERROR(checkOwner(o.buffer));
      ASSIGN_OR_RETURN(std::vector<int64_t> shape, evalShape(o.shape, s_, "output shape"));
      const exec::HostTensor& buf = mem(o.buffer);
      exec::HostTensor t(buf.dtype(), shape);
      for (int64_t i = 0; i < t.numel(); ++i) copyElement(buf, i, t, i);
      out.push_back(std::move(t));
    }
    return out;
  }

 private:
  /// A temporary is read only while its bytes still hold what was last written to it.
  Status checkOwner(int b) const {
    if (!isTemp(b)) return Status::ok();
    const Buffer& buf = p_.buffers[static_cast<size_t>(b)];
    if (!everWritten_[static_cast<size_t>(b)])
      return internalError("memory plan: %" + buf.name + " is read before anything writes it");
    const int by = clobberedBy_[static_cast<size_t>(b)];
    if (by >= 0)
      return internalError("memory plan: " + where(b) + " is read after " + where(by) + " was written over it");
    return Status::ok();
  }

  exec::HostTensor& mem(int b) { return storage_[static_cast<size_t>(memoryOf_[static_cast<size_t>(b)])]; }

  /// Runs a kernel on the planned memory: an in-place update really overwrites its operand.
  /// Such a launch first runs on private copies of everything it writes, and the two runs must
  /// agree -- a check of the update by what it computes, independent of inPlaceLegal.
  Status launch(int kernel, const std::vector<int>& bufs, exec::HostTensor* acc) {
    const kernel::Kernel& k = p_.kernels[static_cast<size_t>(kernel)];
    std::vector<exec::HostTensor*> args;
    std::vector<size_t> aliased;  // written arguments whose memory another argument also uses
    for (size_t i = 0; i < bufs.size(); ++i) {
      if (bufs[i] < 0) {
        args.push_back(acc);
        continue;
      }
      args.push_back(&mem(bufs[i]));
      if (!k.args[i].written) continue;
      for (size_t j = 0; j < bufs.size(); ++j)
        if (j != i && bufs[j] >= 0 && bufs[j] != bufs[i] &&
            memoryOf_[static_cast<size_t>(bufs[j])] == memoryOf_[static_cast<size_t>(bufs[i])]) {
          aliased.push_back(i);
          break;
        }
    }
    if (aliased.empty()) return kernel::runKernel(k, args, s_);
    std::vector<exec::HostTensor> copies;
    copies.reserve(bufs.size());
    std::vector<exec::HostTensor*> privateArgs = args;
    for (size_t i = 0; i < bufs.size(); ++i)
      if (bufs[i] >= 0 && k.args[i].written) {
        copies.push_back(*args[i]);
        privateArgs[i] = &copies.back();
      }
    RETURN_IF_ERROR(kernel::runKernel(k, privateArgs, s_));
    RETURN_IF_ERROR(kernel::runKernel(k, args, s_));
    for (size_t i = 0; i < bufs.size(); ++i) {  // every result: a clobbered operand may feed any of them
      if (bufs[i] < 0 || !k.args[i].written) continue;
      const exec::HostTensor &want = *privateArgs[i], &got = *args[i];
      for (int64_t e = 0; e < got.numel(); ++e) {
        const double a = want.getDouble(e), b = got.getDouble(e);
        if (a != b && !(std::isnan(a) && std::isnan(b)))
          return internalError("memory plan: kernel @" + k.name + " writes " + where(bufs[aliased[0]]) +
                               " in place over an operand, and that changes element " + std::to_string(e) + " of %" +
                               p_.buffers[static_cast<size_t>(bufs[i])].name + " (" + std::to_string(b) +
                               " instead of " + std::to_string(a) + ")");
      }
    }
    return Status::ok();
  }

  Status call(const LibraryCall& c) {
    const ir::OpDef* def = impl_.ctx->ops.find(c.op);
    const exec::RefKernel* kernel = impl_.kernels.find(c.op);
    if (!def || !kernel) return internalError("no reference kernel for library op " + c.op);
    std::vector<exec::HostTensor> ins;
    std::vector<const exec::HostTensor*> ptrs;
    ins.reserve(c.inputs.size());
    for (const auto& v : c.inputs) {
      if (!v) {
        ptrs.push_back(nullptr);
        continue;
      }
      ASSIGN_OR_RETURN(exec::HostTensor t, gather(mem(v->buffer), *v, s_));
      ins.push_back(std::move(t));
      ptrs.push_back(&ins.back());
    }
    std::vector<DType> dtypes;
    std::vector<std::vector<int64_t>> shapes;
    for (const View& o : c.outputs) {
      ASSIGN_OR_RETURN(std::vector<int64_t> shape, evalShape(o.shape, s_, "library result shape"));
      shapes.push_back(shape);
      dtypes.push_back(o.buffer >= 0 ? p_.buffers[static_cast<size_t>(o.buffer)].dtype
                                     : p_.kernels[static_cast<size_t>(c.epilogue)].args[0].dtype);
    }
    if (c.epilogue >= 0)  // the accumulator's dtype is the epilogue argument's
      for (size_t i = 0; i < c.epilogueArgs.size(); ++i)
        if (c.epilogueArgs[i] < 0) dtypes[0] = p_.kernels[static_cast<size_t>(c.epilogue)].args[i].dtype;
    exec::RefKernelContext ctx(def->schema, c.attrs, ptrs, dtypes, shapes, s_);
    ASSIGN_OR_RETURN(std::vector<exec::HostTensor> results, (*kernel)(ctx));
    for (size_t i = 0; i < c.outputs.size(); ++i) {
      const int b = c.outputs[i].buffer;
      if (b < 0) continue;
      exec::HostTensor& dst = mem(b);
      for (int64_t e = 0; e < results[i].numel(); ++e) copyElement(results[i], e, dst, e);
    }
    if (c.epilogue >= 0) {
      exec::HostTensor acc(results[0].dtype(), {results[0].numel()});
      for (int64_t e = 0; e < acc.numel(); ++e) copyElement(results[0], e, acc, e);
      RETURN_IF_ERROR(launch(c.epilogue, c.epilogueArgs, &acc));
    }
    return Status::ok();
  }

  const ProgramInterpreter::Impl& impl_;
  const Program& p_;
  Symbols s_;
  std::vector<exec::HostTensor> storage_;
  std::vector<int64_t> begin_, end_;  ///< temporaries: byte range in the arena
  std::vector<int> memoryOf_;         ///< the buffer whose storage each buffer uses (itself, or a temp on its bytes)
  std::vector<bool> everWritten_;
  std::vector<int> clobberedBy_;  ///< the temporary last written over this one, or -1
};

}  // namespace

StatusOr<std::map<std::string, int64_t>> bindInputs(const Program& p, const std::vector<InputShape>& inputs) {
  if (inputs.size() != p.inputs.size())
    return invalidArgument("program @" + p.name + " takes " + std::to_string(p.inputs.size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  auto typeString = [](const InputShape& in) {
    return std::string(ir::dtypeName(in.dtype)) + exec::shapeString(in.shape);
  };
  std::map<std::string, int64_t> s;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& shape = p.inputs[i].type.shape;
    if (shape.size() != inputs[i].shape.size())
      return invalidArgument("input %" + p.inputs[i].name + ": expected rank " + std::to_string(shape.size()) +
                             ", got " + typeString(inputs[i]));
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d].isSymbol()) s.emplace(shape[d].symbols()[0], inputs[i].shape[d]);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& shape = p.inputs[i].type.shape;
    if (inputs[i].dtype != p.inputs[i].type.dtype)
      return invalidArgument("input %" + p.inputs[i].name + ": expected " + p.inputs[i].type.toString() + ", got " +
                             typeString(inputs[i]));
    for (size_t d = 0; d < shape.size(); ++d) {
      auto v = shape[d].evaluate(s);
      if (!v || *v != inputs[i].shape[d])
        return invalidArgument("input %" + p.inputs[i].name + " dim " + std::to_string(d) + ": expected " +
                               shape[d].toString() + ", got " + std::to_string(inputs[i].shape[d]));
    }
  }
  return s;
}

StatusOr<std::map<std::string, int64_t>> bindInputs(const Program& p, const std::vector<exec::HostTensor>& inputs) {
  std::vector<InputShape> shapes;
  for (const exec::HostTensor& t : inputs) shapes.push_back({t.dtype(), t.shape()});
  return bindInputs(p, shapes);
}

StatusOr<std::vector<exec::HostTensor>> ProgramInterpreter::run(const Program& p,
                                                                const std::vector<exec::HostTensor>& inputs) const {
  ASSIGN_OR_RETURN(Symbols s, bindInputs(p, inputs));
  Run r(*impl_, p, std::move(s));
  RETURN_IF_ERROR(r.allocate(inputs));
  RETURN_IF_ERROR(r.steps());
  return r.outputs();
}

}  // namespace plugsdk::sched
