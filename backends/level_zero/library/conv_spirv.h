// prims.convolution as an implicit GEMM in its own SPIR-V module (written with
// spirv/module.h, the tiled matmul's shape): per image and group, Y[oc, p] = sum over r of
// W[oc, r] X[r, p], where oc is an output channel of the group, p an output position (the
// spatial dims flattened) and r = (input channel of the group, kernel position) the
// reduction. The GEMM's columns are every image's output positions (image-major), so a
// small image (a weight gradient's 3 x 3, layer4's 2 x 2) still fills the tiles. One
// work-group of kTile x kTile work-items per kTile x kTile tile of Y (x: columns, y: output
// channels, z: group); r walked kTile at a time with W's and X's
// tiles staged in Workgroup memory between barriers, as the matmul's A and B. X's tile is
// the im2col gather done in the load (input position o * stride - padding + k * dilation,
// zeros outside the input): no columns are materialized. Each work-item decomposes the two
// reduction indices it stages (channel and kernel position) itself, every division a
// multiply and a shift (divide.h: dividends below 2^31); a Workgroup table of the stage's
// decompositions, written by one tile row behind a third barrier, was measured slower on
// PoCL. Spatial dims are 1 to 3, the missing ones unit dims in front. Any strides (index
// arithmetic), edges masked with no early return (PoCL 6.0 crashes on barriers behind one),
// products added in r order with no fused multiply-add (ContractionOff).
//
// The entry point's parameters: CrossWorkgroup float* x, w, y (offsets applied), then the
// i64 scalars of ConvScalar in order. The launch: LocalSize kTile x kTile x 1, groups
// ceil(columns / kTile) x ceil(OCg / kTile) x groups, split into launches of kMaxGroups
// along x and z (scalars kConvColBase, kConvZBase).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/level_zero/library/matmul_spirv.h"  // kTile
#include "backends/level_zero/library/tiled_kernel.h"  // kMaxGroups
#include "plugsdk/status.hpp"

namespace plugsdk::level_zero::library {

/// The convolution kernel's i64 parameters after its three pointers, in order. Spatial
/// values come three each (dims 0, 1, 2; a 2-d convolution's dim 0 is a unit dim).
enum ConvScalar : uint32_t {
  kConvOcg,                 ///< output channels per group (the GEMM's M)
  kConvCols,                ///< images x output positions (the GEMM's N)
  kConvP,                   ///< output positions per image
  kConvR,                   ///< the reduction: input channels per group x kernel positions
  kConvKs,                  ///< kernel positions (K0 K1 K2)
  kConvK1,                  ///< kernel size, dim 1
  kConvK2,                  ///< kernel size, dim 2
  kConvO1,                  ///< output size, dim 1
  kConvO2,                  ///< output size, dim 2
  kConvCg,                  ///< input channels per group
  kConvColBase,             ///< the column of this launch's first work-group (launches split past kMaxGroups)
  kConvZBase,               ///< the group of this launch's first work-group (likewise)
  kConvI0,                  ///< input size, dims 0-2
  kConvS0 = kConvI0 + 3,    ///< stride, dims 0-2
  kConvPad0 = kConvS0 + 3,  ///< padding (low side), dims 0-2
  kConvD0 = kConvPad0 + 3,  ///< dilation, dims 0-2
  kConvXN = kConvD0 + 3,    ///< x's strides: image, channel, dims 0-2
  kConvWO = kConvXN + 5,    ///< w's strides: output channel, input channel, dims 0-2
  kConvYN = kConvWO + 5,    ///< y's strides: image, channel, dims 0-2
  kConvDiv = kConvYN + 5,   ///< the divisors of ConvDivisor as (multiplier, shift) pairs (divide.h)
  kConvScalars = kConvDiv + 12,
};

/// The kernel's divisions, each by a launch-time value through a multiplier and a shift
/// (divide.h): a column by positions per image, an output position by O1 O2 and by O2, a
/// reduction index by kernel positions, by K1 K2 and by K2.
enum ConvDivisor : uint32_t { kDivP, kDivO12, kDivO2, kDivKs, kDivK12, kDivK2 };

/// The module (validated, not optimized) whose one entry point is `entry`.
sdk::StatusOr<std::vector<uint32_t>> implicitGemmConvModule(const std::string& entry);

}  // namespace plugsdk::level_zero::library
