// The flash-attention f32 module (see sdpa_spirv.h).
#include "backends/level_zero/library/sdpa_spirv.h"

#include <limits>

#include "backends/level_zero/library/tiled_kernel.h"

namespace plugsdk::level_zero::library {

sdk::StatusOr<std::vector<uint32_t>> flashAttentionModule(const std::string& entry, SdpaMask mask) {
  using Values = TiledKernel::Values;
  std::vector<KernelArg> params{
      {KernelArg::kF32Pointer, "q"}, {KernelArg::kF32Pointer, "k"}, {KernelArg::kF32Pointer, "v"}};
  if (mask != SdpaMask::kNone)
    params.push_back({mask == SdpaMask::kBool ? KernelArg::kU8Pointer : KernelArg::kF32Pointer, "mask"});
  params.push_back({KernelArg::kF32Pointer, "out"});
  params.push_back({KernelArg::kF32Pointer, "lse"});
  const size_t pointers = params.size();
  for (uint32_t i = 0; i < kSdpaScalars; ++i) params.push_back({KernelArg::kI64, "s" + std::to_string(i)});
  TiledKernel g(entry, {kSdpaKeys, kSdpaRows, 1}, params);
  constexpr uint32_t kW = kSdpaHeadDimMax, kChunks = kSdpaHeadDimMax / kSdpaKeys;
  const uint32_t tileQ = g.shared(kSdpaRows * kW, "tile_q"), tileK = g.shared(kSdpaKeys * kW, "tile_k"),
                 tileV = g.shared(kSdpaKeys * kW, "tile_v");
  const uint32_t tileS = g.shared(kSdpaRows * kSdpaKeys, "tile_s"), tileP = g.shared(kSdpaRows * kSdpaKeys, "tile_p");
  const uint32_t q = g.param(0), k = g.param(1), v = g.param(2);
  const uint32_t mk = mask != SdpaMask::kNone ? g.param(3) : 0;
  const uint32_t out = g.param(pointers - 2), lse = g.param(pointers - 1);
  uint32_t s[kSdpaScalars];
  for (uint32_t i = 0; i < kSdpaScalars; ++i) s[i] = g.param(pointers + i);
  auto add = [&](uint32_t a, uint32_t b) { return g.add(a, b); };
  auto mul = [&](uint32_t a, uint32_t b) { return g.mul(a, b); };
  auto lt = [&](uint32_t a, uint32_t b) { return g.lt(a, b); };
  auto both = [&](uint32_t a, uint32_t b) { return g.both(a, b); };
  auto either = [&](uint32_t a, uint32_t b) { return g.op(spv::Op::LogicalOr, g.bt, {a, b}); };
  const uint32_t negInf = g.cF(-std::numeric_limits<double>::infinity()), zeroF = g.cF(0), zeroI = g.cI(0);
  const uint32_t L = s[kSdpaL], S = s[kSdpaS], E = s[kSdpaE], Ev = s[kSdpaEv];
  const uint32_t lane = g.lx, i = g.ly, wI = g.cI(kW), keysI = g.cI(kSdpaKeys), rowsI = g.cI(kSdpaRows);
  const uint32_t block = add(s[kSdpaBlockBase], g.gx);
  const uint32_t row = add(mul(block, rowsI), i), rowOk = lt(row, L);
  // Where this work-group's batch element starts in an operand whose y and z strides are at `yz`.
  auto batch = [&](uint32_t yz) { return add(mul(g.gy, s[yz]), mul(g.gz, s[yz + 1])); };
  const uint32_t qAt = add(batch(kSdpaQ + 2), mul(row, s[kSdpaQ])), kAt = batch(kSdpaK + 2), vAt = batch(kSdpaV + 2),
                 oAt = add(batch(kSdpaO + 2), mul(row, s[kSdpaO])),
                 lseAt = add(batch(kSdpaLse + 1), mul(row, s[kSdpaLse])),
                 maskAt = add(batch(kSdpaMask + 2), mul(row, s[kSdpaMask]));
  const uint32_t scale = g.op(spv::Op::Bitcast, g.f32, {g.op(spv::Op::UConvert, g.u32, {s[kSdpaScaleBits]})});
  const uint32_t causal = g.op(spv::Op::INotEqual, g.bt, {s[kSdpaCausal], zeroI});
  // Row i of a tile of width kW (q's, k's, v's) and of the kSdpaKeys-wide score tiles.
  const uint32_t rowW = mul(i, wI), rowS = mul(i, keysI);

  // The lanes of row i load head dims lane, lane + kSdpaKeys, ... of `ptr`'s row at `base`
  // (`stride` apart) into row i of `tile` (`transposed`: column i, head dim e at e
  // kSdpaKeys + i); zeros past the edges, up to the next multiple of kSdpaKeys.
  auto stageRow = [&](uint32_t ok, uint32_t ptr, uint32_t base, uint32_t stride, uint32_t dims, uint32_t tile,
                      bool transposed = false) {
    g.loop(zeroI, dims, keysI, {}, [&](uint32_t e0, const Values&) {
      const uint32_t e = add(e0, lane);
      const uint32_t slot = transposed ? add(mul(e, keysI), i) : add(rowW, e);
      g.stage(both(ok, lt(e, dims)), ptr, add(base, mul(e, stride)), g.at(tile, slot));
      return Values{};
    });
  };
  stageRow(rowOk, q, qAt, s[kSdpaQ + 1], E, tileQ);
  // Keys past the block's last row are masked for every row when causal: stop there.
  const uint32_t blockEnd = mul(add(block, g.cI(1)), rowsI);
  const uint32_t keyEnd = g.select(both(causal, lt(blockEnd, S)), blockEnd, S);
  Values init{negInf, zeroF};
  for (uint32_t c = 0; c < kChunks; ++c) init.push_back(zeroF);
  const Values fin = g.loop(zeroI, keyEnd, keysI, init, [&](uint32_t k0, const Values& in) {
    const uint32_t key = add(k0, i), keyOk = lt(key, S);
    stageRow(keyOk, k, add(kAt, mul(key, s[kSdpaK])), s[kSdpaK + 1], E, tileK, true);
    stageRow(keyOk, v, add(vAt, mul(key, s[kSdpaV])), s[kSdpaV + 1], Ev, tileV);
    g.barrier();
    // Lane t scores key k0 + t for row i, kSdpaKeys head dims a step without a guard: the
    // tiles hold zeros from E up to the next multiple (0 * 0 adds nothing).
    const uint32_t dot = g.loop(zeroI, E, keysI, {zeroF}, [&](uint32_t e0, const Values& acc) {
      uint32_t sum = acc[0];
      for (uint32_t ee = 0; ee < kSdpaKeys; ++ee) {
        const uint32_t e = add(e0, g.cI(ee));
        sum = g.fadd(sum, g.fmul(g.loadShared(tileQ, add(rowW, e)), g.loadShared(tileK, add(mul(e, keysI), lane))));
      }
      return Values{sum};
    })[0];
    uint32_t score = g.fmul(dot, scale);
    const uint32_t j = add(k0, lane), jOk = lt(j, S);
    uint32_t dead =
        either(g.op(spv::Op::LogicalNot, g.bt, {jOk}), both(causal, g.op(spv::Op::SGreaterThan, g.bt, {j, row})));
    const uint32_t maskOk = both(rowOk, jOk), maskIndex = add(maskAt, mul(j, s[kSdpaMask + 1]));
    if (mask == SdpaMask::kBool)
      dead = either(dead, g.op(spv::Op::IEqual, g.bt, {g.loadU8OrZero(maskOk, mk, maskIndex), g.m.constInt(g.u8, 0)}));
    if (mask == SdpaMask::kFloat) score = g.fadd(score, g.loadOrZero(maskOk, mk, maskIndex));
    g.storeShared(tileS, add(rowS, lane), g.select(dead, negInf, score));
    g.barrier();
    // The row's new running max (fmax passes NaNs over: they reach the sum instead, below);
    // exp(score - max) for this lane's key, the old terms' factor.
    uint32_t mNew = in[0];
    for (uint32_t jj = 0; jj < kSdpaKeys; ++jj)
      mNew = g.ext(spv::OpenCLStd::fmax, {mNew, g.loadShared(tileS, add(rowS, g.cI(jj)))});
    // A row with every score so far -inf has no terms yet: exp(-inf - 0) = 0 keeps it so.
    const uint32_t base = g.select(g.op(spv::Op::FOrdEqual, g.bt, {mNew, negInf}), zeroF, mNew);
    const uint32_t alpha = g.ext(spv::OpenCLStd::exp, {g.op(spv::Op::FSub, g.f32, {in[0], base})});
    const uint32_t p =
        g.ext(spv::OpenCLStd::exp, {g.op(spv::Op::FSub, g.f32, {g.loadShared(tileS, add(rowS, lane)), base})});
    g.storeShared(tileP, add(rowS, lane), p);
    g.barrier();
    uint32_t ps[kSdpaKeys];
    uint32_t psum = zeroF;
    for (uint32_t jj = 0; jj < kSdpaKeys; ++jj) {
      ps[jj] = g.loadShared(tileP, add(rowS, g.cI(jj)));
      psum = g.fadd(psum, ps[jj]);
    }
    Values next{mNew, g.fadd(g.fmul(in[1], alpha), psum)};
    // Output columns lane + c kSdpaKeys: acc alpha + sum over the tile's keys of p v.
    for (uint32_t c = 0; c < kChunks; ++c) {
      const uint32_t col = add(lane, g.cI(c * kSdpaKeys));
      next.push_back(g.when(lt(g.cI(c * kSdpaKeys), Ev), {in[2 + c]}, [&] {
        uint32_t acc = g.fmul(in[2 + c], alpha);
        for (uint32_t jj = 0; jj < kSdpaKeys; ++jj)
          acc = g.fadd(acc, g.fmul(ps[jj], g.loadShared(tileV, add(g.cI(jj * kW), col))));
        return Values{acc};
      })[0]);
    }
    // The next step overwrites the tiles: every work-item must have read them.
    g.barrier();
    return next;
  });
  // A row whose every score was -inf (or with no keys) gives zeros and lse 0. A NaN score
  // made the sum NaN (exp(NaN - max)): its row is NaN, as the reference's, even when every
  // other score was -inf (the max then -inf too).
  const uint32_t empty = g.both(g.op(spv::Op::FOrdEqual, g.bt, {fin[0], negInf}),
                                g.op(spv::Op::LogicalNot, g.bt, {g.op(spv::Op::IsNan, g.bt, {fin[1]})}));
  for (uint32_t c = 0; c < kChunks; ++c) {
    const uint32_t col = add(lane, g.cI(c * kSdpaKeys));
    g.when(both(rowOk, lt(col, Ev)), {}, [&] {
      const uint32_t o = g.select(empty, zeroF, g.op(spv::Op::FDiv, g.f32, {fin[2 + c], fin[1]}));
      g.storeGlobal(out, add(oAt, mul(col, s[kSdpaO + 1])), o);
      return Values{};
    });
  }
  g.when(both(rowOk, g.op(spv::Op::IEqual, g.bt, {lane, zeroI})), {}, [&] {
    g.storeGlobal(lse, lseAt, g.select(empty, zeroF, g.fadd(fin[0], g.ext(spv::OpenCLStd::log, {fin[1]}))));
    return Values{};
  });
  return g.finish("the flash attention " + entry);
}

}  // namespace plugsdk::level_zero::library
