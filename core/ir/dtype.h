// Element types of the graph IR and PyTorch's type-promotion rules over them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace plugsdk::ir {

enum class DType : uint8_t { kBool, kU8, kI8, kI16, kI32, kI64, kF16, kBF16, kF32, kF64 };
inline constexpr int kNumDTypes = 10;

/// Short text name: bool u8 i8 i16 i32 i64 f16 bf16 f32 f64.
std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);

int dtypeSize(DType t);  ///< bytes per element
inline bool isFloating(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kF64;
}
inline bool isIntegral(DType t, bool includeBool) { return t == DType::kBool ? includeBool : !isFloating(t); }
inline bool isSigned(DType t) { return t != DType::kBool && t != DType::kU8; }

/// torch.promote_types(a, b).
DType promoteTypes(DType a, DType b);

/// Category used by PyTorch's result_type: bool < integral < floating.
enum class TypeCategory : uint8_t { kBool = 0, kIntegral = 1, kFloating = 2 };
inline TypeCategory categoryOf(DType t) {
  return t == DType::kBool ? TypeCategory::kBool : isFloating(t) ? TypeCategory::kFloating : TypeCategory::kIntegral;
}

/// The default floating dtype (torch.get_default_dtype() == float32).
inline constexpr DType kDefaultFloat = DType::kF32;

}  // namespace plugsdk::ir
