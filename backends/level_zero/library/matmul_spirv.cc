// The tiled f32 matmul module (see matmul_spirv.h).
#include "backends/level_zero/library/matmul_spirv.h"

#include "backends/level_zero/spirv/module.h"
#include "backends/level_zero/spirv/validate.h"

namespace plugsdk::level_zero::library {

using spirv::Module;

sdk::StatusOr<std::vector<uint32_t>> tiledMatmulModule(const std::string& entry) {
  Module m;
  m.capability(spv::Capability::Addresses);
  m.capability(spv::Capability::Kernel);
  m.capability(spv::Capability::Int64);
  m.memoryModel(spv::AddressingModel::Physical64, spv::MemoryModel::OpenCL);
  const uint32_t i64 = m.typeInt(64), u32 = m.typeInt(32), f32 = m.typeFloat(32), bt = m.typeBool();
  const uint32_t gptr = m.typePointer(spv::StorageClass::CrossWorkgroup, f32);
  const uint32_t lptr = m.typePointer(spv::StorageClass::Workgroup, f32);
  std::vector<uint32_t> params{gptr, gptr, gptr};
  for (uint32_t i = 0; i < kMatmulScalars; ++i) params.push_back(i64);
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
  const uint32_t tileT = m.typeArray(f32, kTile * kTile);
  const uint32_t tileA =
      m.globalVariable(m.typePointer(spv::StorageClass::Workgroup, tileT), spv::StorageClass::Workgroup);
  const uint32_t tileB =
      m.globalVariable(m.typePointer(spv::StorageClass::Workgroup, tileT), spv::StorageClass::Workgroup);
  m.name(tileA, "tile_a");
  m.name(tileB, "tile_b");

  const uint32_t fn = m.beginFunction(voidT, fnT);
  m.name(fn, entry);
  const uint32_t a = m.parameter(gptr), b = m.parameter(gptr), c = m.parameter(gptr);
  m.name(a, "a");
  m.name(b, "b");
  m.name(c, "c");
  const char* names[kMatmulScalars] = {"m",   "n",   "k",   "a_m",     "a_k",     "b_k",
                                       "b_n", "c_m", "c_n", "a_batch", "b_batch", "c_batch"};
  uint32_t s[kMatmulScalars];
  for (uint32_t i = 0; i < kMatmulScalars; ++i) {
    s[i] = m.parameter(i64);
    m.name(s[i], names[i]);
  }
  const uint32_t M = s[0], N = s[1], K = s[2], aM = s[3], aK = s[4], bK = s[5], bN = s[6], cM = s[7], cN = s[8],
                 aZ = s[9], bZ = s[10], cZ = s[11];
  m.entryPoint(spv::ExecutionModel::Kernel, fn, entry, {lidVar, widVar});
  m.executionMode(fn, spv::ExecutionMode::LocalSize, {kTile, kTile, 1});
  m.executionMode(fn, spv::ExecutionMode::ContractionOff);

  auto op = [&](spv::Op code, uint32_t type, std::initializer_list<uint32_t> xs) { return m.op(code, type, xs); };
  auto cI = [&](int64_t v) { return m.constInt(i64, static_cast<uint64_t>(v)); };
  auto add = [&](uint32_t x, uint32_t y) { return op(spv::Op::IAdd, i64, {x, y}); };
  auto mul = [&](uint32_t x, uint32_t y) { return op(spv::Op::IMul, i64, {x, y}); };
  auto lt = [&](uint32_t x, uint32_t y) { return op(spv::Op::SLessThan, bt, {x, y}); };
  auto both = [&](uint32_t x, uint32_t y) { return op(spv::Op::LogicalAnd, bt, {x, y}); };
  const uint32_t wg = m.constInt(u32, spv::kScopeWorkgroup);
  const uint32_t sem = m.constInt(u32, spv::kSemanticsGroupBarrier);
  const uint32_t zeroF = m.constFloat(f32, 0.0), zeroI = cI(0), tileI = cI(kTile);
  auto aligned = [](std::initializer_list<uint32_t> xs) {
    std::vector<uint32_t> v(xs);
    v.push_back(spv::kMemoryAccessAligned);
    v.push_back(4);
    return v;
  };

  const uint32_t entryBlock = m.newId();
  m.label(entryBlock);
  const uint32_t lid = op(spv::Op::Load, v3, {lidVar}), wid = op(spv::Op::Load, v3, {widVar});
  const uint32_t lx = op(spv::Op::CompositeExtract, i64, {lid, 0}), ly = op(spv::Op::CompositeExtract, i64, {lid, 1});
  const uint32_t gx = op(spv::Op::CompositeExtract, i64, {wid, 0}), gy = op(spv::Op::CompositeExtract, i64, {wid, 1});
  const uint32_t gz = op(spv::Op::CompositeExtract, i64, {wid, 2});
  const uint32_t col = add(mul(gx, tileI), lx), row = add(mul(gy, tileI), ly);
  const uint32_t rowOk = lt(row, M), colOk = lt(col, N);
  const uint32_t baseA = add(mul(gz, aZ), mul(row, aM)), baseB = add(mul(gz, bZ), mul(col, bN));
  const uint32_t mine = add(mul(ly, tileI), lx);  // this work-item's slot in both tiles
  const uint32_t myA = op(spv::Op::AccessChain, lptr, {tileA, mine}),
                 myB = op(spv::Op::AccessChain, lptr, {tileB, mine});
  // Each tile's read addresses: row ly of A's tile, column lx of B's.
  std::vector<uint32_t> rowA, colB;
  for (uint32_t kk = 0; kk < kTile; ++kk) {
    rowA.push_back(op(spv::Op::AccessChain, lptr, {tileA, add(mul(ly, tileI), cI(kk))}));
    colB.push_back(op(spv::Op::AccessChain, lptr, {tileB, add(cI(kk * kTile), lx)}));
  }

  const uint32_t header = m.newId(), body = m.newId(), cont = m.newId(), merge = m.newId();
  const uint32_t t = m.newId(), acc = m.newId(), tNext = m.newId(), accNext = m.newId();
  m.emit(spv::Op::Branch, {header});
  m.label(header);
  m.emit(spv::Op::Phi, {i64, t, zeroI, entryBlock, tNext, cont});
  m.emit(spv::Op::Phi, {f32, acc, zeroF, entryBlock, accNext, cont});
  const uint32_t more = lt(t, K);  // before the merge: it must come right before the branch
  m.emit(spv::Op::LoopMerge, {merge, cont, spv::kLoopControlNone});
  m.emit(spv::Op::BranchConditional, {more, body, merge});

  m.label(body);
  // Stage: A[row, t + lx] and B[t + ly, col], zeros past the edges (the address clamped to
  // the operand's first element, which exists: M, N, K > 0 when anything is launched).
  auto stage = [&](uint32_t ok, uint32_t base, uint32_t kIndex, uint32_t kStride, uint32_t ptr, uint32_t slot) {
    const uint32_t index = op(spv::Op::Select, i64, {ok, add(base, mul(kIndex, kStride)), zeroI});
    const uint32_t v = m.op(spv::Op::Load, f32, aligned({op(spv::Op::InBoundsPtrAccessChain, gptr, {ptr, index})}));
    m.emit(spv::Op::Store, {slot, op(spv::Op::Select, f32, {ok, v, zeroF})});
  };
  const uint32_t ka = add(t, lx), kb = add(t, ly);
  stage(both(rowOk, lt(ka, K)), baseA, ka, aK, a, myA);
  stage(both(colOk, lt(kb, K)), baseB, kb, bK, b, myB);
  m.emit(spv::Op::ControlBarrier, {wg, wg, sem});
  uint32_t sum = acc;
  for (uint32_t kk = 0; kk < kTile; ++kk) {
    const uint32_t product =
        op(spv::Op::FMul, f32, {op(spv::Op::Load, f32, {rowA[kk]}), op(spv::Op::Load, f32, {colB[kk]})});
    if (kk + 1 < kTile) {
      sum = op(spv::Op::FAdd, f32, {sum, product});
    } else {
      m.emit(spv::Op::FAdd, {f32, accNext, sum, product});  // the header's phi names it
    }
  }
  // The next stage overwrites the tiles: every work-item must have read them first.
  m.emit(spv::Op::ControlBarrier, {wg, wg, sem});
  m.emit(spv::Op::Branch, {cont});

  m.label(cont);
  m.emit(spv::Op::IAdd, {i64, tNext, t, tileI});
  m.emit(spv::Op::Branch, {header});

  m.label(merge);
  const uint32_t store = m.newId(), done = m.newId();
  const uint32_t inside = both(rowOk, colOk);
  m.emit(spv::Op::SelectionMerge, {done, spv::kSelectionControlNone});
  m.emit(spv::Op::BranchConditional, {inside, store, done});
  m.label(store);
  const uint32_t at = add(add(mul(gz, cZ), mul(row, cM)), mul(col, cN));
  m.emit(spv::Op::Store, aligned({op(spv::Op::InBoundsPtrAccessChain, gptr, {c, at}), acc}));
  m.emit(spv::Op::Branch, {done});
  m.label(done);
  m.emit(spv::Op::Return, {});
  m.endFunction();
  std::vector<uint32_t> words = m.words();
  sdk::Status st = spirv::validate(words, "the tiled matmul " + entry);
  if (!st.isOk()) return st;
  return words;
}

}  // namespace plugsdk::level_zero::library
