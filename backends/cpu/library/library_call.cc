// Planning and running library calls (see library_call.h).
#include "backends/cpu/library/library_call.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "backends/cpu/library/library_ops.h"
#include "backends/cpu/runtime/launch.h"

namespace plugsdk::cpu {

namespace {

const char* opName(uint32_t op) {
  switch (op) {
    case PLUGSDK_LIBRARY_MATMUL: return "prims.matmul";
    case PLUGSDK_LIBRARY_CONVOLUTION: return "prims.convolution";
    case PLUGSDK_LIBRARY_SDPA: return "prims.sdpa";
    default: return nullptr;
  }
}

Descriptor copy(const plugsdk_tensor_desc_t& d) {
  Descriptor c;
  if (d.dtype != UINT32_MAX) c.dtype = d.dtype;
  c.sizes.assign(d.sizes, d.sizes + d.rank);
  c.strides.assign(d.strides, d.strides + d.rank);
  c.offset = d.offset;
  return c;
}

sdk::StatusOr<TensorRef> evalRef(const Descriptor& d, uint8_t* base, const LibraryPlan& p,
                                 sdk::Span<const int64_t> syms, const std::string& what) {
  TensorRef t;
  t.base = base;
  t.dtype = *d.dtype;
  const sdk::Span<const plugsdk_index_insn_t> pool(p.pool.data(), p.pool.size());
  const sdk::IndexEnv env{{}, {}, syms};
  for (size_t i = 0; i < d.sizes.size(); ++i) {
    sdk::StatusOr<int64_t> s = sdk::evalIndex(pool, d.sizes[i], env);
    sdk::StatusOr<int64_t> st = sdk::evalIndex(pool, d.strides[i], env);
    if (!s.isOk()) return s.status().withContext(what);
    if (!st.isOk()) return st.status().withContext(what);
    t.shape.push_back(*s);
    t.strides.push_back(*st);
  }
  sdk::StatusOr<int64_t> off = sdk::evalIndex(pool, d.offset, env);
  if (!off.isOk()) return off.status().withContext(what);
  t.offset = *off;
  return t;
}

}  // namespace

void* Scratch::get(size_t slot, size_t bytes) {
  if (slot >= buffers_.size()) {
    while (buffers_.size() <= slot) buffers_.emplace_back(nullptr, &std::free);
    sizes_.resize(slot + 1, 0);
  }
  if (sizes_[slot] < bytes || !buffers_[slot]) {
    const size_t rounded = (std::max<size_t>(bytes, 64) + 63) / 64 * 64;
    buffers_[slot].reset(static_cast<uint8_t*>(std::aligned_alloc(64, rounded)));
    sizes_[slot] = buffers_[slot] ? rounded : 0;
  }
  return buffers_[slot].get();
}

sdk::StatusOr<LibraryPlan> planLibrary(const sdk::LibraryCall& call, KernelCompiler& compiler) {
  LibraryPlan p;
  p.op = call.op;
  const char* name = opName(call.op);
  if (!name) return sdk::unimplemented("library op bit " + std::to_string(call.op) + " is unknown to the cpu backend");
  p.opName = name;
  sdk::StatusOr<Attributes> attrs = Attributes::parse(std::string(call.attributes));
  if (!attrs.isOk()) return attrs.status().withContext(p.opName);
  p.attrs = std::move(*attrs);
  for (const plugsdk_tensor_desc_t& d : call.inputs) p.inputs.push_back(copy(d));
  for (const plugsdk_tensor_desc_t& d : call.outputs) {
    if (d.dtype == UINT32_MAX) return sdk::invalidArgument(p.opName + ": an output descriptor has no dtype");
    p.outputs.push_back(copy(d));
  }
  const size_t wantIn = call.op == PLUGSDK_LIBRARY_SDPA ? 4 : 2, wantOut = call.op == PLUGSDK_LIBRARY_SDPA ? 2 : 1;
  if (p.inputs.size() != wantIn || p.outputs.size() != wantOut)
    return sdk::invalidArgument(p.opName + ": " + std::to_string(p.inputs.size()) + " inputs and " +
                                std::to_string(p.outputs.size()) + " outputs (expected " + std::to_string(wantIn) +
                                " and " + std::to_string(wantOut) + ")");
  for (size_t i = 0; i < (call.op == PLUGSDK_LIBRARY_SDPA ? 3u : 2u); ++i)
    if (!p.inputs[i].dtype) return sdk::invalidArgument(p.opName + ": input " + std::to_string(i) + " is absent");
  if (*p.inputs[0].dtype == PLUGSDK_DTYPE_BOOL)
    return sdk::unimplemented(p.opName + " of bool operands is not supported by the cpu backend");
  p.pool.assign(call.indexPool.begin(), call.indexPool.end());
  p.numSymbols = call.symbols.size();
  if (call.epilogue) {
    const sdk::KernelView& k = *call.epilogue;
    bool found = false;
    for (size_t i = 0; i < k.numArgs(); ++i)
      if (k.arg(i).access & PLUGSDK_ACCESS_ACCUMULATOR) {
        p.accumulator = i;
        p.accDtype = k.arg(i).dtype;
        found = true;
      }
    if (!found) return sdk::invalidArgument(p.opName + ": the epilogue kernel has no ACCUMULATOR argument");
    sdk::StatusOr<std::shared_ptr<const CompiledKernel>> e = compiler.compile(k);
    if (!e.isOk()) return e.status().withContext(p.opName + " epilogue");
    p.epilogue = *e;
  }
  return p;
}

sdk::Status runLibrary(const LibraryPlan& p, const std::vector<uint8_t*>& buffers, const std::vector<int64_t>& symbols,
                       const LibraryContext& ctx) {
  const sdk::Span<const int64_t> syms(symbols.data(), std::min(symbols.size(), p.numSymbols));
  std::vector<TensorRef> ins(p.inputs.size()), outs(p.outputs.size());
  std::vector<bool> present(p.inputs.size(), false);
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    if (!p.inputs[i].dtype) continue;
    if (!buffers[i]) return sdk::invalidArgument(p.opName + ": no buffer for input " + std::to_string(i));
    sdk::StatusOr<TensorRef> t = evalRef(p.inputs[i], buffers[i], p, syms, p.opName + " input " + std::to_string(i));
    if (!t.isOk()) return t.status();
    ins[i] = std::move(*t);
    present[i] = true;
  }
  // Under an epilogue, output 0 is a row-major temporary of the accumulator's dtype.
  uint8_t* temp = nullptr;
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    uint8_t* base = buffers[p.inputs.size() + o];
    sdk::StatusOr<TensorRef> t = evalRef(p.outputs[o], base, p, syms, p.opName + " output " + std::to_string(o));
    if (!t.isOk()) return t.status();
    if (o == 0 && p.epilogue) {
      t->dtype = p.accDtype;
      t->offset = 0;
      int64_t stride = 1;
      for (size_t d = t->shape.size(); d-- > 0;) {
        t->strides[d] = stride;
        stride *= t->shape[d];
      }
      const uint64_t bytes = (static_cast<uint64_t>(t->numel()) * dtypeBytes(p.accDtype) + 63) / 64 * 64;
      temp = static_cast<uint8_t*>(p.scratch.get(0, bytes));
      if (!temp)
        return sdk::resourceExhausted(p.opName + ": cannot allocate its " + std::to_string(bytes) +
                                      "-byte result for the epilogue");
      t->base = temp;
    } else if (!base) {
      return sdk::invalidArgument(p.opName + ": no buffer for output " + std::to_string(o));
    }
    outs[o] = std::move(*t);
  }
  // The epilogue, prepared before the op so that the op may run it block by block: its
  // accumulator bound to the result, its other arguments to the buffers after the outputs;
  // its own symbols follow the call's in the launch.
  std::optional<PreparedLaunch> epilogue;
  if (p.epilogue) {
    const CompiledKernel& k = *p.epilogue;
    std::vector<void*> args(k.numArgs, nullptr);
    size_t next = p.inputs.size() + p.outputs.size();
    for (size_t a = 0; a < k.numArgs; ++a) {
      if (a == p.accumulator) {
        args[a] = temp;
        continue;
      }
      if (next >= buffers.size()) return sdk::invalidArgument(p.opName + ": too few buffers for the epilogue");
      args[a] = buffers[next++];
    }
    std::vector<int64_t> esyms(symbols.begin() + static_cast<std::ptrdiff_t>(std::min(symbols.size(), p.numSymbols)),
                               symbols.end());
    sdk::StatusOr<PreparedLaunch> e = PreparedLaunch::prepare(k, std::move(args), std::move(esyms));
    if (!e.isOk()) return e.status().withContext(p.opName + " epilogue");
    epilogue.emplace(std::move(*e));
  }
  bool epilogueDone = false;
  LibraryContext c = ctx;
  c.scratch = &p.scratch;
  c.epilogue = epilogue && epilogue->grid() == outs[0].shape ? &*epilogue : nullptr;
  c.epilogueDone = &epilogueDone;
  sdk::Status st = sdk::Status::ok();
  switch (p.op) {
    case PLUGSDK_LIBRARY_MATMUL: st = runMatmul(ins[0], ins[1], outs[0], c); break;
    case PLUGSDK_LIBRARY_CONVOLUTION: st = runConvolution(ins[0], ins[1], outs[0], p.attrs, c); break;
    case PLUGSDK_LIBRARY_SDPA:
      st = runSdpa(ins[0], ins[1], ins[2], present[3] ? &ins[3] : nullptr, outs[0], outs[1], p.attrs, c);
      break;
    default: return sdk::unimplemented(p.opName);
  }
  if (!st.isOk()) return st.withContext(p.opName);
  if (!epilogue) return sdk::Status::ok();
  if (!epilogueDone) epilogue->runParallel(*ctx.arena, 0, epilogue->outer());
  return epilogue->status();
}

}  // namespace plugsdk::cpu
