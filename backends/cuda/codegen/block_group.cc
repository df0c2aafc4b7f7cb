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
  return b.CreateZExt(b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {}), b.getInt64Ty(), "tid");
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

}  // namespace plugsdk::cuda
