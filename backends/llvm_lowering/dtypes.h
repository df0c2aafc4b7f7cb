// Dtype facts shared by the generated code and the backends' host-side code: which dtypes
// are floats, which widen as unsigned, their storage size, and the counter-based generator
// of prims.rand (generated code and library ops must produce the reference's bits).
#pragma once

#include <cstdint>

#include "plugsdk/plugsdk.h"

namespace plugsdk::lowering {

inline bool isFloatDtype(uint32_t d) { return d >= PLUGSDK_DTYPE_F16 && d <= PLUGSDK_DTYPE_F64; }
/// u8 and bool compare, divide and widen as unsigned.
inline bool isUnsignedDtype(uint32_t d) { return d == PLUGSDK_DTYPE_U8 || d == PLUGSDK_DTYPE_BOOL; }

/// The counter-based generator of prims.rand and sdpa's dropout (core/prims/scalar_ops.h):
/// generated code and the library ops must produce the same bits as the reference.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline uint32_t dtypeBytes(uint32_t d) {
  switch (d) {
    case PLUGSDK_DTYPE_BOOL:
    case PLUGSDK_DTYPE_U8:
    case PLUGSDK_DTYPE_I8: return 1;
    case PLUGSDK_DTYPE_I16:
    case PLUGSDK_DTYPE_F16:
    case PLUGSDK_DTYPE_BF16: return 2;
    case PLUGSDK_DTYPE_I32:
    case PLUGSDK_DTYPE_F32: return 4;
    default: return 8;
  }
}

}  // namespace plugsdk::lowering
