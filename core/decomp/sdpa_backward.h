// The attention backward as prims: what prims.sdpa_backward decomposes into on a device that
// does not take it whole, and what autograd emits itself for the cotangents prims.sdpa_backward
// does not give (the logsumexp's, a float mask's). One expansion for both, so the two cannot
// drift apart.
#pragma once

#include <vector>

#include "core/decomp/emitter.h"

namespace plugsdk::decomp {

struct SdpaBackwardArgs {
  V gradOut = nullptr;  ///< output 0's cotangent (nullptr: zero)
  V gradLse = nullptr;  ///< the logsumexp's cotangent (nullptr: zero)
  V q = nullptr, k = nullptr, v = nullptr;
  V out = nullptr, lse = nullptr;  ///< the forward's outputs
  V mask = nullptr;                ///< bool (true = attend) or additive; nullptr: none
  double dropout = 0;
  int64_t seed = 0;
  bool causal = false;
  const ir::Attribute* scale = nullptr;  ///< none or absent: 1 / sqrt(E)
  bool wantMaskGrad = false;             ///< also the scores' gradient dS (a float mask's, before summing)
};

/// {dq, dk, dv, dS}: the gradients in the inputs' dtypes, then the scores' gradient [..., L, S]
/// in the accumulation dtype (nullptr unless wantMaskGrad and a mask). UNIMPLEMENTED for a
/// symbolic E without an explicit scale (through e.decline when `declines`).
StatusOr<std::vector<V>> sdpaBackward(Emitter& e, const SdpaBackwardArgs& a, bool declines);

}  // namespace plugsdk::decomp
