// The implicit-GEMM f32 convolution module (see conv_spirv.h).
#include "backends/level_zero/library/conv_spirv.h"

#include "backends/level_zero/library/tiled_kernel.h"

namespace plugsdk::level_zero::library {

sdk::StatusOr<std::vector<uint32_t>> implicitGemmConvModule(const std::string& entry) {
  std::vector<KernelArg> params{
      {KernelArg::kF32Pointer, "x"}, {KernelArg::kF32Pointer, "w"}, {KernelArg::kF32Pointer, "y"}};
  for (uint32_t i = 0; i < kConvScalars; ++i) params.push_back({KernelArg::kI64, "s" + std::to_string(i)});
  TiledKernel g(entry, {kTile, kTile, 1}, params);
  const uint32_t tileW = g.shared(kTile * kTile, "tile_w"), tileX = g.shared(kTile * kTile, "tile_x");
  const uint32_t x = g.param(0), w = g.param(1), y = g.param(2);
  uint32_t s[kConvScalars];
  for (uint32_t i = 0; i < kConvScalars; ++i) s[i] = g.param(3 + i);
  auto add = [&](uint32_t a, uint32_t b) { return g.add(a, b); };
  auto sub = [&](uint32_t a, uint32_t b) { return g.sub(a, b); };
  auto mul = [&](uint32_t a, uint32_t b) { return g.mul(a, b); };
  auto lt = [&](uint32_t a, uint32_t b) { return g.lt(a, b); };
  auto both = [&](uint32_t a, uint32_t b) { return g.both(a, b); };
  // n / d as (n * multiplier) >> shift, the pair of scalars for divisor d (divide.h).
  auto div = [&](uint32_t n, ConvDivisor d) {
    return g.op(spv::Op::ShiftRightLogical, g.i64, {mul(n, s[kConvDiv + 2 * d]), s[kConvDiv + 2 * d + 1]});
  };
  const uint32_t lx = g.lx, ly = g.ly, zeroI = g.cI(0), tileI = g.cI(kTile);

  const uint32_t col = add(s[kConvColBase], add(mul(g.gx, tileI), lx));  // image x positions + position
  const uint32_t row = add(mul(g.gy, tileI), ly);                        // output channel in the group
  const uint32_t colOk = lt(col, s[kConvCols]), rowOk = lt(row, s[kConvOcg]);
  const uint32_t group = add(s[kConvZBase], g.gz);
  const uint32_t image = div(col, kDivP), p = sub(col, mul(image, s[kConvP]));
  // This work-item's output position (o0, o1, o2) and where its window starts in the input.
  const uint32_t o12 = mul(s[kConvO1], s[kConvO2]);
  const uint32_t o0 = div(p, kDivO12), rest = sub(p, mul(o0, o12));
  const uint32_t o1 = div(rest, kDivO2), o2 = sub(rest, mul(o1, s[kConvO2]));
  const uint32_t o[3] = {o0, o1, o2};
  uint32_t from[3];
  uint32_t xPos = add(mul(image, s[kConvXN]), mul(mul(group, s[kConvCg]), s[kConvXN + 1]));
  for (int d = 0; d < 3; ++d) {
    from[d] = sub(mul(o[d], s[kConvS0 + d]), s[kConvPad0 + d]);
    xPos = add(xPos, mul(from[d], s[kConvXN + 2 + d]));
  }
  const uint32_t oc = add(mul(group, s[kConvOcg]), row);
  const uint32_t wRow = mul(oc, s[kConvWO]);
  uint32_t yAt = add(mul(image, s[kConvYN]), mul(oc, s[kConvYN + 1]));
  for (int d = 0; d < 3; ++d) yAt = add(yAt, mul(o[d], s[kConvYN + 2 + d]));
  const uint32_t k12 = mul(s[kConvK1], s[kConvK2]);

  struct Decomposed {
    uint32_t wOff, xOff, kd[3];
  };
  auto decompose = [&](uint32_t r) {
    Decomposed out;
    const uint32_t c = div(r, kDivKs), kp = sub(r, mul(c, s[kConvKs]));
    const uint32_t k0 = div(kp, kDivK12), kr = sub(kp, mul(k0, k12));
    const uint32_t k1 = div(kr, kDivK2), k2 = sub(kr, mul(k1, s[kConvK2]));
    const uint32_t k[3] = {k0, k1, k2};
    out.wOff = mul(c, s[kConvWO + 1]);
    out.xOff = mul(c, s[kConvXN + 1]);
    for (int d = 0; d < 3; ++d) {
      out.kd[d] = mul(k[d], s[kConvD0 + d]);
      out.wOff = add(out.wOff, mul(k[d], s[kConvWO + 2 + d]));
      out.xOff = add(out.xOff, mul(out.kd[d], s[kConvXN + 2 + d]));
    }
    return out;
  };
  const TiledKernel::Values acc =
      g.loop(zeroI, s[kConvR], tileI, {g.cF(0)}, [&](uint32_t t, const TiledKernel::Values& in) {
        const Decomposed dw = decompose(add(t, lx)), dx = decompose(add(t, ly));
        // Stage W[oc, t + lx] and X's im2col element (t + ly, p); zeros past the edges, in the
        // padding and past the input. Tile addresses are computed where they are used: a value
        // live across a barrier costs PoCL a per-work-item context array (measured: the 32 read
        // addresses of the first version were 32 such arrays, stored once and loaded at every
        // stage).
        const uint32_t mine = add(mul(ly, tileI), lx);  // this work-item's slot in both tiles
        g.stage(both(rowOk, lt(add(t, lx), s[kConvR])), w, add(wRow, dw.wOff), g.at(tileW, mine));
        uint32_t xOk = both(colOk, lt(add(t, ly), s[kConvR]));
        for (int d = 0; d < 3; ++d) {
          const uint32_t i = add(from[d], dx.kd[d]);
          xOk = both(xOk, both(g.op(spv::Op::SGreaterThanEqual, g.bt, {i, zeroI}), lt(i, s[kConvI0 + d])));
        }
        g.stage(xOk, x, add(xPos, dx.xOff), g.at(tileX, mine));
        g.barrier();
        uint32_t sum = in[0];
        const uint32_t rowStart = mul(ly, tileI);  // row ly of W's tile, column lx of X's
        for (uint32_t kk = 0; kk < kTile; ++kk)
          sum = g.fadd(sum, g.fmul(g.loadShared(tileW, add(rowStart, g.cI(kk))),
                                   g.loadShared(tileX, add(g.cI(kk * kTile), lx))));
        // The next stage overwrites the tiles: every work-item must have read them.
        g.barrier();
        return TiledKernel::Values{sum};
      });
  g.when(both(rowOk, colOk), {}, [&] {
    g.storeGlobal(y, yAt, acc[0]);
    return TiledKernel::Values{};
  });
  return g.finish("the implicit-GEMM convolution " + entry);
}

}  // namespace plugsdk::level_zero::library
