// Division by a value known at launch without a divide instruction: the host gives the
// kernel a multiplier and a shift, and the kernel computes (n * multiplier) >> shift. Integer
// division is slow where kernels run: PoCL's work-item loops turn an i64 divide into a
// scalar call per work-item (measured: three per work-item made a convolution of 16384
// work-groups 4x slower), and Intel GPUs have no integer divider.
#pragma once

#include <cstdint>

namespace plugsdk::level_zero::library {

/// Dividends must stay below this (and divisors in [1, kMagicLimit)).
constexpr int64_t kMagicLimit = int64_t{1} << 31;

struct MagicDivisor {
  int64_t multiplier = 0, shift = 0;
};

/// For 1 <= d < 2^31: (n * multiplier) >> shift == n / d for every 0 <= n < 2^31, and
/// n * multiplier < 2^63 (Granlund and Montgomery 1994, theorem 4.2 with N = 31: l =
/// ceil(log2 d), multiplier = floor(2^(31 + l) / d) + 1, shift = 31 + l).
inline MagicDivisor magicDivisor(int64_t d) {
  int64_t l = 0;
  while ((int64_t{1} << l) < d) ++l;
  const unsigned __int128 top = static_cast<unsigned __int128>(1) << (31 + l);
  return {static_cast<int64_t>(top / static_cast<unsigned __int128>(d)) + 1, 31 + l};
}

/// What the kernel computes.
inline int64_t magicDivide(int64_t n, const MagicDivisor& m) {
  return static_cast<int64_t>(static_cast<uint64_t>(n) * static_cast<uint64_t>(m.multiplier) >>
                              static_cast<uint64_t>(m.shift));
}

}  // namespace plugsdk::level_zero::library
