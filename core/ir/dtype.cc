// DType names, sizes and torch.promote_types.
#include "core/ir/dtype.h"

namespace plugsdk::ir {

namespace {
constexpr std::string_view kNames[kNumDTypes] = {"bool", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"};
constexpr int kSizes[kNumDTypes] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
}  // namespace

std::string_view dtypeName(DType t) { return kNames[static_cast<int>(t)]; }
int dtypeSize(DType t) { return kSizes[static_cast<int>(t)]; }

std::optional<DType> parseDType(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kNames[i] == name) return static_cast<DType>(i);
  return std::nullopt;
}

DType promoteTypes(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  bool fa = isFloating(a), fb = isFloating(b);
  if (fa != fb) return fa ? a : b;
  if (fa) {  // both floating
    // f16 + bf16 -> f32; otherwise the wider one.
    if ((a == DType::kF16 && b == DType::kBF16) || (a == DType::kBF16 && b == DType::kF16)) return DType::kF32;
    return dtypeSize(a) >= dtypeSize(b) ? a : b;
  }
  // both integral (not bool)
  if (a == DType::kU8 || b == DType::kU8) {
    DType other = a == DType::kU8 ? b : a;
    // u8 with i8 -> i16; with wider signed -> that type.
    return other == DType::kI8 ? DType::kI16 : other;
  }
  return dtypeSize(a) >= dtypeSize(b) ? a : b;
}

}  // namespace plugsdk::ir
