// Loads and stores: the storage format of each dtype (bool as one byte, f16 as IEEE half,
// bf16 as the top half of an f32), contiguous vector accesses, broadcasts, gathers and
// scatters, masks (the tail's and a masked load's), and combining stores as atomic
// read-modify-writes per lane (threads may hit the same element).
#include "backends/llvm_lowering/dtypes.h"
#include "backends/llvm_lowering/lowering.h"

namespace plugsdk::lowering {

llvm::Type* KernelLowering::storageType(uint32_t dtype) {
  switch (dtype) {
    case PLUGSDK_DTYPE_BOOL:
    case PLUGSDK_DTYPE_U8:
    case PLUGSDK_DTYPE_I8: return b_.getInt8Ty();
    case PLUGSDK_DTYPE_I16: return b_.getInt16Ty();
    case PLUGSDK_DTYPE_I32: return b_.getInt32Ty();
    case PLUGSDK_DTYPE_I64: return b_.getInt64Ty();
    case PLUGSDK_DTYPE_F16: return b_.getHalfTy();
    case PLUGSDK_DTYPE_BF16: return b_.getInt16Ty();
    case PLUGSDK_DTYPE_F32: return b_.getFloatTy();
    case PLUGSDK_DTYPE_F64: return b_.getDoubleTy();
    default: return nullptr;
  }
}

llvm::Value* KernelLowering::fromStorage(llvm::Value* v, uint32_t dtype) {
  llvm::Type* t = v->getType();
  auto like = [&](llvm::Type* e) -> llvm::Type* {
    if (auto* vt = llvm::dyn_cast<llvm::VectorType>(t)) return llvm::VectorType::get(e, vt->getElementCount());
    return e;
  };
  switch (dtype) {
    case PLUGSDK_DTYPE_BOOL: return b_.CreateICmpNE(v, llvm::Constant::getNullValue(t));
    case PLUGSDK_DTYPE_F16: return b_.CreateFPExt(v, like(b_.getFloatTy()));
    case PLUGSDK_DTYPE_BF16: {
      // Pairs as 32-bit words (nativeBf16: the GPU's 16-bit registers cost an unpacking per
      // element): the low element is the word shifted up, the high one the word masked. A
      // vector of bf16 read as <N x bfloat> instead became two 32-bit loads on NVPTX where
      // <N x i16> is one 64-bit load.
      auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t);
      if (target_.nativeBf16 && vt && vt->getNumElements() % 2 == 0) {
        const unsigned n = vt->getNumElements();
        llvm::Type* words = llvm::FixedVectorType::get(b_.getInt32Ty(), n / 2);
        llvm::Value* w = b_.CreateBitCast(v, words);
        llvm::Value* lo = b_.CreateShl(w, 16);
        llvm::Value* hi = b_.CreateAnd(w, llvm::ConstantInt::get(words, 0xffff0000u));
        std::vector<int> interleave;
        for (unsigned i = 0; i < n / 2; ++i)
          interleave.insert(interleave.end(), {static_cast<int>(i), static_cast<int>(i + n / 2)});
        return b_.CreateBitCast(b_.CreateShuffleVector(lo, hi, interleave), like(b_.getFloatTy()));
      }
      llvm::Value* w = b_.CreateShl(b_.CreateZExt(v, like(b_.getInt32Ty())), 16);
      return b_.CreateBitCast(w, like(b_.getFloatTy()));
    }
    default: return v;
  }
}

llvm::Value* KernelLowering::toStorage(llvm::Value* v, uint32_t dtype) {
  llvm::Type* t = v->getType();
  auto like = [&](llvm::Type* e) -> llvm::Type* {
    if (auto* vt = llvm::dyn_cast<llvm::VectorType>(t)) return llvm::VectorType::get(e, vt->getElementCount());
    return e;
  };
  switch (dtype) {
    case PLUGSDK_DTYPE_BOOL: return b_.CreateZExt(v, like(b_.getInt8Ty()));
    case PLUGSDK_DTYPE_F16: return b_.CreateFPTrunc(v, like(b_.getHalfTy()));
    case PLUGSDK_DTYPE_BF16: {
      if (target_.nativeBf16)  // the target's rounding, and its NaN (Target::nativeBf16)
        return b_.CreateBitCast(b_.CreateFPTrunc(v, like(b_.getBFloatTy())), like(b_.getInt16Ty()));
      // Round to nearest even on the bits; NaN becomes the canonical quiet NaN (as torch).
      llvm::Type* i32 = like(b_.getInt32Ty());
      llvm::Value* bits = b_.CreateBitCast(v, i32);
      llvm::Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), llvm::ConstantInt::get(i32, 1));
      llvm::Value* rounded =
          b_.CreateLShr(b_.CreateAdd(bits, b_.CreateAdd(lsb, llvm::ConstantInt::get(i32, 0x7fff))), 16);
      llvm::Value* isNan = b_.CreateFCmpUNO(v, v);
      llvm::Value* r = b_.CreateSelect(isNan, llvm::ConstantInt::get(i32, 0x7fc0), rounded);
      return b_.CreateTrunc(r, like(b_.getInt16Ty()));
    }
    default: return v;
  }
}

