// The attention executables, forward and backward (sdpa.h).
#include "backends/cuda/library/sdpa.h"

#include <algorithm>
#include <cmath>

#include "backends/cuda/runtime/device.h"
#include "backends/llvm_lowering/dtypes.h"
#include "plugsdk/library_attributes.hpp"

namespace plugsdk::cuda {

namespace {

size_t roundUp(size_t b) { return (b + 255) / 256 * 256; }

using Slot = SdpaCall::Slot;
// Launch buffers: the forward's q, k, v, mask (absent), result, logsumexp; the backward's
// grad_out, q, k, v, out, logsumexp, mask (absent), dq, dk, dv.
const std::vector<Slot> kForward = {{"query", 0, true, 'L', 'E'},
                                    {"key", 1, true, 'S', 'E'},
                                    {"value", 2, true, 'S', 'V'},
                                    {"result", 4, false, 'L', 'V'},
                                    {"logsumexp", 5, false, 'L', '1'}};
const std::vector<Slot> kBackward = {
    {"grad_out", 0, true, 'L', 'V'}, {"query", 1, true, 'L', 'E'}, {"key", 2, true, 'S', 'E'},
    {"value", 3, true, 'S', 'V'},    {"out", 4, true, 'L', 'V'},   {"logsumexp", 5, true, 'L', '1'},
    {"dq", 7, false, 'L', 'E'},      {"dk", 8, false, 'S', 'E'},   {"dv", 9, false, 'S', 'V'}};
// Slots by role, in each table.
enum Role { kGradOut, kQ, kK, kV, kO, kLse, kDq, kDk, kDv, kRoles };
constexpr int kForwardSlot[kRoles] = {-1, 0, 1, 2, 3, 4, -1, -1, -1};
constexpr int kBackwardSlot[kRoles] = {0, 1, 2, 3, 4, 5, 6, 7, 8};

/// `t` as cuDNN's [b, h, s, d] (the logsumexp: [b, h, L, 1]) with its outer batch dims apart.
struct Mapped {
  std::vector<int64_t> dims, strides;             ///< 4 each
  std::vector<int64_t> outerSizes, outerStrides;  ///< the batch dims before b
};

Mapped mapTo4d(const TensorValue& t, bool lse) {
  Mapped m;
  std::vector<int64_t> sizes = t.sizes, strides = t.strides;
  if (lse) sizes.push_back(1), strides.push_back(1);
  // Missing batch dims (fewer than two) become leading unit dims.
  while (sizes.size() < 4) sizes.insert(sizes.begin(), 1), strides.insert(strides.begin(), 0);
  const size_t lead = sizes.size() - 4;
  m.outerSizes.assign(sizes.begin(), sizes.begin() + static_cast<std::ptrdiff_t>(lead));
  m.outerStrides.assign(strides.begin(), strides.begin() + static_cast<std::ptrdiff_t>(lead));
  m.dims.assign(sizes.begin() + static_cast<std::ptrdiff_t>(lead), sizes.end());
  m.strides.assign(strides.begin() + static_cast<std::ptrdiff_t>(lead), strides.end());
  // A unit dim's stride is free: give it the packed one (cuDNN checks strides of every dim).
  for (size_t d = 4; d-- > 0;)
    if (m.dims[d] == 1) m.strides[d] = d == 3 ? 1 : m.dims[d + 1] * m.strides[d + 1];
  return m;
}

std::vector<int64_t> packed4(const std::vector<int64_t>& dims) {
  return {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
}

}  // namespace

const std::vector<Slot>& SdpaCall::slots() const { return backward ? kBackward : kForward; }

sdk::StatusOr<SdpaCall> SdpaCall::from(const sdk::LibraryCall& c) {
  SdpaCall v;
  v.backward = c.op == PLUGSDK_LIBRARY_SDPA_BACKWARD;
  const std::string op = v.backward ? "prims.sdpa_backward" : "prims.sdpa";
  const size_t ins = v.backward ? 7 : 4, outs = v.backward ? 3 : 2;
  if (c.inputs.size() != ins || c.outputs.size() != outs)
    return sdk::invalidArgument(op + " takes " + std::to_string(ins) + " inputs and " + std::to_string(outs) +
                                " outputs, not " + std::to_string(c.inputs.size()) + " and " +
                                std::to_string(c.outputs.size()));
  if (c.inputs[ins - 1].dtype != UINT32_MAX)
    return sdk::unimplemented(op +
                              " with an attn_mask (the cuda plugin leaves masks to the core: device_info sdpa_skips)");
  v.pool.assign(c.indexPool.begin(), c.indexPool.end());
  for (const char* s : c.symbols) v.symbols.emplace_back(s);
  const uint32_t t = c.inputs[v.backward ? 1 : 0].dtype;
  if (t != PLUGSDK_DTYPE_F16 && t != PLUGSDK_DTYPE_BF16)
    return sdk::unimplemented(op + " of dtype " + std::to_string(t) +
                              ": the cuda plugin's attention takes f16 and bf16 (device_info sdpa_dtypes)");
  const size_t r = c.inputs[v.backward ? 1 : 0].rank;
  for (const Slot& s : v.slots()) {
    v.operands.push_back(copyOperand(s.buffer < ins ? c.inputs[s.buffer] : c.outputs[s.buffer - ins]));
    const OperandDesc& o = v.operands.back();
    const bool lse = s.cols == '1';
    if (o.dtype != (lse ? uint32_t{PLUGSDK_DTYPE_F32} : t))
      return sdk::unimplemented(op + ": the " + s.name + " has dtype " + std::to_string(o.dtype) +
                                " (the cuda plugin's attention takes f16 and bf16 operands, an f32 logsumexp)");
    if (r < 2 || o.sizes.size() != (lse ? r - 1 : r))
      return sdk::invalidArgument(op + ": the " + s.name + " has rank " + std::to_string(o.sizes.size()) +
                                  " where the query's is " + std::to_string(r) + " (operand ranks disagree)");
  }
  sdk::StatusOr<sdk::LibraryAttributes> a = sdk::LibraryAttributes::parse(std::string(c.attributes));
  if (!a.isOk()) return a.status().withContext(op);
  sdk::StatusOr<double> p = a->getFloat("dropout_p");
  if (p.isOk() && *p > 0)
    return sdk::unimplemented(op + " with dropout (the cuda plugin leaves it to the core: sdpa_skips)");
  sdk::StatusOr<bool> causal = a->getBool("is_causal");
  v.causal = causal.isOk() && *causal;
  if (!a->isNone("scale")) {
    sdk::StatusOr<double> s = a->getFloat("scale");
    if (!s.isOk()) return s.status().withContext(op);
    v.scale = *s;
  }
  return v;
}

struct SdpaExecutable::Staged {
  std::vector<int64_t> dims, strides;               ///< as cuDNN reads it (packed when copied)
  std::vector<int64_t> outerStrides;                ///< elements per outer batch index
  int64_t offset = 0;                               ///< the operand's first element
  dnn::TensorDesc src = nullptr, packed = nullptr;  ///< for the copy (cudnnTransformTensor)
  size_t tempBytes = 0, tempAt = 0;
  bool copied() const { return src != nullptr; }
};

struct SdpaExecutable::Setup {
  const dnn::Api* dnn = nullptr;
  std::vector<Staged> s;       ///< per slot
  std::vector<int64_t> outer;  ///< outer batch sizes (looped)
  std::unique_ptr<dnn::SdpaGraphPlan> forward;
  std::unique_ptr<dnn::SdpaBackwardGraphPlan> backward;
  size_t workspace = 0, scratch = 0;
  bool empty = false;  ///< nothing to compute
  ~Setup() {
    for (Staged& t : s)
      for (dnn::TensorDesc d : {t.src, t.packed})
        if (d) dnn->destroyTensor(d);
  }
};

SdpaExecutable::~SdpaExecutable() = default;

sdk::StatusOr<std::unique_ptr<SdpaExecutable>> SdpaExecutable::create(const sdk::LibraryCall& c, DnnDevice* dnn) {
  const char* op = c.op == PLUGSDK_LIBRARY_SDPA_BACKWARD ? "prims.sdpa_backward" : "prims.sdpa";
  if (!dnn->dnn) return sdk::failedPrecondition(std::string(op) + ": no cuDNN on this machine");
  sdk::StatusOr<SdpaCall> call = SdpaCall::from(c);
  if (!call.isOk()) return call.status();
  auto e = std::unique_ptr<SdpaExecutable>(new SdpaExecutable());
  e->call_ = std::move(*call);
  e->dnn_ = dnn;
  e->log_ = std::string(op) + ": cuDNN " + std::to_string(dnn->dnn->getVersion()) + " fused attention" +
            (e->call_.backward ? " backward" : "") + " (" + dnn->dnn->path + ")";
  return e;
}

sdk::StatusOr<const SdpaExecutable::Setup*> SdpaExecutable::setupFor(const CUdeviceptr* args,
                                                                     const std::vector<int64_t>& symbols) {
  const std::vector<Slot>& slots = call_.slots();
  const int* at = call_.backward ? kBackwardSlot : kForwardSlot;
  const std::string op = name();
  std::string key;
  for (int64_t s : symbols) key += std::to_string(s) + ",";
  for (const Slot& sl : slots) key += std::to_string(args[sl.buffer] % 16) + ";";
  auto it = setups_.find(key);
  if (it != setups_.end()) return it->second.get();
  std::vector<TensorValue> vals(slots.size());
  const sdk::Span<const plugsdk_index_insn_t> pool(call_.pool.data(), call_.pool.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    sdk::StatusOr<TensorValue> t = evalOperand(pool, call_.operands[i], symbols);
    if (!t.isOk()) return t.status().withContext(op + " " + slots[i].name);
    vals[i] = std::move(*t);
  }
  const TensorValue& qv = vals[static_cast<size_t>(at[kQ])];
  const size_t r = qv.sizes.size(), nb = r - 2;
  const int64_t L = qv.sizes[r - 2], E = qv.sizes[r - 1], S = vals[static_cast<size_t>(at[kK])].sizes[r - 2],
                Ev = vals[static_cast<size_t>(at[kV])].sizes[r - 1];
  auto letter = [&](char c) { return c == 'L' ? L : c == 'S' ? S : c == 'E' ? E : Ev; };
  for (size_t i = 0; i < slots.size(); ++i) {
    const std::vector<int64_t>& z = vals[i].sizes;
    for (size_t d = 0; d < nb; ++d)
      if (z[d] != qv.sizes[d])
        return sdk::invalidArgument(op + ": batch dim " + std::to_string(d) + " of the " + slots[i].name +
                                    " is not the query's");
    const bool lse = slots[i].cols == '1';
    if (z[nb] != letter(slots[i].rows) || (!lse && z[nb + 1] != letter(slots[i].cols)))
      return sdk::invalidArgument(op + ": the " + slots[i].name + "'s sizes disagree with q [.., " + std::to_string(L) +
                                  ", " + std::to_string(E) + "], k [.., " + std::to_string(S) + ", ..], v [.., .., " +
                                  std::to_string(Ev) + "]");
  }
  auto s = std::make_unique<Setup>();
  const dnn::Api& D = *dnn_->dnn;
  s->dnn = &D;
  s->s.resize(slots.size());
  if (L == 0 || S == 0 || qv.numel() + vals[static_cast<size_t>(at[kV])].numel() == 0) {
    // No attention to compute: an empty result, or (no keys) a result the fused kernels
    // cannot give (the forward's rows of zeros, the backward's zero gradients).
    for (size_t i = 0; i < slots.size(); ++i)
      if (!slots[i].input && vals[i].numel() != 0)
        return sdk::unimplemented(op + " with " + (S == 0 ? "no keys (S = 0)" : "no queries (L = 0)") +
                                  ": the cuda plugin takes L, S >= 1");
    s->empty = true;
    const Setup* out = s.get();
    setups_.emplace(key, std::move(s));
    return out;
  }
  const uint32_t t = call_.operands[static_cast<size_t>(at[kQ])].dtype;
  const int64_t eb = static_cast<int64_t>(lowering::dtypeBytes(t));
  const int dnnType = t == PLUGSDK_DTYPE_F16 ? dnn::kHalf : dnn::kBfloat16;
  for (size_t i = 0; i < slots.size(); ++i) {
    const bool lse = slots[i].cols == '1';
    const Mapped m = mapTo4d(vals[i], lse);
    Staged& g = s->s[i];
    g.dims = m.dims;
    g.offset = vals[i].offset;
    g.outerStrides = m.outerStrides;
    if (static_cast<int>(i) == at[kQ]) s->outer = m.outerSizes;
    const int64_t b = lse ? 4 : eb;
    // In place: a unit last stride, rows and base 16-byte aligned, no negative strides; the
    // logsumexp packed.
    bool inPlace = args[slots[i].buffer] % 16 == 0 && (vals[i].offset * b) % 16 == 0;
    for (size_t d = 0; d < 4; ++d) {
      if (m.strides[d] < 0) inPlace = false;
      if (d < 3 && m.dims[d] > 1 && (m.strides[d] * b) % 16 != 0) inPlace = false;
    }
    if (m.strides[3] != 1) inPlace = false;
    if (lse && m.strides != packed4(m.dims)) inPlace = false;
    if (inPlace) {
      g.strides = m.strides;
      continue;
    }
    g.strides = packed4(m.dims);
    auto desc = [&](dnn::TensorDesc* out, const std::vector<int64_t>& strides) {
      const int dims[4] = {static_cast<int>(m.dims[0]), static_cast<int>(m.dims[1]), static_cast<int>(m.dims[2]),
                           static_cast<int>(m.dims[3])};
      const int st[4] = {static_cast<int>(strides[0]), static_cast<int>(strides[1]), static_cast<int>(strides[2]),
                         static_cast<int>(strides[3])};
      sdk::Status e = D.check(D.createTensor(out), op + ": cudnnCreateTensorDescriptor");
      if (e.isOk())
        e = D.check(D.setTensorNd(*out, lse ? dnn::kFloat : dnnType, 4, dims, st),
                    op + ": describing the " + slots[i].name + " for its copy");
      return e;
    };
    sdk::Status st = desc(&g.src, m.strides);
    if (st.isOk()) st = desc(&g.packed, g.strides);
    if (!st.isOk()) return st;
    g.tempBytes = roundUp(static_cast<size_t>(m.dims[0] * m.dims[1] * m.dims[2] * m.dims[3] * b));
  }
  auto strides = [&](Role role) { return s->s[static_cast<size_t>(at[role])].strides; };
  dnn::SdpaSpec spec;
  spec.dataType = dnnType;
  spec.b = s->s[static_cast<size_t>(at[kQ])].dims[0];
  spec.h = s->s[static_cast<size_t>(at[kQ])].dims[1];
  spec.sq = L;
  spec.skv = S;
  spec.d = E;
  spec.dv = Ev;
  spec.q = strides(kQ);
  spec.k = strides(kK);
  spec.v = strides(kV);
  spec.o = strides(kO);
  spec.stats = strides(kLse);
  spec.scale = static_cast<float>(call_.scale ? *call_.scale : 1.0 / std::sqrt(static_cast<double>(E)));
  spec.causal = call_.causal;
  sdk::Status st = dnn_->ready();
  if (!st.isOk()) return st;
  if (call_.backward) {
    dnn::SdpaBackwardSpec bs;
    bs.forward = spec;
    bs.dO = strides(kGradOut);
    bs.dQ = strides(kDq);
    bs.dK = strides(kDk);
    bs.dV = strides(kDv);
    sdk::StatusOr<std::unique_ptr<dnn::SdpaBackwardGraphPlan>> plan =
        dnn::SdpaBackwardGraphPlan::create(D, dnn_->handle, bs);
    if (!plan.isOk()) return plan.status().withContext(op);
    s->backward = std::move(*plan);
    s->workspace = roundUp(s->backward->workspaceBytes());
  } else {
    sdk::StatusOr<std::unique_ptr<dnn::SdpaGraphPlan>> plan = dnn::SdpaGraphPlan::create(D, dnn_->handle, spec);
    if (!plan.isOk()) return plan.status().withContext(op);
    s->forward = std::move(*plan);
    s->workspace = roundUp(s->forward->workspaceBytes());
  }
  size_t scratch = s->workspace;
  for (Staged& g : s->s) {
    g.tempAt = scratch;
    scratch += g.tempBytes;
  }
  s->scratch = scratch;
  const Setup* out = s.get();
  setups_.emplace(key, std::move(s));
  return out;
}

sdk::Status SdpaExecutable::launch(const CUdeviceptr* args, size_t numArgs, const std::vector<int64_t>& symbols,
                                   CUstream stream) {
  const std::vector<Slot>& slots = call_.slots();
  const std::string op = name();
  const size_t want = call_.backward ? 10 : 6;
  if (numArgs < want)
    return sdk::invalidArgument(op + " takes " + std::to_string(want) + " buffers, not " + std::to_string(numArgs));
  sdk::StatusOr<const Setup*> setup = setupFor(args, symbols);
  if (!setup.isOk()) return setup.status();
  const Setup& s = **setup;
  if (s.empty) return sdk::Status::ok();
  const dnn::Api& D = *dnn_->dnn;
  sdk::Status st = D.check(D.setStream(dnn_->handle, stream), op + ": cudnnSetStream");
  if (!st.isOk()) return st;
  sdk::StatusOr<CUdeviceptr> scratch = dnn_->scratchOf(std::max<size_t>(s.scratch, 256));
  if (!scratch.isOk()) return scratch.status();
  const int* at = call_.backward ? kBackwardSlot : kForwardSlot;
  const int64_t eb = static_cast<int64_t>(lowering::dtypeBytes(call_.operands[static_cast<size_t>(at[kQ])].dtype));
  const float one = 1, zero = 0;
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(p); };
  int64_t outerCount = 1;
  for (int64_t n : s.outer) outerCount *= n;
  std::vector<int64_t> idx(s.outer.size(), 0);
  std::vector<CUdeviceptr> place(slots.size()), use(slots.size());
  for (int64_t n = 0; n < outerCount && st.isOk(); ++n) {
    for (size_t i = 0; i < slots.size(); ++i) {
      const Staged& g = s.s[i];
      int64_t off = g.offset;
      for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * g.outerStrides[d];
      place[i] = args[slots[i].buffer] + static_cast<uint64_t>(off * (slots[i].cols == '1' ? 4 : eb));
      use[i] = g.copied() ? *scratch + g.tempAt : place[i];
    }
    for (size_t i = 0; i < slots.size(); ++i)
      if (st.isOk() && slots[i].input && s.s[i].copied())
        st = D.check(D.transform(dnn_->handle, &one, s.s[i].src, ptr(place[i]), &zero, s.s[i].packed, ptr(use[i])),
                     op + ": packing the " + slots[i].name);
    auto u = [&](Role role) { return ptr(use[static_cast<size_t>(at[role])]); };
    if (st.isOk() && s.backward) {
      // dQ's f32 accumulator starts at zero on every call.
      st = dnn_->api->check(dnn_->api->memsetD8Async(*scratch + s.backward->accumulatorOffset(), 0,
                                                     s.backward->accumulatorBytes(), stream),
                            op + ": clearing dQ's accumulator");
      if (st.isOk())
        st = s.backward->execute(dnn_->handle, u(kQ), u(kK), u(kV), u(kO), u(kLse), u(kGradOut), u(kDq), u(kDk), u(kDv),
                                 ptr(*scratch));
    } else if (st.isOk()) {
      st = s.forward->execute(dnn_->handle, u(kQ), u(kK), u(kV), u(kO), u(kLse), nullptr, ptr(*scratch));
    }
    for (size_t i = 0; i < slots.size(); ++i)
      if (st.isOk() && !slots[i].input && s.s[i].copied())
        st = D.check(D.transform(dnn_->handle, &one, s.s[i].packed, ptr(use[i]), &zero, s.s[i].src, ptr(place[i])),
                     op + ": writing the " + slots[i].name + " in place");
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < s.outer[d]) break;
      idx[d] = 0;
    }
  }
  return st;
}

}  // namespace plugsdk::cuda
