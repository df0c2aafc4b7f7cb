// The tiled matmul as its own SPIR-V module (written with spirv/module.h): C = A B over f32,
// one work-group of kTile x kTile work-items per kTile x kTile tile of C, K walked in steps of
// kTile with the tiles of A and B staged in Workgroup memory between two barriers. Any
// strides (index arithmetic, no packing), a batch dim as the third group id, edges masked
// (a work-item past M or N loads zeros and stores nothing; no early return: PoCL 6.0 crashes
// running barriers behind one). Products accumulate in k order with no fused multiply-add
// (ContractionOff), as the loop kernels the core would otherwise generate.
//
// The entry point's parameters, in order: CrossWorkgroup float* a, b, c (offsets applied),
// then i64 m, n, k, a's row and k strides, b's k and column strides, c's row and column
// strides, and a's, b's, c's batch strides (elements). The launch: LocalSize kTile x kTile x 1,
// groups ceil(N / kTile) x ceil(M / kTile) x batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugsdk/status.hpp"

namespace plugsdk::level_zero::library {

constexpr uint32_t kTile = 16;
/// The i64 parameters after the three pointers.
constexpr uint32_t kMatmulScalars = 12;

/// The module (validated, not optimized) whose one entry point is `entry`.
sdk::StatusOr<std::vector<uint32_t>> tiledMatmulModule(const std::string& entry);

}  // namespace plugsdk::level_zero::library
