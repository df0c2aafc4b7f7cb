// Element access for the library ops' strided operands: loads and stores of every dtype
// through float / double / int64, with the kernel IR's conversion rules (f16 and bf16
// rounded to nearest even, NaN kept; integers wrapped to their width), and a strided view
// of a tensor descriptor evaluated at launch.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/llvm_lowering/dtypes.h"
#include "plugsdk/plugsdk.h"

namespace plugsdk::cpu {

inline float bf16ToF32(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t f32ToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (f != f) return 0x7fc0;
  return static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

inline float f16ToF32(uint16_t h) {
  _Float16 x;
  std::memcpy(&x, &h, 2);
  return static_cast<float>(x);
}

inline uint16_t f32ToF16(float f) {
  const _Float16 x = static_cast<_Float16>(f);
  uint16_t h;
  std::memcpy(&h, &x, 2);
  return h;
}

using lowering::dtypeBytes;
using lowering::isFloatDtype;
using lowering::isUnsignedDtype;
using lowering::splitmix64;

/// Element i of `base` (dtype d) as a double (integers converted exactly up to 2^53).
inline double loadDouble(const uint8_t* base, uint32_t d, int64_t i) {
  const uint8_t* p = base + i * static_cast<int64_t>(dtypeBytes(d));
  switch (d) {
    case PLUGSDK_DTYPE_F64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case PLUGSDK_DTYPE_F32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case PLUGSDK_DTYPE_F16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return f16ToF32(v);
    }
    case PLUGSDK_DTYPE_BF16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return bf16ToF32(v);
    }
    case PLUGSDK_DTYPE_BOOL: return *p != 0;
    case PLUGSDK_DTYPE_U8: return *p;
    case PLUGSDK_DTYPE_I8: return static_cast<int8_t>(*p);
    case PLUGSDK_DTYPE_I16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case PLUGSDK_DTYPE_I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
  }
}

/// Element i of an integer (or bool) buffer as an int64.
inline int64_t loadInt(const uint8_t* base, uint32_t d, int64_t i) {
  const uint8_t* p = base + i * static_cast<int64_t>(dtypeBytes(d));
  switch (d) {
    case PLUGSDK_DTYPE_BOOL: return *p != 0;
    case PLUGSDK_DTYPE_U8: return *p;
    case PLUGSDK_DTYPE_I8: return static_cast<int8_t>(*p);
    case PLUGSDK_DTYPE_I16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case PLUGSDK_DTYPE_I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

/// Stores a floating value into a floating buffer (rounded to its dtype).
inline void storeDouble(uint8_t* base, uint32_t d, int64_t i, double v) {
  uint8_t* p = base + i * static_cast<int64_t>(dtypeBytes(d));
  switch (d) {
    case PLUGSDK_DTYPE_F64: std::memcpy(p, &v, 8); return;
    case PLUGSDK_DTYPE_F32: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      return;
    }
    case PLUGSDK_DTYPE_F16: {
      const uint16_t h = f32ToF16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return;
    }
    case PLUGSDK_DTYPE_BF16: {
      const uint16_t h = f32ToBf16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return;
    }
    default: return;
  }
}

/// Stores an integer into an integer buffer (its low bits: two's complement wrapping).
inline void storeInt(uint8_t* base, uint32_t d, int64_t i, int64_t v) {
  uint8_t* p = base + i * static_cast<int64_t>(dtypeBytes(d));
  switch (d) {
    case PLUGSDK_DTYPE_BOOL: *p = v != 0; return;
    case PLUGSDK_DTYPE_U8:
    case PLUGSDK_DTYPE_I8: *p = static_cast<uint8_t>(v); return;
    case PLUGSDK_DTYPE_I16: {
      const auto x = static_cast<int16_t>(v);
      std::memcpy(p, &x, 2);
      return;
    }
    case PLUGSDK_DTYPE_I32: {
      const auto x = static_cast<int32_t>(v);
      std::memcpy(p, &x, 4);
      return;
    }
    default: std::memcpy(p, &v, 8); return;
  }
}

/// A tensor operand at launch: its buffer (element 0 of the launch offset), dtype, shape,
/// strides and element offset.
struct TensorRef {
  uint8_t* base = nullptr;
  uint32_t dtype = 0;
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
  /// Whether it is row-major contiguous (size-1 dims may have any stride).
  bool contiguous() const {
    int64_t want = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      if (shape[d] != 1 && strides[d] != want) return false;
      want *= shape[d];
    }
    return true;
  }
};

}  // namespace plugsdk::cpu
