// Half-precision bits for the GPU probes (cudnn_sdpa_probe.cc, cudnn_sdpa_bwd_probe.cc): f16
// and bf16 to and from float, round to nearest even (finite inputs).
#pragma once

#include <cstdint>
#include <cstring>

namespace plugsdk::probes {

inline float fromBits(uint16_t h, bool bf16) {
  if (bf16) {
    uint32_t u = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  _Float16 x;
  std::memcpy(&x, &h, 2);
  return static_cast<float>(x);
}

inline uint16_t toBits(float f, bool bf16) {
  uint16_t h;
  if (bf16) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1);
    return static_cast<uint16_t>(u >> 16);
  }
  const _Float16 x = static_cast<_Float16>(f);
  std::memcpy(&h, &x, 2);
  return h;
}

}  // namespace plugsdk::probes
