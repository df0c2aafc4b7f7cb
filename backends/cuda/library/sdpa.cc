// The attention executable (sdpa.h).
#include "backends/cuda/library/sdpa.h"

#include <algorithm>
#include <cmath>

#include "backends/cuda/runtime/device.h"
#include "backends/llvm_lowering/dtypes.h"
#include "plugsdk/library_attributes.hpp"

namespace plugsdk::cuda {

namespace {

size_t roundUp(size_t b) { return (b + 255) / 256 * 256; }

enum Slot { kQ, kK, kV, kO, kLse, kSlots };
constexpr size_t kArg[kSlots] = {0, 1, 2, 4, 5};  // buffer index of each slot (3: the absent mask)

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

sdk::StatusOr<SdpaCall> SdpaCall::from(const sdk::LibraryCall& c) {
  if (c.inputs.size() != 4 || c.outputs.size() != 2)
    return sdk::invalidArgument("prims.sdpa takes 4 inputs and 2 outputs, not " + std::to_string(c.inputs.size()) +
                                " and " + std::to_string(c.outputs.size()));
  if (c.inputs[3].dtype != UINT32_MAX)
    return sdk::unimplemented(
        "prims.sdpa with an attn_mask (the cuda plugin leaves masks to the core: device_info sdpa_skips)");
  SdpaCall v;
  v.pool.assign(c.indexPool.begin(), c.indexPool.end());
  for (const char* s : c.symbols) v.symbols.emplace_back(s);
  v.q = copyOperand(c.inputs[0]);
  v.k = copyOperand(c.inputs[1]);
  v.v = copyOperand(c.inputs[2]);
  v.out = copyOperand(c.outputs[0]);
  v.lse = copyOperand(c.outputs[1]);
  const uint32_t t = v.q.dtype;
  if ((t != PLUGSDK_DTYPE_F16 && t != PLUGSDK_DTYPE_BF16) || v.k.dtype != t || v.v.dtype != t || v.out.dtype != t ||
      v.lse.dtype != PLUGSDK_DTYPE_F32)
    return sdk::unimplemented("prims.sdpa of dtype " + std::to_string(t) +
                              ": the cuda plugin's attention takes f16 and bf16 (device_info sdpa_dtypes)");
  const size_t r = v.q.sizes.size();
  if (r < 2 || v.k.sizes.size() != r || v.v.sizes.size() != r || v.out.sizes.size() != r || v.lse.sizes.size() != r - 1)
    return sdk::invalidArgument("prims.sdpa operands of ranks " + std::to_string(r) + ", " +
                                std::to_string(v.k.sizes.size()) + ", " + std::to_string(v.v.sizes.size()) + " -> " +
                                std::to_string(v.out.sizes.size()) + ", " + std::to_string(v.lse.sizes.size()));
  sdk::StatusOr<sdk::LibraryAttributes> a = sdk::LibraryAttributes::parse(std::string(c.attributes));
  if (!a.isOk()) return a.status().withContext("prims.sdpa");
  sdk::StatusOr<double> p = a->getFloat("dropout_p");
  if (p.isOk() && *p > 0)
    return sdk::unimplemented("prims.sdpa with dropout (the cuda plugin leaves it to the core: sdpa_skips)");
  sdk::StatusOr<bool> causal = a->getBool("is_causal");
  v.causal = causal.isOk() && *causal;
  if (!a->isNone("scale")) {
    sdk::StatusOr<double> s = a->getFloat("scale");
    if (!s.isOk()) return s.status().withContext("prims.sdpa");
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
  Staged s[kSlots];
  std::vector<int64_t> outer;  ///< outer batch sizes (looped)
  std::unique_ptr<dnn::SdpaGraphPlan> plan;
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
  if (!dnn->dnn) return sdk::failedPrecondition("prims.sdpa: no cuDNN on this machine");
  sdk::StatusOr<SdpaCall> call = SdpaCall::from(c);
  if (!call.isOk()) return call.status();
  auto e = std::unique_ptr<SdpaExecutable>(new SdpaExecutable());
  e->call_ = std::move(*call);
  e->dnn_ = dnn;
  e->log_ = "prims.sdpa: cuDNN " + std::to_string(dnn->dnn->getVersion()) + " fused attention (" + dnn->dnn->path + ")";
  return e;
}

sdk::StatusOr<const SdpaExecutable::Setup*> SdpaExecutable::setupFor(const CUdeviceptr args[6],
                                                                     const std::vector<int64_t>& symbols) {
  std::string key;
  for (int64_t s : symbols) key += std::to_string(s) + ",";
  for (int i = 0; i < kSlots; ++i) key += std::to_string(args[kArg[i]] % 16) + ";";
  auto it = setups_.find(key);
  if (it != setups_.end()) return it->second.get();
  const OperandDesc* descs[kSlots] = {&call_.q, &call_.k, &call_.v, &call_.out, &call_.lse};
  const char* names[kSlots] = {"query", "key", "value", "result", "logsumexp"};
  TensorValue vals[kSlots];
  const sdk::Span<const plugsdk_index_insn_t> pool(call_.pool.data(), call_.pool.size());
  for (int i = 0; i < kSlots; ++i) {
    sdk::StatusOr<TensorValue> t = evalOperand(pool, *descs[i], symbols);
    if (!t.isOk()) return t.status().withContext(std::string("prims.sdpa ") + names[i]);
    vals[i] = std::move(*t);
  }
  const size_t r = vals[kQ].sizes.size(), nb = r - 2;
  const int64_t L = vals[kQ].sizes[r - 2], E = vals[kQ].sizes[r - 1], S = vals[kK].sizes[r - 2],
                Ev = vals[kV].sizes[r - 1];
  for (size_t d = 0; d < nb; ++d)
    for (int i : {kK, kV, kO, kLse})
      if (vals[i].sizes[d] != vals[kQ].sizes[d])
        return sdk::invalidArgument("prims.sdpa: batch dim " + std::to_string(d) + " of the " + names[i] +
                                    " is not the query's");
  if (vals[kK].sizes[r - 1] != E || vals[kV].sizes[r - 2] != S || vals[kO].sizes[r - 2] != L ||
      vals[kO].sizes[r - 1] != Ev || vals[kLse].sizes[r - 2] != L)
    return sdk::invalidArgument("prims.sdpa: operand sizes disagree (q [.., " + std::to_string(L) + ", " +
                                std::to_string(E) + "], k [.., " + std::to_string(S) + ", ..], v [.., .., " +
                                std::to_string(Ev) + "])");
  auto s = std::make_unique<Setup>();
  const dnn::Api& D = *dnn_->dnn;
  s->dnn = &D;
  if (vals[kO].numel() == 0 || S == 0) {
    if (vals[kO].numel() != 0 || vals[kLse].numel() != 0)
      return sdk::unimplemented("prims.sdpa over no keys (S = 0): the cuda plugin takes S >= 1");
    s->empty = true;
    const Setup* out = s.get();
    setups_.emplace(key, std::move(s));
    return out;
  }
  const uint32_t t = call_.q.dtype;
  const int64_t eb = static_cast<int64_t>(lowering::dtypeBytes(t));
  const int dnnType = t == PLUGSDK_DTYPE_F16 ? dnn::kHalf : dnn::kBfloat16;
  size_t scratch = 0;
  for (int i = 0; i < kSlots; ++i) {
    const Mapped m = mapTo4d(vals[i], i == kLse);
    Staged& g = s->s[i];
    g.dims = m.dims;
    g.offset = vals[i].offset;
    g.outerStrides = m.outerStrides;
    if (i == kQ) s->outer = m.outerSizes;
    const int64_t b = i == kLse ? 4 : eb;
    // In place: a unit last stride, rows and base 16-byte aligned, no negative strides; the
    // logsumexp packed.
    bool inPlace = args[kArg[i]] % 16 == 0 && (vals[i].offset * b) % 16 == 0;
    for (size_t d = 0; d < 4; ++d) {
      if (m.strides[d] < 0) inPlace = false;
      if (d < 3 && m.dims[d] > 1 && (m.strides[d] * b) % 16 != 0) inPlace = false;
    }
    if (m.strides[3] != 1) inPlace = false;
    if (i == kLse && m.strides != packed4(m.dims)) inPlace = false;
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
      sdk::Status e = D.check(D.createTensor(out), "prims.sdpa: cudnnCreateTensorDescriptor");
      if (e.isOk())
        e = D.check(D.setTensorNd(*out, i == kLse ? dnn::kFloat : dnnType, 4, dims, st),
                    std::string("prims.sdpa: describing the ") + names[i] + " for its copy");
      return e;
    };
    sdk::Status st = desc(&g.src, m.strides);
    if (st.isOk()) st = desc(&g.packed, g.strides);
    if (!st.isOk()) return st;
    g.tempBytes = roundUp(static_cast<size_t>(m.dims[0] * m.dims[1] * m.dims[2] * m.dims[3] * b));
  }
  dnn::SdpaSpec spec;
  spec.dataType = dnnType;
  spec.b = s->s[kQ].dims[0];
  spec.h = s->s[kQ].dims[1];
  spec.sq = L;
  spec.skv = S;
  spec.d = E;
  spec.dv = Ev;
  spec.q = s->s[kQ].strides;
  spec.k = s->s[kK].strides;
  spec.v = s->s[kV].strides;
  spec.o = s->s[kO].strides;
  spec.stats = s->s[kLse].strides;
  spec.scale = static_cast<float>(call_.scale ? *call_.scale : 1.0 / std::sqrt(static_cast<double>(E)));
  spec.causal = call_.causal;
  sdk::Status st = dnn_->ready();
  if (!st.isOk()) return st;
  sdk::StatusOr<std::unique_ptr<dnn::SdpaGraphPlan>> plan = dnn::SdpaGraphPlan::create(D, dnn_->handle, spec);
  if (!plan.isOk()) return plan.status().withContext("prims.sdpa");
  s->plan = std::move(*plan);
  s->workspace = roundUp(s->plan->workspaceBytes());
  scratch = s->workspace;
  for (Staged& g : s->s) {
    g.tempAt = scratch;
    scratch += g.tempBytes;
  }
  s->scratch = scratch;
  const Setup* out = s.get();
  setups_.emplace(key, std::move(s));
  return out;
}

sdk::Status SdpaExecutable::launch(const CUdeviceptr args[6], const std::vector<int64_t>& symbols, CUstream stream) {
  sdk::StatusOr<const Setup*> setup = setupFor(args, symbols);
  if (!setup.isOk()) return setup.status();
  const Setup& s = **setup;
  if (s.empty) return sdk::Status::ok();
  const dnn::Api& D = *dnn_->dnn;
  sdk::Status st = D.check(D.setStream(dnn_->handle, stream), "prims.sdpa: cudnnSetStream");
  if (!st.isOk()) return st;
  sdk::StatusOr<CUdeviceptr> scratch = dnn_->scratchOf(std::max<size_t>(s.scratch, 256));
  if (!scratch.isOk()) return scratch.status();
  const int64_t eb = static_cast<int64_t>(lowering::dtypeBytes(call_.q.dtype));
  const float one = 1, zero = 0;
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(p); };
  int64_t outerCount = 1;
  for (int64_t n : s.outer) outerCount *= n;
  std::vector<int64_t> idx(s.outer.size(), 0);
  for (int64_t n = 0; n < outerCount && st.isOk(); ++n) {
    CUdeviceptr at[kSlots], use[kSlots];
    for (int i = 0; i < kSlots; ++i) {
      const Staged& g = s.s[i];
      int64_t off = g.offset;
      for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * g.outerStrides[d];
      at[i] = args[kArg[i]] + static_cast<uint64_t>(off * (i == kLse ? 4 : eb));
      use[i] = g.copied() ? *scratch + g.tempAt : at[i];
    }
    for (int i : {kQ, kK, kV})
      if (st.isOk() && s.s[i].copied())
        st = D.check(D.transform(dnn_->handle, &one, s.s[i].src, ptr(at[i]), &zero, s.s[i].packed, ptr(use[i])),
                     "prims.sdpa: packing an operand");
    if (st.isOk())
      st = s.plan->execute(dnn_->handle, ptr(use[kQ]), ptr(use[kK]), ptr(use[kV]), ptr(use[kO]), ptr(use[kLse]),
                           nullptr, ptr(*scratch));
    for (int i : {kO, kLse})
      if (st.isOk() && s.s[i].copied())
        st = D.check(D.transform(dnn_->handle, &one, s.s[i].packed, ptr(use[i]), &zero, s.s[i].src, ptr(at[i])),
                     "prims.sdpa: writing a result in place");
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < s.outer[d]) break;
      idx[d] = 0;
    }
  }
  return st;
}

}  // namespace plugsdk::cuda
