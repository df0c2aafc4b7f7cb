// Group mode (mapping.h): a work-group of groupSize_ work-items per grid point. Each loop's
// iterations are spread over the work-items (work-item t takes the row-major positions t,
// t + groupSize_, ..., or its contiguous chunk on a CPU), each keeps its own accumulators, and at the loop's end they
// are combined through Workgroup memory in a fixed tree with barriers between its levels, so every work-item holds the
// same bits and the statements after the loop run on all of them (stores through work-item 0). Sums (and only sums)
// may first be reduced within sub-groups with the Groups capability's OpGroupFAdd / OpGroupIAdd (SPIR-V 1.0; SPIR-V
// 1.3's OpGroupNonUniform* is past what SPIRV-Tools' OpenCL environments and PoCL 6.0 take), shortening the tree:
// OpGroupFMax / FMin leave NaNs unspecified and argmax has no group instruction (docs/level-zero-backend.md).
#include "backends/level_zero/spirv/lowering.h"
#include "backends/llvm_lowering/dtypes.h"

namespace plugsdk::level_zero::spirv {

using lowering::isFloatDtype;
using lowering::isUnsignedDtype;

void KernelLowering::barrier() {
  const uint32_t wg = constU32(spv::kScopeWorkgroup);
  m_.emit(spv::Op::ControlBarrier, {wg, wg, constU32(spv::kSemanticsGroupBarrier)});
}

sdk::Status KernelLowering::spreadLoop(uint32_t n, const std::function<sdk::Status(uint32_t)>& body) {
  uint32_t first = lid_, end = n, step = constI64(groupSize_);
  if (contiguousChunks_) {
    const uint32_t g = constI64(groupSize_);
    const uint32_t chunk = m_.op(spv::Op::UDiv, i64(), {m_.op(spv::Op::IAdd, i64(), {n, constI64(groupSize_ - 1)}), g});
    first = m_.op(spv::Op::IMul, i64(), {lid_, chunk});
    const uint32_t last = m_.op(spv::Op::IAdd, i64(), {first, chunk});
    end = m_.op(spv::Op::Select, i64(), {m_.op(spv::Op::SLessThan, boolT(), {last, n}), last, n});
    step = constI64(1);
  }
  const uint32_t var = m_.localVariable(i64());
  m_.emit(spv::Op::Store, {var, first});
  const uint32_t header = m_.newId(), bodyBlock = m_.newId(), cont = m_.newId(), merge = m_.newId();
  m_.emit(spv::Op::Branch, {header});
  m_.label(header);
  const uint32_t i = m_.op(spv::Op::Load, i64(), {var});
  const uint32_t more = m_.op(spv::Op::SLessThan, boolT(), {i, end});
  m_.emit(spv::Op::LoopMerge, {merge, cont, spv::kLoopControlNone});
  m_.emit(spv::Op::BranchConditional, {more, bodyBlock, merge});
  m_.label(bodyBlock);
  const bool outer = spreading_;
  spreading_ = true;
  sdk::Status st = body(i);
  closeSkips();
  spreading_ = outer;
  if (!st.isOk()) return st;
  m_.emit(spv::Op::Branch, {cont});
  m_.label(cont);
  m_.emit(spv::Op::Store, {var, m_.op(spv::Op::IAdd, i64(), {i, step})});
  m_.emit(spv::Op::Branch, {header});
  m_.label(merge);
  return sdk::Status::ok();
}

void KernelLowering::skipRestIf(uint32_t failed, int32_t code) {
  // if (failed) { status: 0 -> code } else { the rest of the iteration ... } (closed by closeSkips)
  const uint32_t bad = m_.newId(), ok = m_.newId(), merge = m_.newId();
  m_.emit(spv::Op::SelectionMerge, {merge, spv::kSelectionControlNone});
  m_.emit(spv::Op::BranchConditional, {failed, bad, ok});
  m_.label(bad);
  const uint32_t scope = constU32(spv::kScopeDevice), relaxed = constU32(spv::kSemanticsRelaxed);
  m_.op(spv::Op::AtomicCompareExchange, u32(),
        {status_, scope, relaxed, relaxed, constU32(static_cast<uint32_t>(code)), constU32(0)});
  if (!spreading_) m_.emit(spv::Op::Store, {groupFailed_, m_.constBool(true)});
  m_.emit(spv::Op::Branch, {merge});
  m_.label(ok);
  skips_.push_back(Skip{merge, bad, defined_.size(), !spreading_});
}

void KernelLowering::skipIfGroupFailed() {
  if (!groupMayFail_) return;
  const uint32_t ok = m_.newId(), merge = m_.newId();
  const uint32_t failed = m_.op(spv::Op::Load, boolT(), {groupFailed_});
  const uint32_t header = m_.currentBlock();
  m_.emit(spv::Op::SelectionMerge, {merge, spv::kSelectionControlNone});
  m_.emit(spv::Op::BranchConditional, {failed, merge, ok});
  m_.label(ok);
  skips_.push_back(Skip{merge, header, defined_.size(), true});
}

void KernelLowering::closeSkips() {
  while (!skips_.empty()) {
    const Skip s = skips_.back();
    skips_.pop_back();
    const uint32_t from = m_.currentBlock();
    m_.emit(spv::Op::Branch, {s.merge});
    m_.label(s.merge);
    if (!s.phis) continue;
    // Values defined in the skipped stretch are used after it: null where it was skipped
    // (a failure was reported; what follows computes nothing that is read).
    for (size_t i = s.mark; i < defined_.size(); ++i) {
      uint32_t& v = values_[static_cast<size_t>(defined_[i])];
      const uint32_t t = m_.typeOf(v);
      v = m_.op(spv::Op::Phi, t, {v, from, m_.constNull(t), s.skipping});
    }
  }
}

void KernelLowering::syncBeforeReading(int32_t arg) {
  // (Not inside a skipped stretch: a barrier there would not be reached by every work-item
  // on PoCL's terms; such a stretch follows a failure, whose results are never read.)
  if (!groupSize_ || spreading_ || !skips_.empty() || !written_.count(arg)) return;
  barrier();
  written_.clear();
}

sdk::Status KernelLowering::onFirstWorkItem(const std::function<sdk::Status()>& body) {
  return ifThen(m_.op(spv::Op::IEqual, boolT(), {lid_, constI64(0)}), body);
}

std::vector<uint32_t> KernelLowering::groupAllReduce(const std::vector<uint32_t>& fields,
                                                     const std::vector<uint32_t>& types, const Combine& combine,
                                                     const std::vector<bool>& sumIsFloat) {
  const uint32_t bt = boolT(), u8 = intT(8);
  std::vector<uint32_t> slots;  // per field: its Workgroup array
  std::vector<uint32_t> memTypes;
  for (size_t f = 0; f < fields.size(); ++f) {
    const uint32_t mt = types[f] == bt ? u8 : types[f];
    uint32_t& slot = scratch_[{mt, f}];
    if (!slot) {
      const uint32_t arr = m_.typeArray(mt, groupSize_);
      slot = m_.globalVariable(m_.typePointer(spv::StorageClass::Workgroup, arr), spv::StorageClass::Workgroup);
    }
    slots.push_back(slot);
    memTypes.push_back(mt);
  }
  auto at = [&](size_t f, uint32_t index) {
    return m_.op(spv::Op::AccessChain, m_.typePointer(spv::StorageClass::Workgroup, memTypes[f]), {slots[f], index});
  };
  auto put = [&](size_t f, uint32_t index, uint32_t v) {
    m_.emit(spv::Op::Store, {at(f, index), types[f] == bt ? boolToInt(v, u8) : v});
  };
  auto get = [&](size_t f, uint32_t index) {
    const uint32_t v = m_.op(spv::Op::Load, memTypes[f], {at(f, index)});
    return types[f] == bt ? m_.op(spv::Op::INotEqual, bt, {v, m_.constInt(u8, 0)}) : v;
  };
  uint32_t slotCount = groupSize_;
  if (!sumIsFloat.empty() && subgroupSlots_) {
    // The first levels in sub-groups: each field's sum over the sub-group, put by its first
    // work-item in slot SubgroupId; the slots past NumSubgroups (up to subgroupSlots_) hold
    // zeros. Then the tree below over subgroupSlots_ slots.
    const uint32_t scope = constU32(spv::kScopeSubgroup);
    std::vector<uint32_t> reduced;
    for (size_t f = 0; f < fields.size(); ++f) {
      reduced.push_back(m_.op(sumIsFloat[f] ? spv::Op::GroupFAdd : spv::Op::GroupIAdd, types[f],
                              {scope, spv::kGroupOperationReduce, fields[f]}));
    }
    const uint32_t sgLocal = m_.op(spv::Op::Load, u32(), {sgLocalVar_});
    const uint32_t sgId = m_.op(spv::Op::UConvert, i64(), {m_.op(spv::Op::Load, u32(), {sgIdVar_})});
    const uint32_t sgCount = m_.op(spv::Op::UConvert, i64(), {m_.op(spv::Op::Load, u32(), {sgCountVar_})});
    (void)ifThen(m_.op(spv::Op::IEqual, bt, {sgLocal, constU32(0)}), [&]() -> sdk::Status {
      for (size_t f = 0; f < fields.size(); ++f) put(f, sgId, reduced[f]);
      return sdk::Status::ok();
    });
    const uint32_t unused = m_.op(spv::Op::LogicalAnd, bt,
                                  {m_.op(spv::Op::ULessThan, bt, {lid_, constI64(subgroupSlots_)}),
                                   m_.op(spv::Op::UGreaterThanEqual, bt, {lid_, sgCount})});
    (void)ifThen(unused, [&]() -> sdk::Status {
      for (size_t f = 0; f < fields.size(); ++f) put(f, lid_, m_.constNull(types[f]));
      return sdk::Status::ok();
    });
    slotCount = subgroupSlots_;
  } else {
    for (size_t f = 0; f < fields.size(); ++f) put(f, lid_, fields[f]);
  }
  for (uint32_t s = slotCount / 2; s >= 1; s /= 2) {
    barrier();
    (void)ifThen(m_.op(spv::Op::ULessThan, bt, {lid_, constI64(s)}), [&]() -> sdk::Status {
      const uint32_t other = m_.op(spv::Op::IAdd, i64(), {lid_, constI64(s)});
      std::vector<uint32_t> a, b;
      for (size_t f = 0; f < fields.size(); ++f) {
        a.push_back(get(f, lid_));
        b.push_back(get(f, other));
      }
      const std::vector<uint32_t> c = combine(a, b);
      for (size_t f = 0; f < fields.size(); ++f) put(f, lid_, c[f]);
      return sdk::Status::ok();
    });
  }
  barrier();
  std::vector<uint32_t> out;
  for (size_t f = 0; f < fields.size(); ++f) out.push_back(get(f, constI64(0)));
  barrier();  // the slots are written again by the next combine
  return out;
}

std::pair<uint32_t, uint32_t> KernelLowering::combineOrdered(bool isMax, uint32_t r, uint32_t ri, uint32_t v,
                                                             uint32_t vi, uint32_t dtype) {
  const uint32_t bt = boolT();
  const uint32_t earlier = m_.op(spv::Op::SLessThan, bt, {vi, ri});
  uint32_t take = 0;
  if (isFloatDtype(dtype)) {
    const uint32_t rNan = m_.op(spv::Op::IsNan, bt, {r}), vNan = m_.op(spv::Op::IsNan, bt, {v});
    const uint32_t better = m_.op(isMax ? spv::Op::FOrdGreaterThan : spv::Op::FOrdLessThan, bt, {v, r});
    const uint32_t tie = m_.op(spv::Op::LogicalAnd, bt, {m_.op(spv::Op::FOrdEqual, bt, {v, r}), earlier});
    const uint32_t ifNan = m_.op(spv::Op::LogicalAnd, bt, {vNan, earlier});
    const uint32_t ifNum = m_.op(spv::Op::LogicalOr, bt, {vNan, m_.op(spv::Op::LogicalOr, bt, {better, tie})});
    take = m_.op(spv::Op::Select, bt, {rNan, ifNan, ifNum});
  } else {
    const uint32_t better = compare(isMax ? PLUGSDK_OP_GT : PLUGSDK_OP_LT, v, r, dtype);
    const uint32_t tie = m_.op(spv::Op::LogicalAnd, bt, {compare(PLUGSDK_OP_EQ, v, r, dtype), earlier});
    take = m_.op(spv::Op::LogicalOr, bt, {better, tie});
  }
  return {m_.op(spv::Op::Select, m_.typeOf(r), {take, v, r}), m_.op(spv::Op::Select, i64(), {take, vi, ri})};
}

}  // namespace plugsdk::level_zero::spirv
