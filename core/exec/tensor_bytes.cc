// Element encodings: f16 through its bit pattern after rounding, bf16 as the upper half of
// the (exactly representable) f32, integers truncated to their width.
#include "core/exec/tensor_bytes.h"

#include <cmath>
#include <cstring>

namespace plugsdk::exec {
namespace {

uint16_t halfBits(double v) {
  // Round to f16 first (exact in float), then encode.
  const auto f = static_cast<float>(roundToFloatType(v, DType::kF16));
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {  // subnormal (the value is already a representable f16)
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    return static_cast<uint16_t>(sign | (mant >> (14 - e)));
  }
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13));
}

double halfValue(uint16_t h) {
  const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0)
    v = std::ldexp(static_cast<double>(mant), -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<double>(mant | 0x400), exp - 25);
  return sign ? -v : v;
}

uint16_t bfloatBits(double v) {
  const auto f = static_cast<float>(roundToFloatType(v, DType::kBF16));
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f)) x |= 0x400000u;  // keep a NaN a NaN after truncation
  return static_cast<uint16_t>(x >> 16);
}

double bfloatValue(uint16_t h) {
  const uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

template <typename T>
void put(char* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}
template <typename T>
T get(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

void encodeElements(const HostTensor& t, void* dst) {
  char* p = static_cast<char*>(dst);
  const auto size = static_cast<size_t>(ir::dtypeSize(t.dtype()));
  for (int64_t i = 0; i < t.numel(); ++i, p += size) {
    switch (t.dtype()) {
      case DType::kF64: put(p, t.getDouble(i)); break;
      case DType::kF32: put(p, static_cast<float>(t.getDouble(i))); break;
      case DType::kF16: put(p, halfBits(t.getDouble(i))); break;
      case DType::kBF16: put(p, bfloatBits(t.getDouble(i))); break;
      case DType::kI64: put(p, t.getInt(i)); break;
      case DType::kI32: put(p, static_cast<int32_t>(t.getInt(i))); break;
      case DType::kI16: put(p, static_cast<int16_t>(t.getInt(i))); break;
      case DType::kI8:
      case DType::kU8:
      case DType::kBool: put(p, static_cast<uint8_t>(t.getInt(i))); break;
    }
  }
}

HostTensor decodeElements(DType dtype, const std::vector<int64_t>& shape, const void* src) {
  HostTensor t(dtype, shape);
  const char* p = static_cast<const char*>(src);
  const auto size = static_cast<size_t>(ir::dtypeSize(dtype));
  for (int64_t i = 0; i < t.numel(); ++i, p += size) {
    switch (dtype) {
      case DType::kF64: t.setDouble(i, get<double>(p)); break;
      case DType::kF32: t.setDouble(i, get<float>(p)); break;
      case DType::kF16: t.setDouble(i, halfValue(get<uint16_t>(p))); break;
      case DType::kBF16: t.setDouble(i, bfloatValue(get<uint16_t>(p))); break;
      case DType::kI64: t.setInt(i, get<int64_t>(p)); break;
      case DType::kI32: t.setInt(i, get<int32_t>(p)); break;
      case DType::kI16: t.setInt(i, get<int16_t>(p)); break;
      case DType::kI8: t.setInt(i, get<int8_t>(p)); break;
      case DType::kU8:
      case DType::kBool: t.setInt(i, get<uint8_t>(p)); break;
    }
  }
  return t;
}

}  // namespace plugsdk::exec