llvm::Value* KernelLowering::argPointer(int32_t arg) { return argPtrs_[static_cast<size_t>(arg)]; }

sdk::StatusOr<Val> KernelLowering::load(const plugsdk_stmt_t& s, size_t pos, Region& r) {
  const plugsdk_kernel_arg_t& arg = k_.arg(static_cast<size_t>(s.arg));
  if (arg.dtype != s.dtype) return fail(pos, "a load of another dtype than its argument's");
  llvm::Type* st = storageType(s.dtype);
  if (!st) return fail(pos, "a load of dtype " + std::to_string(s.dtype));
  const llvm::Align align(dtypeBytes(s.dtype));
  sdk::StatusOr<IndexVal> ix = index(s.index, r);
  if (!ix.isOk()) return ix.status();
  llvm::Value* base = argPointer(s.arg);
  const bool masked = s.num_operands == 1;
  const Val m = masked ? values_[static_cast<size_t>(s.operands[0])] : Val{};
  using K = IndexVal::Kind;

  if (ix->kind == K::kUniform && (!masked || !m.varying)) {
    llvm::Value* ptr = b_.CreateGEP(st, base, ix->base);
    if (!masked) return Val{fromStorage(invariantLoad(s.arg, b_.CreateAlignedLoad(st, ptr, align)), s.dtype), false};
    // A uniform masked load: branch around the access.
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* doLoad = llvm::BasicBlock::Create(ctx_, "mload", fn_);
    llvm::BasicBlock* join = llvm::BasicBlock::Create(ctx_, "mload.join", fn_);
    b_.CreateCondBr(m.v, doLoad, join);
    b_.SetInsertPoint(doLoad);
    llvm::Value* v = invariantLoad(s.arg, b_.CreateAlignedLoad(st, ptr, align));
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    llvm::PHINode* phi = b_.CreatePHI(st, 2);
    phi->addIncoming(v, doLoad);
    phi->addIncoming(llvm::Constant::getNullValue(st), pre);
    return Val{fromStorage(phi, s.dtype), false};
  }
  // Per lane: the active lanes are the region's and the load's own mask.
  const uint32_t n = r.lanes;
  llvm::Value* mask = r.mask;
  if (masked) {
    llvm::Value* mv = widen(m, n);
    mask = mask ? b_.CreateAnd(mask, mv) : mv;
  }
  auto* vt = llvm::VectorType::get(st, n, false);
  llvm::Value* zero = llvm::Constant::getNullValue(vt);
  if (ix->kind == K::kAffine && ix->stride == 1) {
    llvm::Value* ptr = b_.CreateGEP(st, base, ix->base);
    const llvm::Align va = vectorAlign(s.index, r, s.dtype);
    llvm::Value* v = mask ? static_cast<llvm::Value*>(b_.CreateMaskedLoad(vt, ptr, va, mask, zero))
                          : invariantLoad(s.arg, b_.CreateAlignedLoad(vt, ptr, va));
    return Val{fromStorage(v, s.dtype), true};
  }
  if (ix->kind == K::kAffine && ix->stride >= 2 && ix->stride <= 4) {
    // A small constant stride (pooling windows, strided views): one contiguous masked load
    // of lanes * stride elements that touches only the wanted ones, then a shuffle. Masked
    // loads never fault on masked-off elements, so nothing past the tensor is read.
    const auto sN = static_cast<uint32_t>(ix->stride);
    auto* wide = llvm::VectorType::get(st, n * sN, false);
    std::vector<llvm::Constant*> pattern;
    std::vector<int> spread, pick;
    for (uint32_t i = 0; i < n * sN; ++i) {
      pattern.push_back(b_.getInt1(i % sN == 0));
      spread.push_back(static_cast<int>(i / sN));
    }
    for (uint32_t i = 0; i < n; ++i) pick.push_back(static_cast<int>(i * sN));
    llvm::Value* wideMask = llvm::ConstantVector::get(pattern);
    if (mask) wideMask = b_.CreateAnd(wideMask, b_.CreateShuffleVector(mask, spread));
    llvm::Value* v = b_.CreateMaskedLoad(wide, b_.CreateGEP(st, base, ix->base), align, wideMask,
                                         llvm::Constant::getNullValue(wide));
    return Val{fromStorage(b_.CreateShuffleVector(v, pick), s.dtype), true};
  }
  llvm::Value* ptrs = b_.CreateGEP(st, base, indexLanes(*ix, r));
  if (ix->kind == K::kUniform) ptrs = b_.CreateVectorSplat(n, b_.CreateGEP(st, base, ix->base));
  llvm::Value* allOn = llvm::Constant::getAllOnesValue(llvm::VectorType::get(b_.getInt1Ty(), n, false));
  llvm::Value* v = b_.CreateMaskedGather(vt, ptrs, align, mask ? mask : allOn, zero);
  return Val{fromStorage(v, s.dtype), true};
}

