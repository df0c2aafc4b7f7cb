// The implicit-GEMM f32 convolution module (see conv_spirv.h).
#include "backends/level_zero/library/conv_spirv.h"

#include "backends/level_zero/spirv/module.h"
#include "backends/level_zero/spirv/validate.h"

namespace plugsdk::level_zero::library {

using spirv::Module;

sdk::StatusOr<std::vector<uint32_t>> implicitGemmConvModule(const std::string& entry) {
  Module m;
  m.capability(spv::Capability::Addresses);
  m.capability(spv::Capability::Kernel);
  m.capability(spv::Capability::Int64);
  m.memoryModel(spv::AddressingModel::Physical64, spv::MemoryModel::OpenCL);
  const uint32_t i64 = m.typeInt(64), u32 = m.typeInt(32), f32 = m.typeFloat(32), bt = m.typeBool();
  const uint32_t gptr = m.typePointer(spv::StorageClass::CrossWorkgroup, f32);
  const uint32_t lptr = m.typePointer(spv::StorageClass::Workgroup, f32);
  std::vector<uint32_t> params{gptr, gptr, gptr};
  for (uint32_t i = 0; i < kConvScalars; ++i) params.push_back(i64);
  const uint32_t voidT = m.typeVoid();
  const uint32_t fnT = m.typeFunction(voidT, params);
  const uint32_t v3 = m.typeVector(i64, 3);
  auto builtin = [&](spv::BuiltIn b, const char* name) {
    const uint32_t v = m.globalVariable(m.typePointer(spv::StorageClass::Input, v3), spv::StorageClass::Input);
    m.decorate(v, spv::Decoration::BuiltIn, {static_cast<uint32_t>(b)});
    m.decorate(v, spv::Decoration::Constant);
    m.name(v, name);
    return v;
  };
  const uint32_t lidVar = builtin(spv::BuiltIn::LocalInvocationId, "local_id");
  const uint32_t widVar = builtin(spv::BuiltIn::WorkgroupId, "group_id");
  auto shared = [&](uint32_t element, uint32_t count, const char* name) {
    const uint32_t v = m.globalVariable(m.typePointer(spv::StorageClass::Workgroup, m.typeArray(element, count)),
                                        spv::StorageClass::Workgroup);
    m.name(v, name);
    return v;
  };
  const uint32_t tileW = shared(f32, kTile * kTile, "tile_w"), tileX = shared(f32, kTile * kTile, "tile_x");

  const uint32_t fn = m.beginFunction(voidT, fnT);
  m.name(fn, entry);
  const uint32_t x = m.parameter(gptr), w = m.parameter(gptr), y = m.parameter(gptr);
  m.name(x, "x");
  m.name(w, "w");
  m.name(y, "y");
  uint32_t s[kConvScalars];
  for (uint32_t i = 0; i < kConvScalars; ++i) {
    s[i] = m.parameter(i64);
    m.name(s[i], "s" + std::to_string(i));
  }
  m.entryPoint(spv::ExecutionModel::Kernel, fn, entry, {lidVar, widVar});
  m.executionMode(fn, spv::ExecutionMode::LocalSize, {kTile, kTile, 1});
  m.executionMode(fn, spv::ExecutionMode::ContractionOff);

  auto op = [&](spv::Op code, uint32_t type, std::initializer_list<uint32_t> xs) { return m.op(code, type, xs); };
  auto cI = [&](int64_t v) { return m.constInt(i64, static_cast<uint64_t>(v)); };
  auto add = [&](uint32_t a, uint32_t b) { return op(spv::Op::IAdd, i64, {a, b}); };
  auto sub = [&](uint32_t a, uint32_t b) { return op(spv::Op::ISub, i64, {a, b}); };
  auto mul = [&](uint32_t a, uint32_t b) { return op(spv::Op::IMul, i64, {a, b}); };
  // n / d as (n * multiplier) >> shift, the pair of scalars for divisor d (divide.h).
  auto div = [&](uint32_t n, ConvDivisor d) {
    return op(spv::Op::ShiftRightLogical, i64, {mul(n, s[kConvDiv + 2 * d]), s[kConvDiv + 2 * d + 1]});
  };
  auto lt = [&](uint32_t a, uint32_t b) { return op(spv::Op::SLessThan, bt, {a, b}); };
  auto both = [&](uint32_t a, uint32_t b) { return op(spv::Op::LogicalAnd, bt, {a, b}); };
  const uint32_t wg = m.constInt(u32, spv::kScopeWorkgroup);
  const uint32_t sem = m.constInt(u32, spv::kSemanticsGroupBarrier);
  const uint32_t zeroF = m.constFloat(f32, 0.0), zeroI = cI(0), tileI = cI(kTile);
  auto aligned = [](std::initializer_list<uint32_t> xs) {
    std::vector<uint32_t> v(xs);
    v.push_back(spv::kMemoryAccessAligned);
    v.push_back(4);
    return v;
  };
  auto at = [&](uint32_t type, uint32_t array, uint32_t index) {
    return op(spv::Op::AccessChain, type, {array, index});
  };
  auto barrier = [&] { m.emit(spv::Op::ControlBarrier, {wg, wg, sem}); };

  const uint32_t entryBlock = m.newId();
  m.label(entryBlock);
  const uint32_t lid = op(spv::Op::Load, v3, {lidVar}), wid = op(spv::Op::Load, v3, {widVar});
  const uint32_t lx = op(spv::Op::CompositeExtract, i64, {lid, 0}), ly = op(spv::Op::CompositeExtract, i64, {lid, 1});
  const uint32_t gx = op(spv::Op::CompositeExtract, i64, {wid, 0}), gy = op(spv::Op::CompositeExtract, i64, {wid, 1});
  const uint32_t gz = op(spv::Op::CompositeExtract, i64, {wid, 2});
  const uint32_t col = add(s[kConvColBase], add(mul(gx, tileI), lx));  // image x positions + position
  const uint32_t row = add(mul(gy, tileI), ly);                        // output channel in the group
  const uint32_t colOk = lt(col, s[kConvCols]), rowOk = lt(row, s[kConvOcg]);
  const uint32_t group = add(s[kConvZBase], gz);
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
  const uint32_t header = m.newId(), body = m.newId(), cont = m.newId(), merge = m.newId();
  const uint32_t t = m.newId(), acc = m.newId(), tNext = m.newId(), accNext = m.newId();
  m.emit(spv::Op::Branch, {header});
  m.label(header);
  m.emit(spv::Op::Phi, {i64, t, zeroI, entryBlock, tNext, cont});
  m.emit(spv::Op::Phi, {f32, acc, zeroF, entryBlock, accNext, cont});
  const uint32_t more = lt(t, s[kConvR]);
  m.emit(spv::Op::LoopMerge, {merge, cont, spv::kLoopControlNone});
  m.emit(spv::Op::BranchConditional, {more, body, merge});

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
  m.label(body);
  const Decomposed dw = decompose(add(t, lx)), dx = decompose(add(t, ly));
  // Stage W[oc, t + lx] and X's im2col element (t + ly, p); zeros past the edges, in the
  // padding and past the input (the address clamped to the operand's first element).
  auto stage = [&](uint32_t ok, uint32_t index, uint32_t ptr, uint32_t slot) {
    const uint32_t i = op(spv::Op::Select, i64, {ok, index, zeroI});
    const uint32_t v = m.op(spv::Op::Load, f32, aligned({op(spv::Op::InBoundsPtrAccessChain, gptr, {ptr, i})}));
    m.emit(spv::Op::Store, {slot, op(spv::Op::Select, f32, {ok, v, zeroF})});
  };
  // Tile addresses are computed where they are used: a value live across a barrier costs
  // PoCL a per-work-item context array (measured: the 32 read addresses of the first
  // version were 32 such arrays, stored once and loaded at every stage).
  const uint32_t mine = add(mul(ly, tileI), lx);  // this work-item's slot in both tiles
  const uint32_t wOk = both(rowOk, lt(add(t, lx), s[kConvR]));
  stage(wOk, add(wRow, dw.wOff), w, at(lptr, tileW, mine));
  uint32_t xOk = both(colOk, lt(add(t, ly), s[kConvR]));
  for (int d = 0; d < 3; ++d) {
    const uint32_t i = add(from[d], dx.kd[d]);
    xOk = both(xOk, both(op(spv::Op::SGreaterThanEqual, bt, {i, zeroI}), lt(i, s[kConvI0 + d])));
  }
  stage(xOk, add(xPos, dx.xOff), x, at(lptr, tileX, mine));
  barrier();
  uint32_t sum = acc;
  const uint32_t rowStart = mul(ly, tileI);  // row ly of W's tile, column lx of X's
  for (uint32_t kk = 0; kk < kTile; ++kk) {
    const uint32_t wv = op(spv::Op::Load, f32, {at(lptr, tileW, add(rowStart, cI(kk)))});
    const uint32_t xv = op(spv::Op::Load, f32, {at(lptr, tileX, add(cI(kk * kTile), lx))});
    const uint32_t product = op(spv::Op::FMul, f32, {wv, xv});
    if (kk + 1 < kTile) {
      sum = op(spv::Op::FAdd, f32, {sum, product});
    } else {
      m.emit(spv::Op::FAdd, {f32, accNext, sum, product});  // the header's phi names it
    }
  }
  // The next stage overwrites the tiles: every work-item must have read them.
  barrier();
  m.emit(spv::Op::Branch, {cont});

  m.label(cont);
  m.emit(spv::Op::IAdd, {i64, tNext, t, tileI});
  m.emit(spv::Op::Branch, {header});

  m.label(merge);
  const uint32_t store = m.newId(), done = m.newId();
  const uint32_t inside = both(rowOk, colOk);  // before the merge: it must come right before the branch
  m.emit(spv::Op::SelectionMerge, {done, spv::kSelectionControlNone});
  m.emit(spv::Op::BranchConditional, {inside, store, done});
  m.label(store);
  m.emit(spv::Op::Store, aligned({op(spv::Op::InBoundsPtrAccessChain, gptr, {y, yAt}), acc}));
  m.emit(spv::Op::Branch, {done});
  m.label(done);
  m.emit(spv::Op::Return, {});
  m.endFunction();
  std::vector<uint32_t> words = m.words();
  sdk::Status st = spirv::validate(words, "the implicit-GEMM convolution " + entry);
  if (!st.isOk()) return st;
  return words;
}

}  // namespace plugsdk::level_zero::library
