// Loads and stores: storage formats (bool as uchar 0/1, f16 as half read and written only by
// OpenCL.std's vload_half / vstore_half_r -- the Float16Buffer capability every OpenCL device
// has, where half arithmetic (Float16) needs cl_khr_fp16 and SPIRV-Tools' OpenCL environments
// reject it --, bf16 as the top half of an f32 in a ushort), masked loads as a selection
// around the access, and combining stores:
// OpAtomicIAdd / SMax / SMin ... for 32- and 64-bit integers, a compare-and-swap loop on the
// bits for everything else (SPIR-V 1.0 has no float atomics; OpenCL none below 32 bits, so
// 8- and 16-bit elements swap the 32-bit word that holds them).
#include "backends/level_zero/spirv/lowering.h"
#include "backends/llvm_lowering/dtypes.h"

namespace plugsdk::level_zero::spirv {

uint32_t KernelLowering::fromStorage(uint32_t v, uint32_t dtype) {
  switch (dtype) {
    case PLUGSDK_DTYPE_BOOL: return m_.op(spv::Op::INotEqual, boolT(), {v, m_.constInt(intT(8), 0)});
    case PLUGSDK_DTYPE_F16: return halfBitsToFloat(v);
    case PLUGSDK_DTYPE_BF16: {
      const uint32_t w = m_.op(spv::Op::ShiftLeftLogical, u32(), {m_.op(spv::Op::UConvert, u32(), {v}), constU32(16)});
      return m_.op(spv::Op::Bitcast, floatT(32), {w});
    }
    default: return v;
  }
}

uint32_t KernelLowering::toStorage(uint32_t v, uint32_t dtype) {
  switch (dtype) {
    case PLUGSDK_DTYPE_BOOL: return boolToInt(v, intT(8));
    case PLUGSDK_DTYPE_F16: return floatToHalfBits(v);
    case PLUGSDK_DTYPE_BF16: {
      // Round to nearest even on the bits; NaN becomes the canonical quiet NaN (as torch).
      const uint32_t bits = m_.op(spv::Op::Bitcast, u32(), {v});
      const uint32_t lsb = m_.op(spv::Op::BitwiseAnd, u32(),
                                 {m_.op(spv::Op::ShiftRightLogical, u32(), {bits, constU32(16)}), constU32(1)});
      const uint32_t sum = m_.op(spv::Op::IAdd, u32(), {bits, m_.op(spv::Op::IAdd, u32(), {lsb, constU32(0x7fff)})});
      const uint32_t rounded = m_.op(spv::Op::ShiftRightLogical, u32(), {sum, constU32(16)});
      const uint32_t isNan = m_.op(spv::Op::IsNan, boolT(), {v});
      const uint32_t r = m_.op(spv::Op::Select, u32(), {isNan, constU32(0x7fc0), rounded});
      return m_.op(spv::Op::UConvert, intT(16), {r});
    }
    default: return v;
  }
}

uint32_t KernelLowering::halfBitsToFloat(uint32_t bits) {
  if (!halfScratch_) halfScratch_ = m_.localVariable(intT(16));
  m_.emit(spv::Op::Store, {halfScratch_, bits});
  const uint32_t p = m_.op(spv::Op::Bitcast, m_.typePointer(spv::StorageClass::Function, floatT(16)), {halfScratch_});
  return ext(spv::OpenCLStd::vload_half, floatT(32), {constI64(0), p});
}

uint32_t KernelLowering::floatToHalfBits(uint32_t v) {
  if (!halfScratch_) halfScratch_ = m_.localVariable(intT(16));
  const uint32_t p = m_.op(spv::Op::Bitcast, m_.typePointer(spv::StorageClass::Function, floatT(16)), {halfScratch_});
  ext(spv::OpenCLStd::vstore_half_r, m_.typeVoid(), {v, constI64(0), p, spv::kRoundingModeRTE});
  return m_.op(spv::Op::Load, intT(16), {halfScratch_});
}

uint32_t KernelLowering::loadElement(uint32_t ptr, uint32_t dtype) {
  if (dtype == PLUGSDK_DTYPE_F16) return ext(spv::OpenCLStd::vload_half, floatT(32), {constI64(0), ptr});
  return fromStorage(
      m_.op(spv::Op::Load, storageType(dtype), {ptr, spv::kMemoryAccessAligned, lowering::dtypeBytes(dtype)}), dtype);
}

void KernelLowering::storeElement(uint32_t ptr, uint32_t v, uint32_t dtype) {
  if (dtype == PLUGSDK_DTYPE_F16) {
    ext(spv::OpenCLStd::vstore_half_r, m_.typeVoid(), {v, constI64(0), ptr, spv::kRoundingModeRTE});
    return;
  }
  m_.emit(spv::Op::Store, {ptr, toStorage(v, dtype), spv::kMemoryAccessAligned, lowering::dtypeBytes(dtype)});
}

uint32_t KernelLowering::elementPointer(int32_t arg, uint32_t index) {
  const uint32_t base = argPtrs_[static_cast<size_t>(arg)];
  return m_.op(spv::Op::InBoundsPtrAccessChain, m_.typeOf(base), {base, index});
}

sdk::StatusOr<uint32_t> KernelLowering::load(const plugsdk_stmt_t& s, size_t pos) {
  const plugsdk_kernel_arg_t& arg = k_.arg(static_cast<size_t>(s.arg));
  if (arg.dtype != s.dtype) return fail(pos, "a load of another dtype than its argument's");
  const uint32_t st = storageType(s.dtype);
  if (!st) return fail(pos, "a load of dtype " + std::to_string(s.dtype));
  sdk::StatusOr<Idx> ix = index(s.index);
  if (!ix.isOk()) return ix.status();
  const uint32_t ptr = elementPointer(s.arg, materialize(*ix));
  if (s.num_operands == 0) return loadElement(ptr, s.dtype);
  // Masked: no access where the mask is false, and the value is 0 there.
  const uint32_t pre = m_.currentBlock();
  const uint32_t then = m_.newId(), after = m_.newId();
  m_.emit(spv::Op::SelectionMerge, {after, spv::kSelectionControlNone});
  m_.emit(spv::Op::BranchConditional, {value(s.operands[0]), then, after});
  m_.label(then);
  const uint32_t v = loadElement(ptr, s.dtype);
  const uint32_t from = m_.currentBlock();
  m_.emit(spv::Op::Branch, {after});
  m_.label(after);
  const uint32_t rt = computeType(s.dtype);
  return m_.op(spv::Op::Phi, rt, {v, from, m_.constNull(rt), pre});
}

sdk::Status KernelLowering::store(const plugsdk_stmt_t& s, size_t pos) {
  const plugsdk_kernel_arg_t& arg = k_.arg(static_cast<size_t>(s.arg));
  const uint32_t st = storageType(arg.dtype);
  if (!st) return fail(pos, "a store of dtype " + std::to_string(arg.dtype));
  if (dtypeOf(s.operands[0]) != arg.dtype) return fail(pos, "a store of another dtype than its argument's");
  sdk::StatusOr<Idx> ix = index(s.index);
  if (!ix.isOk()) return ix.status();
  const uint32_t ptr = elementPointer(s.arg, materialize(*ix));
  if (s.op != PLUGSDK_COMBINE_NONE) return combiningStore(s, pos, ptr, value(s.operands[0]));
  storeElement(ptr, value(s.operands[0]), arg.dtype);
  return sdk::Status::ok();
}

sdk::Status KernelLowering::combiningStore(const plugsdk_stmt_t& s, size_t pos, uint32_t ptr, uint32_t v) {
  const uint32_t dtype = k_.arg(static_cast<size_t>(s.arg)).dtype;
  if (s.op > PLUGSDK_COMBINE_MIN) return fail(pos, "combining store " + std::to_string(s.op) + " is unknown");
  const uint32_t bytes = lowering::dtypeBytes(dtype);
  const uint32_t st = storageType(dtype);
  const uint32_t bitsT = bitsType(dtype);
  const uint32_t scope = constU32(spv::kScopeDevice), relaxed = constU32(spv::kSemanticsRelaxed);
  const bool isMax = s.op == PLUGSDK_COMBINE_MAX;
  if (bytes == 8) m_.capability(spv::Capability::Int64Atomics);

  // 32- and 64-bit integers: one atomic instruction (no prod: that is a CAS loop too).
  if ((dtype == PLUGSDK_DTYPE_I32 || dtype == PLUGSDK_DTYPE_I64) && s.op != PLUGSDK_COMBINE_PROD) {
    const spv::Op code = s.op == PLUGSDK_COMBINE_SUM ? spv::Op::AtomicIAdd
                         : isMax                     ? spv::Op::AtomicSMax
                                                     : spv::Op::AtomicSMin;
    m_.op(code, st, {ptr, scope, relaxed, v});
    return sdk::Status::ok();
  }

  // A CAS loop on the word (32 or 64 bits) that holds the element.
  const bool sub = bytes < 4;
  const uint32_t wordT = intT(sub ? 32 : bytes * 8);
  const uint32_t wordPtrT = m_.typePointer(spv::StorageClass::CrossWorkgroup, wordT);
  uint32_t wordPtr = 0, shift = 0, keep = 0;
  if (sub) {
    // Little-endian (x86 and Intel GPUs): the element at byte b of its word is bits 8b and up.
    const uint32_t addr = m_.op(spv::Op::ConvertPtrToU, i64(), {ptr});
    wordPtr =
        m_.op(spv::Op::ConvertUToPtr, wordPtrT, {m_.op(spv::Op::BitwiseAnd, i64(), {addr, constI64(~int64_t{3})})});
    const uint32_t byte = m_.op(spv::Op::UConvert, u32(), {m_.op(spv::Op::BitwiseAnd, i64(), {addr, constI64(3)})});
    shift = m_.op(spv::Op::IMul, u32(), {byte, constU32(8)});
    const uint32_t mask = m_.op(spv::Op::ShiftLeftLogical, u32(), {constU32((1u << (bytes * 8)) - 1), shift});
    keep = m_.op(spv::Op::Not, u32(), {mask});
  } else {
    wordPtr = st == wordT ? ptr : m_.op(spv::Op::Bitcast, wordPtrT, {ptr});
  }
  const uint32_t var = m_.localVariable(wordT);
  m_.emit(spv::Op::Store, {var, m_.op(spv::Op::AtomicLoad, wordT, {wordPtr, scope, relaxed})});
  const uint32_t header = m_.newId(), body = m_.newId(), cont = m_.newId(), merge = m_.newId();
  m_.emit(spv::Op::Branch, {header});
  m_.label(header);
  m_.emit(spv::Op::LoopMerge, {merge, cont, spv::kLoopControlNone});
  m_.emit(spv::Op::Branch, {body});
  m_.label(body);
  const uint32_t old = m_.op(spv::Op::Load, wordT, {var});
  uint32_t oldBits = old;  // the element's storage bits, as an integer of its width
  const uint32_t elemIntT = intT(bytes * 8);
  if (sub) oldBits = m_.op(spv::Op::UConvert, elemIntT, {m_.op(spv::Op::ShiftRightLogical, u32(), {old, shift})});
  const uint32_t oldStored = bitsT == elemIntT ? oldBits : m_.op(spv::Op::Bitcast, bitsT, {oldBits});
  const uint32_t oldV = fromStorage(oldStored, dtype);
  const uint32_t nv =
      roundTo(combine(s.op == PLUGSDK_COMBINE_SUM, s.op == PLUGSDK_COMBINE_PROD, isMax, oldV, v, dtype), dtype);
  const uint32_t newStored = toStorage(nv, dtype);
  uint32_t newWord = bitsT == elemIntT ? newStored : m_.op(spv::Op::Bitcast, elemIntT, {newStored});
  if (sub) {
    const uint32_t placed =
        m_.op(spv::Op::ShiftLeftLogical, u32(), {m_.op(spv::Op::UConvert, u32(), {newWord}), shift});
    newWord = m_.op(spv::Op::BitwiseOr, u32(), {m_.op(spv::Op::BitwiseAnd, u32(), {old, keep}), placed});
  }
  const uint32_t seen = m_.op(spv::Op::AtomicCompareExchange, wordT, {wordPtr, scope, relaxed, relaxed, newWord, old});
  m_.emit(spv::Op::Store, {var, seen});
  m_.emit(spv::Op::BranchConditional, {m_.op(spv::Op::IEqual, boolT(), {seen, old}), merge, cont});
  m_.label(cont);
  m_.emit(spv::Op::Branch, {header});
  m_.label(merge);
  return sdk::Status::ok();
}

}  // namespace plugsdk::level_zero::spirv
