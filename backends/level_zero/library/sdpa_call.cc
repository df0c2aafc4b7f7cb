// The attention call's copy and its launches (sdpa_call.h).
#include "backends/level_zero/library/sdpa_call.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "backends/level_zero/library/tiled_kernel.h"  // kMaxGroups
#include "plugsdk/library_attributes.hpp"

namespace plugsdk::level_zero::library {

sdk::StatusOr<SdpaCall> SdpaCall::from(const sdk::LibraryCall& c) {
  if (c.inputs.size() != 4 || c.outputs.size() != 2)
    return sdk::invalidArgument("prims.sdpa takes 4 inputs and 2 outputs, not " + std::to_string(c.inputs.size()) +
                                " and " + std::to_string(c.outputs.size()));
  SdpaCall v;
  v.pool.assign(c.indexPool.begin(), c.indexPool.end());
  v.q = copyOperand(c.inputs[0]);
  v.k = copyOperand(c.inputs[1]);
  v.v = copyOperand(c.inputs[2]);
  v.out = copyOperand(c.outputs[0]);
  v.lse = copyOperand(c.outputs[1]);
  for (const OperandDesc* o : {&v.q, &v.k, &v.v, &v.out, &v.lse})
    if (o->dtype != PLUGSDK_DTYPE_F32)
      return sdk::unimplemented("the level_zero plugin's prims.sdpa takes f32 only (dtype " + std::to_string(o->dtype) +
                                "; device_info.sdpa_dtypes says so)");
  if (c.inputs[3].dtype != UINT32_MAX) {
    v.mask = copyOperand(c.inputs[3]);
    if (v.mask.dtype != PLUGSDK_DTYPE_BOOL && v.mask.dtype != PLUGSDK_DTYPE_F32)
      return sdk::invalidArgument("prims.sdpa: an attn_mask of dtype " + std::to_string(v.mask.dtype) +
                                  " (bool or the query's)");
    v.maskKind = v.mask.dtype == PLUGSDK_DTYPE_BOOL ? SdpaMask::kBool : SdpaMask::kFloat;
  }
  const size_t r = v.q.sizes.size();
  if (r < 2 || v.k.sizes.size() != r || v.v.sizes.size() != r || v.out.sizes.size() != r ||
      v.lse.sizes.size() != r - 1 || (v.maskKind != SdpaMask::kNone && v.mask.sizes.size() != r))
    return sdk::invalidArgument("prims.sdpa operands of ranks " + std::to_string(r) + ", " +
                                std::to_string(v.k.sizes.size()) + ", " + std::to_string(v.v.sizes.size()) + " -> " +
                                std::to_string(v.out.sizes.size()) + ", " + std::to_string(v.lse.sizes.size()));
  sdk::StatusOr<sdk::LibraryAttributes> a = sdk::LibraryAttributes::parse(std::string(c.attributes));
  if (!a.isOk()) return a.status().withContext("prims.sdpa");
  sdk::StatusOr<double> p = a->getFloat("dropout_p");
  if (p.isOk() && *p > 0)
    return sdk::unimplemented("prims.sdpa with dropout (the level_zero plugin leaves it to the core: sdpa_skips)");
  sdk::StatusOr<bool> causal = a->getBool("is_causal");
  v.causal = causal.isOk() && *causal;
  if (!a->isNone("scale")) {
    sdk::StatusOr<double> s = a->getFloat("scale");
    if (!s.isOk()) return s.status().withContext("prims.sdpa");
    v.scale = *s;
  }
  return v;
}

sdk::StatusOr<std::vector<SdpaLaunch>> planSdpaLaunches(const SdpaCall& c, sdk::Span<const int64_t> symbols) {
  sdk::IndexEnv env;
  env.symbols = symbols;
  const sdk::Span<const plugsdk_index_insn_t> pool(c.pool.data(), c.pool.size());
  const bool masked = c.maskKind != SdpaMask::kNone;
  const OperandDesc* descs[kSdpaOps] = {&c.q, &c.k, &c.v, &c.mask, &c.out, &c.lse};
  const char* names[kSdpaOps] = {"query", "key", "value", "attn_mask", "result", "logsumexp"};
  OperandValues o[kSdpaOps];
  for (int i = 0; i < kSdpaOps; ++i) {
    if (i == kSdpaOpMask && !masked) continue;
    sdk::StatusOr<OperandValues> t = evalOperand(std::string("prims.sdpa ") + names[i], *descs[i], pool, env);
    if (!t.isOk()) return t.status();
    o[i] = std::move(*t);
  }
  const size_t r = o[kSdpaOpQ].sizes.size(), nb = r - 2;
  const int64_t L = o[kSdpaOpQ].sizes[r - 2], E = o[kSdpaOpQ].sizes[r - 1];
  const int64_t S = o[kSdpaOpK].sizes[r - 2], Ev = o[kSdpaOpV].sizes[r - 1];
  auto sizes = [&](std::initializer_list<int64_t> tail, const OperandValues& t) {
    std::vector<int64_t> want(o[kSdpaOpQ].sizes.begin(), o[kSdpaOpQ].sizes.begin() + static_cast<std::ptrdiff_t>(nb));
    want.insert(want.end(), tail);
    return want == t.sizes;
  };
  if (!sizes({S, E}, o[kSdpaOpK]) || !sizes({S, Ev}, o[kSdpaOpV]) || !sizes({L, Ev}, o[kSdpaOpOut]) ||
      !sizes({L}, o[kSdpaOpLse]) || (masked && !sizes({L, S}, o[kSdpaOpMask])))
    return sdk::invalidArgument("prims.sdpa: the operands' sizes disagree (query [.., " + std::to_string(L) + ", " +
                                std::to_string(E) + "], key [.., " + std::to_string(S) + ", " + std::to_string(E) +
                                "] and value [.., " + std::to_string(S) + ", " + std::to_string(Ev) +
                                "] expected, with equal batch dims)");
  if (E > kSdpaHeadDimMax || Ev > kSdpaHeadDimMax)
    return sdk::unimplemented("prims.sdpa with head dims " + std::to_string(E) + " and " + std::to_string(Ev) +
                              ": the level_zero plugin's kernel takes at most " + std::to_string(kSdpaHeadDimMax) +
                              " (device_info.sdpa_head_dim_max says so)");
  std::vector<SdpaLaunch> out;
  int64_t points = L;
  for (size_t d = 0; d < nb; ++d) points *= o[kSdpaOpQ].sizes[d];
  if (points <= 0) return out;
  // The groups' y and z: the innermost batch dims of at most kMaxGroups; the rest looped.
  int yz[2] = {-1, -1};
  std::vector<size_t> looped;
  for (size_t d = nb; d-- > 0;) {
    const int slot = yz[0] < 0 ? 0 : 1;
    if (yz[1] < 0 && o[kSdpaOpQ].sizes[d] <= static_cast<int64_t>(kMaxGroups))
      yz[slot] = static_cast<int>(d);
    else
      looped.insert(looped.begin(), d);
  }
  auto stride = [&](int op, int d) { return d < 0 || (op == kSdpaOpMask && !masked) ? 0 : o[op].strides[d]; };
  SdpaLaunch base;
  const float scale = static_cast<float>(c.scale ? *c.scale : 1.0 / std::sqrt(static_cast<double>(E)));
  uint32_t bits = 0;
  std::memcpy(&bits, &scale, sizeof bits);
  base.scalars[kSdpaL] = L;
  base.scalars[kSdpaS] = S;
  base.scalars[kSdpaE] = E;
  base.scalars[kSdpaEv] = Ev;
  base.scalars[kSdpaCausal] = c.causal ? 1 : 0;
  base.scalars[kSdpaScaleBits] = bits;
  const int rowDim = static_cast<int>(r - 2), lastDim = static_cast<int>(r - 1);
  const struct {
    int op;
    uint32_t at;
  } four[] = {
      {kSdpaOpQ, kSdpaQ}, {kSdpaOpK, kSdpaK}, {kSdpaOpV, kSdpaV}, {kSdpaOpOut, kSdpaO}, {kSdpaOpMask, kSdpaMask}};
  for (const auto& f : four) {
    base.scalars[f.at] = stride(f.op, rowDim);
    base.scalars[f.at + 1] = stride(f.op, lastDim);
    base.scalars[f.at + 2] = stride(f.op, yz[0]);
    base.scalars[f.at + 3] = stride(f.op, yz[1]);
  }
  base.scalars[kSdpaLse] = stride(kSdpaOpLse, rowDim);
  base.scalars[kSdpaLse + 1] = stride(kSdpaOpLse, yz[0]);
  base.scalars[kSdpaLse + 2] = stride(kSdpaOpLse, yz[1]);
  base.groups[1] = yz[0] < 0 ? 1 : static_cast<uint64_t>(o[kSdpaOpQ].sizes[static_cast<size_t>(yz[0])]);
  base.groups[2] = yz[1] < 0 ? 1 : static_cast<uint64_t>(o[kSdpaOpQ].sizes[static_cast<size_t>(yz[1])]);
  const uint64_t blocks = static_cast<uint64_t>((L + kSdpaRows - 1) / kSdpaRows);
  std::vector<int64_t> at(looped.size(), 0);
  for (;;) {
    for (uint64_t first = 0; first < blocks; first += kMaxGroups) {
      SdpaLaunch l = base;
      for (int i = 0; i < kSdpaOps; ++i) {
        if (i == kSdpaOpMask && !masked) continue;
        l.offsets[i] = o[i].offset;
        for (size_t d = 0; d < looped.size(); ++d) l.offsets[i] += at[d] * o[i].strides[looped[d]];
      }
      l.groups[0] = std::min<uint64_t>(kMaxGroups, blocks - first);
      l.scalars[kSdpaBlockBase] = static_cast<int64_t>(first);
      out.push_back(l);
    }
    size_t d = looped.size();
    while (d > 0 && ++at[d - 1] == o[kSdpaOpQ].sizes[looped[d - 1]]) at[--d] = 0;
    if (d == 0) break;
  }
  return out;
}

}  // namespace plugsdk::level_zero::library
