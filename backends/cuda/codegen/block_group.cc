// Combines across a CUDA block (see block_group.h).
#include "backends/cuda/codegen/block_group.h"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

namespace plugsdk::cuda {

namespace {

constexpr unsigned kSharedAddressSpace = 3;

/// `v` exchanged with the lane whose index differs by `laneXor`, 32 bits at a time.
llvm::Value* shuffleXor(llvm::IRBuilder<>& b, llvm::Value* activeMask, llvm::Value* v, uint32_t laneXor) {
  auto shfl32 = [&](llvm::Value* x) {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                             {activeMask, x, b.getInt32(laneXor), b.getInt32(kWarpSize - 1)});
  };
  llvm::Type* t = v->getType();
  const unsigned bits = t->getPrimitiveSizeInBits();
  if (bits == 64) {
    auto* pair = llvm::FixedVectorType::get(b.getInt32Ty(), 2);
    llvm::Value* halves = b.CreateBitCast(v, pair);
    llvm::Value* lo = shfl32(b.CreateExtractElement(halves, uint64_t{0}));
    llvm::Value* hi = shfl32(b.CreateExtractElement(halves, uint64_t{1}));
    llvm::Value* joined =
        b.CreateInsertElement(b.CreateInsertElement(llvm::PoisonValue::get(pair), lo, uint64_t{0}), hi, uint64_t{1});
    return b.CreateBitCast(joined, t);
  }
  if (t->isFloatTy()) return b.CreateBitCast(shfl32(b.CreateBitCast(v, b.getInt32Ty())), t);
  if (bits == 32) return shfl32(v);
  return b.CreateTrunc(shfl32(b.CreateZExt(v, b.getInt32Ty())), t);  // i1, i8, i16
}

}  // namespace

llvm::Value* BlockGroup::threadIndex(llvm::IRBuilder<>& b) const {
  llvm::Value* tid = b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {});
  if (perWarp_) tid = b.CreateAnd(tid, kWarpSize - 1);
  return b.CreateZExt(tid, b.getInt64Ty(), "tid");
}

std::vector<llvm::Value*> BlockGroup::allReduce(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& fields,
                                                const Combine& combine) const {
  llvm::Value* active = b.CreateIntrinsic(llvm::Intrinsic::nvvm_activemask, {}, {});
  std::vector<llvm::Value*> x = fields;
  for (uint32_t laneXor = kWarpSize / 2; laneXor >= 1; laneXor /= 2) {
    std::vector<llvm::Value*> y;
    for (llvm::Value* v : x) y.push_back(shuffleXor(b, active, v, laneXor));
    x = combine(x, y);
  }
  if (threads_ <= kWarpSize) return x;

  // Across warps: lane 0 of each warp publishes, every thread combines the slots in order.
  const uint32_t warps = threads_ / kWarpSize;
  llvm::Module& m = *b.GetInsertBlock()->getModule();
  llvm::Value* tid = b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {});
  llvm::Value* warp = b.CreateLShr(tid, 5);
  std::vector<llvm::GlobalVariable*> slots;
  for (llvm::Value* v : x) {
    auto* at = llvm::ArrayType::get(v->getType(), warps);
    slots.push_back(new llvm::GlobalVariable(m, at, false, llvm::GlobalValue::InternalLinkage,
                                             llvm::UndefValue::get(at), "warp.partials", nullptr,
                                             llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace));
    // Explicitly: LLVM vectorizes the reads of the slots, and the PTX must declare the
    // alignment that needs (without it a 16-byte read of a 4-aligned array is a misaligned
    // address at run time).
    slots.back()->setAlignment(llvm::Align(16));
  }
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* publish = llvm::BasicBlock::Create(b.getContext(), "warp.publish", fn);
  llvm::BasicBlock* gather = llvm::BasicBlock::Create(b.getContext(), "warp.gather", fn);
  b.CreateCondBr(b.CreateICmpEQ(b.CreateAnd(tid, kWarpSize - 1), b.getInt32(0)), publish, gather);
  b.SetInsertPoint(publish);
  for (size_t f = 0; f < x.size(); ++f)
    b.CreateStore(x[f], b.CreateInBoundsGEP(slots[f]->getValueType(), slots[f], {b.getInt32(0), warp}));
  b.CreateBr(gather);
  b.SetInsertPoint(gather);
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
  auto slot = [&](size_t f, uint32_t w) {
    llvm::Type* t = x[f]->getType();
    return b.CreateLoad(t, b.CreateInBoundsGEP(slots[f]->getValueType(), slots[f], {b.getInt32(0), b.getInt32(w)}));
  };
  std::vector<llvm::Value*> r;
  for (size_t f = 0; f < x.size(); ++f) r.push_back(slot(f, 0));
  for (uint32_t w = 1; w < warps; ++w) {
    std::vector<llvm::Value*> y;
    for (size_t f = 0; f < x.size(); ++f) y.push_back(slot(f, w));
    r = combine(r, y);
  }
  // The slots may be written again (the entry is inlined twice, loops may follow): wait
  // until every thread has read them.
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
  return r;
}

llvm::Value* BlockGroup::splitIndex(llvm::IRBuilder<>& b) const {
  return b.CreateZExt(b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y, {}, {}), b.getInt64Ty(), "split");
}

llvm::Value* BlockGroup::splitCount(llvm::IRBuilder<>& b) const {
  return b.CreateZExt(b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y, {}, {}), b.getInt64Ty(),
                      "splits");
}