sdk::Status KernelLowering::store(const plugsdk_stmt_t& s, size_t pos, Region& r) {
  return inOneThread(r, [&] { return storeAll(s, pos, r); });
}

sdk::Status KernelLowering::storeAll(const plugsdk_stmt_t& s, size_t pos, Region& r) {
  const plugsdk_kernel_arg_t& arg = k_.arg(static_cast<size_t>(s.arg));
  llvm::Type* st = storageType(arg.dtype);
  if (!st) return fail(pos, "a store of dtype " + std::to_string(arg.dtype));
  const llvm::Align align(dtypeBytes(arg.dtype));
  sdk::StatusOr<IndexVal> ix = index(s.index, r);
  if (!ix.isOk()) return ix.status();
  const Val v = values_[static_cast<size_t>(s.operands[0])];
  llvm::Value* base = argPointer(s.arg);
  using K = IndexVal::Kind;
  const bool perLane = v.varying || ix->kind != K::kUniform;
  if (s.op != PLUGSDK_COMBINE_NONE) {
    // Every active lane combines its own value, even when lanes share the element and value.
    if (r.lanes == 1) return combiningStore(s, b_.CreateGEP(st, base, ix->base), v.v, nullptr, 1);
    llvm::Value* ptrs = ix->kind == K::kUniform ? b_.CreateVectorSplat(r.lanes, b_.CreateGEP(st, base, ix->base))
                                                : b_.CreateGEP(st, base, indexLanes(*ix, r));
    return combiningStore(s, ptrs, widen(v, r.lanes), r.mask, r.lanes);
  }
  if (!perLane) {
    // Every lane writes the same element with the same value: one store (the tail has at
    // least one active lane).
    b_.CreateAlignedStore(toStorage(v.v, arg.dtype), b_.CreateGEP(st, base, ix->base), align);
    return sdk::Status::ok();
  }
  llvm::Value* data = toStorage(widen(v, r.lanes), arg.dtype);
  if (ix->kind == K::kAffine && ix->stride == 1) {
    llvm::Value* ptr = b_.CreateGEP(st, base, ix->base);
    const llvm::Align va = vectorAlign(s.index, r, arg.dtype);
    if (r.mask)
      b_.CreateMaskedStore(data, ptr, va, r.mask);
    else
      b_.CreateAlignedStore(data, ptr, va);
    return sdk::Status::ok();
  }
  llvm::Value* ptrs = ix->kind == K::kUniform ? b_.CreateVectorSplat(r.lanes, b_.CreateGEP(st, base, ix->base))
                                              : b_.CreateGEP(st, base, indexLanes(*ix, r));
  llvm::Value* allOn = llvm::Constant::getAllOnesValue(llvm::VectorType::get(b_.getInt1Ty(), r.lanes, false));
  b_.CreateMaskedScatter(data, ptrs, align, r.mask ? r.mask : allOn);
  return sdk::Status::ok();
}

