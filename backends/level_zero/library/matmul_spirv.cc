// The tiled f32 matmul module (see matmul_spirv.h).
#include "backends/level_zero/library/matmul_spirv.h"

#include "backends/level_zero/library/tiled_kernel.h"

namespace plugsdk::level_zero::library {

sdk::StatusOr<std::vector<uint32_t>> tiledMatmulModule(const std::string& entry) {
  const char* names[kMatmulScalars] = {"m",   "n",   "k",   "a_m",     "a_k",     "b_k",
                                       "b_n", "c_m", "c_n", "a_batch", "b_batch", "c_batch"};
  std::vector<KernelArg> params{
      {KernelArg::kF32Pointer, "a"}, {KernelArg::kF32Pointer, "b"}, {KernelArg::kF32Pointer, "c"}};
  for (const char* n : names) params.push_back({KernelArg::kI64, n});
  TiledKernel w(entry, {kTile, kTile, 1}, params);
  const uint32_t tileA = w.shared(kTile * kTile, "tile_a"), tileB = w.shared(kTile * kTile, "tile_b");
  const uint32_t a = w.param(0), b = w.param(1), c = w.param(2);
  uint32_t s[kMatmulScalars];
  for (uint32_t i = 0; i < kMatmulScalars; ++i) s[i] = w.param(3 + i);
  const uint32_t M = s[0], N = s[1], K = s[2], aM = s[3], aK = s[4], bK = s[5], bN = s[6], cM = s[7], cN = s[8],
                 aZ = s[9], bZ = s[10], cZ = s[11];
  const uint32_t lx = w.lx, ly = w.ly, gz = w.gz, tileI = w.cI(kTile);

  const uint32_t col = w.add(w.mul(w.gx, tileI), lx), row = w.add(w.mul(w.gy, tileI), ly);
  const uint32_t rowOk = w.lt(row, M), colOk = w.lt(col, N);
  const uint32_t baseA = w.add(w.mul(gz, aZ), w.mul(row, aM)), baseB = w.add(w.mul(gz, bZ), w.mul(col, bN));
  const uint32_t mine = w.add(w.mul(ly, tileI), lx);  // this work-item's slot in both tiles
  const uint32_t myA = w.at(tileA, mine), myB = w.at(tileB, mine);
  // Each tile's read addresses: row ly of A's tile, column lx of B's.
  std::vector<uint32_t> rowA, colB;
  for (uint32_t kk = 0; kk < kTile; ++kk) {
    rowA.push_back(w.at(tileA, w.add(w.mul(ly, tileI), w.cI(kk))));
    colB.push_back(w.at(tileB, w.add(w.cI(kk * kTile), lx)));
  }

  const TiledKernel::Values acc = w.loop(w.cI(0), K, tileI, {w.cF(0)}, [&](uint32_t t, const TiledKernel::Values& in) {
    // Stage: A[row, t + lx] and B[t + ly, col], zeros past the edges (the address clamped to
    // the operand's first element, which exists: M, N, K > 0 when anything is launched).
    const uint32_t ka = w.add(t, lx), kb = w.add(t, ly);
    w.stage(w.both(rowOk, w.lt(ka, K)), a, w.add(baseA, w.mul(ka, aK)), myA);
    w.stage(w.both(colOk, w.lt(kb, K)), b, w.add(baseB, w.mul(kb, bK)), myB);
    w.barrier();
    uint32_t sum = in[0];
    for (uint32_t kk = 0; kk < kTile; ++kk)
      sum = w.fadd(sum, w.fmul(w.op(spv::Op::Load, w.f32, {rowA[kk]}), w.op(spv::Op::Load, w.f32, {colB[kk]})));
    // The next stage overwrites the tiles: every work-item must have read them first.
    w.barrier();
    return TiledKernel::Values{sum};
  });
  w.when(w.both(rowOk, colOk), {}, [&] {
    w.storeGlobal(c, w.add(w.add(w.mul(gz, cZ), w.mul(row, cM)), w.mul(col, cN)), acc[0]);
    return TiledKernel::Values{};
  });
  return w.finish("the tiled matmul " + entry);
}

}  // namespace plugsdk::level_zero::library
