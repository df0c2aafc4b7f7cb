// prims.sdpa as a flash-attention SPIR-V module (written with tiled_kernel.h): out =
// softmax(scale q k^T + mask) v and each row's logsumexp, over f32, without the L x S scores
// ever written. One work-group of kSdpaKeys x kSdpaRows work-items per kSdpaRows query rows
// (y: the row in the block, x: a lane), the query block staged once in Workgroup memory;
// the keys walked kSdpaKeys at a time, each step staging K's tile (transposed: lane t's
// score reads K[t][e] at e kSdpaKeys + t, consecutive across the lanes) and V's (the lanes
// of a row load one key's head dims), then lane t scores key t of its row (a dot over E
// from the tiles), the row's scores meet in a Workgroup tile, every lane of the row takes
// their max into the running max (an online softmax: the running sum and the lane's output
// columns rescaled by exp(old max - new max)), lane t writes exp(score - max) to a second
// tile, and each lane adds P V for its output columns t, t + kSdpaKeys, ... (at most
// kSdpaHeadDimMax / kSdpaKeys accumulators, those past Ev skipped by a uniform branch).
// Four barriers a step; no early return (PoCL 6.0 crashes on barriers behind one). A causal
// call stops at the block's last row's diagonal (top-left aligned: key j is seen by row i
// when j <= i). Masks: a key past S, a causal j > i and a bool mask's false give -inf
// scores; a float mask is added to the scaled score. A row whose scores are all -inf (S = 0
// too) gives zeros and lse 0. The max is OpenCL's fmax, which passes NaNs over (measured on
// PoCL: a NaN-propagating max of selects made the whole kernel 3x slower): a NaN score
// reaches the row through its exp in the sum instead, so the row is NaN as the reference's,
// also when every other score is -inf. Products add in order with no fused multiply-add
// (ContractionOff).
//
// The entry point's parameters: CrossWorkgroup float* q, k, v, then the mask (u8* for bool,
// float* for float; none without), float* out, lse (offsets applied), then the i64 scalars of
// SdpaScalar in order. The launch: LocalSize kSdpaKeys x kSdpaRows x 1, groups (query blocks)
// x (batch dim y) x (batch dim z), split past kMaxGroups along x (kSdpaBlockBase).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugsdk/status.hpp"

namespace plugsdk::level_zero::library {

constexpr uint32_t kSdpaRows = 16;         ///< query rows a work-group
constexpr uint32_t kSdpaKeys = 16;         ///< keys a step, and lanes a row
constexpr uint32_t kSdpaHeadDimMax = 128;  ///< E and Ev at most (the tiles' width)

/// The attention kernel's i64 parameters after its pointers, in order. Strides are elements;
/// y and z are the two batch dims the groups' y and z walk (0 for none).
enum SdpaScalar : uint32_t {
  kSdpaL,                    ///< query rows
  kSdpaS,                    ///< keys
  kSdpaE,                    ///< head dim of q and k
  kSdpaEv,                   ///< head dim of v and the result
  kSdpaCausal,               ///< 1: is_causal
  kSdpaScaleBits,            ///< the scale's f32 bits (the low 32)
  kSdpaBlockBase,            ///< the query block of this launch's first work-group
  kSdpaQ,                    ///< q's strides: row, head dim, y, z
  kSdpaK = kSdpaQ + 4,       ///< k's: key, head dim, y, z
  kSdpaV = kSdpaK + 4,       ///< v's: key, head dim, y, z
  kSdpaO = kSdpaV + 4,       ///< the result's: row, head dim, y, z
  kSdpaLse = kSdpaO + 4,     ///< lse's: row, y, z
  kSdpaMask = kSdpaLse + 3,  ///< the mask's: row, key, y, z (0 without one)
  kSdpaScalars = kSdpaMask + 4,
};

enum class SdpaMask { kNone, kBool, kFloat };

/// The module (validated, not optimized) whose one entry point is `entry`.
sdk::StatusOr<std::vector<uint32_t>> flashAttentionModule(const std::string& entry, SdpaMask mask);

}  // namespace plugsdk::level_zero::library
