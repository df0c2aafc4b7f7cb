// A library call's operand as the level_zero plugin keeps it: a copy of compile_library's
// borrowed descriptor (index expressions over the call's pool) and its values at a launch.
// Shared by the tiled matmul (matmul_call.h) and the implicit-GEMM convolution (conv_call.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugsdk/plugsdk.hpp"

namespace plugsdk::level_zero::library {

/// One operand's descriptor (its expressions index the call's pool).
struct OperandDesc {
  uint32_t dtype = 0;
  std::vector<plugsdk_index_expr_t> sizes, strides;
  plugsdk_index_expr_t offset{};
};

/// A copy of `d` (the expressions stay indices into the call's pool).
OperandDesc copyOperand(const plugsdk_tensor_desc_t& d);

/// An operand's sizes, strides and offset (elements) for one launch's symbol values.
struct OperandValues {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
};

/// `d` evaluated over `pool`; an error names `what` (e.g. "prims.matmul a") and the size,
/// stride or offset whose expression failed.
sdk::StatusOr<OperandValues> evalOperand(const std::string& what, const OperandDesc& d,
                                         sdk::Span<const plugsdk_index_insn_t> pool, const sdk::IndexEnv& env);

}  // namespace plugsdk::level_zero::library