sdk::Status KernelLowering::combiningStore(const plugsdk_stmt_t& s, llvm::Value* ptrs, llvm::Value* value,
                                           llvm::Value* mask, uint32_t lanes) {
  const uint32_t dtype = k_.arg(static_cast<size_t>(s.arg)).dtype;
  llvm::Type* st = storageType(dtype);
  const llvm::Align align(dtypeBytes(dtype));
  const bool fp = dtype >= PLUGSDK_DTYPE_F16;
  const bool isUnsigned = dtype == PLUGSDK_DTYPE_U8 || dtype == PLUGSDK_DTYPE_BOOL;
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    llvm::Value* ptr = lanes == 1 ? ptrs : b_.CreateExtractElement(ptrs, lane);
    llvm::Value* v = lanes == 1 ? value : b_.CreateExtractElement(value, lane);
    llvm::BasicBlock* after = nullptr;
    if (mask) {
      llvm::BasicBlock* on = llvm::BasicBlock::Create(ctx_, "rmw.lane", fn_);
      after = llvm::BasicBlock::Create(ctx_, "rmw.next", fn_);
      b_.CreateCondBr(b_.CreateExtractElement(mask, lane), on, after);
      b_.SetInsertPoint(on);
    }
    // Integer sum, max and min map onto atomicrmw; everything else is a compare-and-swap loop.
    std::optional<llvm::AtomicRMWInst::BinOp> rmw;
    if (!fp && dtype != PLUGSDK_DTYPE_BOOL) {
      if (s.op == PLUGSDK_COMBINE_SUM) rmw = llvm::AtomicRMWInst::Add;
      if (s.op == PLUGSDK_COMBINE_MAX) rmw = isUnsigned ? llvm::AtomicRMWInst::UMax : llvm::AtomicRMWInst::Max;
      if (s.op == PLUGSDK_COMBINE_MIN) rmw = isUnsigned ? llvm::AtomicRMWInst::UMin : llvm::AtomicRMWInst::Min;
    } else if (dtype == PLUGSDK_DTYPE_BOOL) {
      rmw = (s.op == PLUGSDK_COMBINE_SUM || s.op == PLUGSDK_COMBINE_MAX) ? llvm::AtomicRMWInst::Or
                                                                         : llvm::AtomicRMWInst::And;
    }
    if (target_.floatAtomicAdd && s.op == PLUGSDK_COMBINE_SUM &&
        (dtype == PLUGSDK_DTYPE_F32 || dtype == PLUGSDK_DTYPE_F64))
      rmw = llvm::AtomicRMWInst::FAdd;
    if (rmw) {
      b_.CreateAtomicRMW(*rmw, ptr, toStorage(v, dtype), align, llvm::AtomicOrdering::Monotonic);
    } else {
      llvm::Type* it = b_.getIntNTy(dtypeBytes(dtype) * 8);
      llvm::BasicBlock* pre = b_.GetInsertBlock();
      llvm::BasicBlock* loopB = llvm::BasicBlock::Create(ctx_, "cas", fn_);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "cas.done", fn_);
      llvm::LoadInst* first = b_.CreateAlignedLoad(it, ptr, align);
      first->setAtomic(llvm::AtomicOrdering::Monotonic);
      b_.CreateBr(loopB);
      b_.SetInsertPoint(loopB);
      llvm::PHINode* old = b_.CreatePHI(it, 2);
      old->addIncoming(first, pre);
      llvm::Value* oldV = fromStorage(b_.CreateBitCast(old, st), dtype);
      llvm::Value* nv = nullptr;
      switch (s.op) {
        case PLUGSDK_COMBINE_SUM: nv = fp ? b_.CreateFAdd(oldV, v) : b_.CreateAdd(oldV, v); break;
        case PLUGSDK_COMBINE_PROD: nv = fp ? b_.CreateFMul(oldV, v) : b_.CreateMul(oldV, v); break;
        default: nv = maxMin(oldV, v, dtype, s.op == PLUGSDK_COMBINE_MAX);
      }
      llvm::Value* newBits = b_.CreateBitCast(toStorage(roundTo(nv, dtype), dtype), it);
      llvm::Value* pair = b_.CreateAtomicCmpXchg(ptr, old, newBits, align, llvm::AtomicOrdering::Monotonic,
                                                 llvm::AtomicOrdering::Monotonic);
      old->addIncoming(b_.CreateExtractValue(pair, 0), b_.GetInsertBlock());
      b_.CreateCondBr(b_.CreateExtractValue(pair, 1), done, loopB);
      b_.SetInsertPoint(done);
    }
    if (after) {
      b_.CreateBr(after);
      b_.SetInsertPoint(after);
    }
  }
  return sdk::Status::ok();
}

}  // namespace plugsdk::lowering
