// ProgramInterpreter: symbol binding, buffer storage, steps in order, slot-ownership checks.
#include "core/sched/interpreter.h"

#include <algorithm>

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
    owner_.assign(p_.buffers.size(), -1);
    return Status::ok();
  }

  /// Within one step a temporary may only share memory with one it reads when the write is
  /// an in-place-legal elementwise update.
  Status checkAliasing(const Step& s) const {
    std::vector<std::pair<int, bool>> uses;  // (buffer, written), from kernel args or call operands
    auto kernelUses = [&](int kernel, const std::vector<int>& bufs) {
      const kernel::Kernel& k = p_.kernels[static_cast<size_t>(kernel)];
      for (size_t i = 0; i < bufs.size(); ++i)
        if (bufs[i] >= 0) uses.emplace_back(bufs[i], k.args[i].written);
    };
    if (s.kind == Step::Kind::kLaunch) {
      kernelUses(s.launch.kernel, s.launch.args);
    } else {
      for (const auto& v : s.call.inputs)
        if (v) uses.emplace_back(v->buffer, false);
      for (const View& v : s.call.outputs)
        if (v.buffer >= 0) uses.emplace_back(v.buffer, true);
      if (s.call.epilogue >= 0) kernelUses(s.call.epilogue, s.call.epilogueArgs);
    }
    for (const auto& [w, written] : uses) {
      if (!written) continue;
      const Buffer& wb = p_.buffers[static_cast<size_t>(w)];
      for (const auto& [r, rw] : uses) {
        const Buffer& rb = p_.buffers[static_cast<size_t>(r)];
        if (r == w || rw || wb.role != BufferRole::kTemp || rb.role != BufferRole::kTemp || wb.slot != rb.slot)
          continue;
        bool legal = false;
        if (s.kind == Step::Kind::kLaunch) {
          const auto& args = s.launch.args;
          const int in = static_cast<int>(std::find(args.begin(), args.end(), r) - args.begin());
          const int out = static_cast<int>(std::find(args.begin(), args.end(), w) - args.begin());
          legal = inPlaceLegal(p_.kernels[static_cast<size_t>(s.launch.kernel)], in, out);
        }
        if (!legal)
          return internalError("memory plan: %" + wb.name + " is written into arena slot " + std::to_string(wb.slot) +
                               " while %" + rb.name + ", which the same step reads, still occupies it");
      }
    }
    return Status::ok();
  }

  Status steps() {
    for (size_t si = 0; si < p_.steps.size(); ++si) {
      const Step& s = p_.steps[si];
      if (Status a = checkAliasing(s); !a.isOk()) return a.withContext("step " + std::to_string(si));
      Status st = s.kind == Step::Kind::kLaunch ? launch(s.launch.kernel, s.launch.args, nullptr) : call(s.call);
      if (!st.isOk()) return st.withContext("step " + std::to_string(si) + " (" + s.origin + ")");
    }
    return Status::ok();
  }

  StatusOr<std::vector<exec::HostTensor>> outputs() {
    std::vector<exec::HostTensor> out;
    for (const ProgramOutput& o : p_.outputs) {
      RETURN_IF_ERROR(checkOwner(o.buffer));
      ASSIGN_OR_RETURN(std::vector<int64_t> shape, evalShape(o.shape, s_, "output shape"));
      const exec::HostTensor& buf = storage_[static_cast<size_t>(o.buffer)];
      exec::HostTensor t(buf.dtype(), shape);
      for (int64_t i = 0; i < t.numel(); ++i) copyElement(buf, i, t, i);
      out.push_back(std::move(t));
    }
    return out;
  }

 private:
  /// A temporary is read only while it still owns its arena slot.
  Status checkOwner(int b) const {
    const Buffer& buf = p_.buffers[static_cast<size_t>(b)];
    if (buf.role != BufferRole::kTemp) return Status::ok();
    auto it = slotOwner_.find(buf.slot);
    if (it == slotOwner_.end() || it->second != b)
      return internalError("memory plan: %" + buf.name + " is read after its arena slot " + std::to_string(buf.slot) +
                           " was given to " +
                           (it == slotOwner_.end() ? std::string("nothing (never written)")
                                                   : "%" + p_.buffers[static_cast<size_t>(it->second)].name));
    return Status::ok();
  }
  void written(int b) {
    const Buffer& buf = p_.buffers[static_cast<size_t>(b)];
    if (buf.role == BufferRole::kTemp) slotOwner_[buf.slot] = b;
  }

  Status launch(int kernel, const std::vector<int>& bufs, exec::HostTensor* acc) {
    const kernel::Kernel& k = p_.kernels[static_cast<size_t>(kernel)];
    std::vector<exec::HostTensor*> args;
    for (size_t i = 0; i < bufs.size(); ++i) {
      if (bufs[i] < 0) {
        args.push_back(acc);
        continue;
      }
      if (k.args[i].read && !k.args[i].written) RETURN_IF_ERROR(checkOwner(bufs[i]));
      args.push_back(&storage_[static_cast<size_t>(bufs[i])]);
    }
    RETURN_IF_ERROR(kernel::runKernel(k, args, s_));
    for (size_t i = 0; i < bufs.size(); ++i)
      if (bufs[i] >= 0 && k.args[i].written) written(bufs[i]);
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
      RETURN_IF_ERROR(checkOwner(v->buffer));
      ASSIGN_OR_RETURN(exec::HostTensor t, gather(storage_[static_cast<size_t>(v->buffer)], *v, s_));
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
      exec::HostTensor& dst = storage_[static_cast<size_t>(b)];
      for (int64_t e = 0; e < results[i].numel(); ++e) copyElement(results[i], e, dst, e);
      written(b);
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
  std::vector<int> owner_;
  std::map<int, int> slotOwner_;
};

}  // namespace

StatusOr<std::map<std::string, int64_t>> bindInputs(const Program& p, const std::vector<exec::HostTensor>& inputs) {
  if (inputs.size() != p.inputs.size())
    return invalidArgument("program @" + p.name + " takes " + std::to_string(p.inputs.size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  std::map<std::string, int64_t> s;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& shape = p.inputs[i].type.shape;
    if (static_cast<int>(shape.size()) != inputs[i].rank())
      return invalidArgument("input %" + p.inputs[i].name + ": expected rank " + std::to_string(shape.size()) +
                             ", got " + inputs[i].typeString());
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d].isSymbol()) s.emplace(shape[d].symbols()[0], inputs[i].shape()[d]);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& shape = p.inputs[i].type.shape;
    if (inputs[i].dtype() != p.inputs[i].type.dtype)
      return invalidArgument("input %" + p.inputs[i].name + ": expected " + p.inputs[i].type.toString() + ", got " +
                             inputs[i].typeString());
    for (size_t d = 0; d < shape.size(); ++d) {
      auto v = shape[d].evaluate(s);
      if (!v || *v != inputs[i].shape()[d])
        return invalidArgument("input %" + p.inputs[i].name + " dim " + std::to_string(d) + ": expected " +
                               shape[d].toString() + ", got " + std::to_string(inputs[i].shape()[d]));
    }
  }
  return s;
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