std::vector<llvm::Value*> BlockGroup::combineSplits(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& fields,
                                                    const std::vector<llvm::Value*>& identity, const Combine& combine,
                                                    llvm::BasicBlock* leave) const {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Module& m = *b.GetInsertBlock()->getModule();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  auto global = [&](llvm::Type* t, uint32_t n, const char* name, unsigned space) {
    auto* at = llvm::ArrayType::get(t, n);
    auto* g =
        new llvm::GlobalVariable(m, at, false, llvm::GlobalValue::InternalLinkage, llvm::Constant::getNullValue(at),
                                 name, nullptr, llvm::GlobalValue::NotThreadLocal, space);
    g->setAlignment(llvm::Align(16));  // as the warp slots above
    return g;
  };
  std::vector<llvm::GlobalVariable*> partials;
  for (llvm::Value* v : fields) partials.push_back(global(v->getType(), kSplitSlots, "split.partials", 1));
  // Declared here, defined once per module after the copies are linked (nvptx.cc).
  llvm::GlobalVariable* counters = m.getNamedGlobal(kSplitCountersSymbol);
  if (!counters)
    counters =
        new llvm::GlobalVariable(m, llvm::ArrayType::get(i32, kSplitSlots), false, llvm::GlobalValue::ExternalLinkage,
                                 nullptr, kSplitCountersSymbol, nullptr, llvm::GlobalValue::NotThreadLocal, 1);
  llvm::GlobalVariable* lastFlag = global(i32, 1, "split.last", kSharedAddressSpace);
  auto at = [&](llvm::GlobalVariable* g, llvm::Value* i) {
    return b.CreateInBoundsGEP(g->getValueType(), g, {b.getInt64(0), i});
  };

  llvm::Value* point = b.CreateZExt(b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {}, {}), i64);
  llvm::Value* split = splitIndex(b);
  llvm::Value* splits = splitCount(b);
  llvm::Value* base = b.CreateMul(point, splits, "split.base");
  llvm::Value* tid = threadIndex(b);
  // A launch that did not split (one block per point: any number of points, so the slots
  // must not be touched) has its result already.
  llvm::BasicBlock* alone = b.GetInsertBlock();
  llvm::BasicBlock* shared = llvm::BasicBlock::Create(ctx, "split.shared", fn);
  llvm::BasicBlock* joined = llvm::BasicBlock::Create(ctx, "split.joined", fn);
  b.CreateCondBr(b.CreateICmpUGT(splits, b.getInt64(1)), shared, joined);
  b.SetInsertPoint(shared);
  // Thread 0 publishes, then counts itself in; the split that completes the count is last.
  llvm::BasicBlock* publish = llvm::BasicBlock::Create(ctx, "split.publish", fn);
  llvm::BasicBlock* decide = llvm::BasicBlock::Create(ctx, "split.decide", fn);
  b.CreateCondBr(b.CreateICmpEQ(tid, b.getInt64(0)), publish, decide);
  b.SetInsertPoint(publish);
  for (size_t f = 0; f < fields.size(); ++f) b.CreateStore(fields[f], at(partials[f], b.CreateAdd(base, split)), true);
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_gl, {}, {});
  llvm::Value* counter = at(counters, point);
  llvm::Value* before = b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, counter, b.getInt32(1), llvm::Align(4),
                                          llvm::AtomicOrdering::Monotonic);
  llvm::Value* last = b.CreateICmpEQ(b.CreateZExt(before, i64), b.CreateSub(splits, b.getInt64(1)));
  llvm::BasicBlock* tell = llvm::BasicBlock::Create(ctx, "split.tell", fn);
  b.CreateBr(tell);
  b.SetInsertPoint(tell);
  b.CreateStore(b.CreateZExt(last, i32), at(lastFlag, b.getInt64(0)));
  b.CreateBr(decide);
  b.SetInsertPoint(decide);
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
  llvm::Value* isLast = b.CreateICmpNE(b.CreateLoad(i32, at(lastFlag, b.getInt64(0))), b.getInt32(0));
  llvm::BasicBlock* gather = llvm::BasicBlock::Create(ctx, "split.gather", fn);
  b.CreateCondBr(isLast, gather, leave);

  // The last split: thread t combines partials t, t + threads, ... in order (empty slots as
  // the identity), then the block combines the threads'.
  b.SetInsertPoint(gather);
  std::vector<llvm::Value*> x = identity;
  for (uint32_t k = 0; k < kSplitsPerThread; ++k) {
    llvm::Value* s = b.CreateAdd(tid, b.getInt64(uint64_t{k} * threads_));
    llvm::Value* have = b.CreateICmpULT(s, splits);
    llvm::Value* slot = b.CreateAdd(base, b.CreateSelect(have, s, b.getInt64(0)));
    std::vector<llvm::Value*> y;
    for (size_t f = 0; f < fields.size(); ++f) {
      llvm::Value* v = b.CreateLoad(fields[f]->getType(), at(partials[f], slot), true);
      y.push_back(b.CreateSelect(have, v, identity[f]));
    }
    x = k == 0 ? y : combine(x, y);
  }
  std::vector<llvm::Value*> all = allReduce(b, x, combine);
  llvm::BasicBlock* gathered = b.GetInsertBlock();
  b.CreateBr(joined);
  b.SetInsertPoint(joined);
  std::vector<llvm::Value*> out;
  for (size_t f = 0; f < fields.size(); ++f) {
    llvm::PHINode* phi = b.CreatePHI(fields[f]->getType(), 2);
    phi->addIncoming(fields[f], alone);
    phi->addIncoming(all[f], gathered);
    out.push_back(phi);
  }
  return out;
}

}  // namespace plugsdk::cuda
