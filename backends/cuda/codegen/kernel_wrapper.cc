// The launched kernel around the lowering's entry (see kernel_wrapper.h).
#include "backends/cuda/codegen/kernel_wrapper.h"

#include <algorithm>
#include <cstdint>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

namespace plugsdk::cuda {

const char* mappingName(ThreadMapping::Kind k) {
  switch (k) {
    case ThreadMapping::Kind::kPointPerThread: return "point-per-thread";
    case ThreadMapping::Kind::kLanesPerThread: return "lanes-per-thread";
    case ThreadMapping::Kind::kBlockPerPoint: return "block-per-point";
  }
  return "?";
}

void addKernelWrapper(llvm::Module& m, const sdk::KernelView& k, const std::string& entry,
                      const std::string& alignedEntry, const std::string& name, const ThreadMapping& mapping,
                      size_t innerDims) {
  llvm::LLVMContext& ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Function* body = m.getFunction(entry);
  llvm::Function* alignedBody = alignedEntry.empty() ? nullptr : m.getFunction(alignedEntry);
  for (llvm::Function* f : {body, alignedBody}) {
    if (!f) continue;
    f->setLinkage(llvm::GlobalValue::InternalLinkage);
    f->addFnAttr(llvm::Attribute::AlwaysInline);
  }

  const size_t nArgs = k.numArgs(), nSyms = k.numSymbols(), rank = k.numGrid();
  std::vector<llvm::Type*> params(nArgs, ptr);
  params.insert(params.end(), nSyms + rank, i64);
  params.push_back(ptr);  // the status word
  auto* f = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), params, false),
                                   llvm::Function::ExternalLinkage, name, &m);
  f->setCallingConv(llvm::CallingConv::PTX_Kernel);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  if (body->hasFnAttribute("target-cpu")) f->addFnAttr(body->getFnAttribute("target-cpu"));
  // LLVM 19 still reads kernels from nvvm.annotations as well as from the calling convention.
  auto annotate = [&](const char* key, uint32_t value) {
    m.getOrInsertNamedMetadata("nvvm.annotations")
        ->addOperand(llvm::MDNode::get(ctx, {llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx, key),
                                             llvm::ConstantAsMetadata::get(b.getInt32(value))}));
  };
  annotate("kernel", 1);
  annotate("maxntidx", mapping.blockThreads);
  if (mapping.minBlocksPerSm > 0) annotate("minctasm", mapping.minBlocksPerSm);

  llvm::BasicBlock* start = llvm::BasicBlock::Create(ctx, "entry", f);
  llvm::BasicBlock* run = llvm::BasicBlock::Create(ctx, "run", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "done", f);
  b.SetInsertPoint(start);
  // The CallFrame and its arrays in local memory; SROA turns them back into the parameters.
  auto array = [&](llvm::Type* t, size_t n, size_t first, const char* what) {
    llvm::Value* a = b.CreateAlloca(t, b.getInt64(std::max<size_t>(n, 1)), what);
    for (size_t i = 0; i < n; ++i)
      b.CreateStore(f->getArg(static_cast<unsigned>(first + i)), b.CreateConstGEP1_64(t, a, i));
    return a;
  };
  llvm::Value* args = array(ptr, nArgs, 0, "args");
  llvm::Value* syms = array(i64, nSyms, nArgs, "symbols");
  llvm::Value* grid = array(i64, rank, nArgs + nSyms, "grid");
  llvm::Value* frame = b.CreateAlloca(ptr, b.getInt64(4), "frame");
  llvm::Value* fields[4] = {args, syms, grid, f->getArg(static_cast<unsigned>(nArgs + nSyms + rank))};
  for (int i = 0; i < 4; ++i) b.CreateStore(fields[i], b.CreateConstGEP1_64(ptr, frame, i));

  auto sreg = [&](llvm::Intrinsic::ID id) { return b.CreateZExt(b.CreateIntrinsic(id, {}, {}), i64); };
  llvm::Value* block = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  llvm::Value* thread = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  // The extents: constants where the kernel has them (divisions by them become
  // multiplications), the launch's values otherwise. inner: the entries' inner range.
  auto extent = [&](size_t d) -> llvm::Value* {
    sdk::StatusOr<int64_t> c = sdk::evalIndex(k.indexPool(), k.grid(d), sdk::IndexEnv{});
    if (c.isOk()) return b.getInt64(static_cast<uint64_t>(*c));
    return f->getArg(static_cast<unsigned>(nArgs + nSyms + d));
  };
  innerDims = std::min(innerDims, rank);
  llvm::Value* inner = b.getInt64(1);
  for (size_t d = rank - innerDims; d < rank; ++d) inner = b.CreateMul(inner, extent(d));
  llvm::Value* outer = b.getInt64(1);
  for (size_t d = 0; d + innerDims < rank; ++d) outer = b.CreateMul(outer, extent(d));
  // One outer point (a rank-1 grid, or all dims in the inner range): every thread in range
  // is in point 0, no division.
  const bool oneOuter = llvm::isa<llvm::ConstantInt>(outer) && llvm::cast<llvm::ConstantInt>(outer)->isOne();
  // Where every thread in range numbers below 2^32 (constant extents) and the divisor is a
  // constant, the division is a 32-bit one (a 32-bit multiply-high instead of a 64-bit one).
  auto narrow = [&](llvm::Value* x, llvm::Value* d, llvm::Value* count, bool rem) -> llvm::Value* {
    auto* n = llvm::dyn_cast<llvm::ConstantInt>(count);
    if (!n || n->getZExtValue() > UINT32_MAX || !llvm::isa<llvm::ConstantInt>(d)) return nullptr;
    llvm::Value *x32 = b.CreateTrunc(x, b.getInt32Ty()), *d32 = b.CreateTrunc(d, b.getInt32Ty());
    return b.CreateZExt(rem ? b.CreateURem(x32, d32) : b.CreateUDiv(x32, d32), i64);
  };
  auto quotient = [&](llvm::Value* x, llvm::Value* d, llvm::Value* count) {
    if (oneOuter) return static_cast<llvm::Value*>(b.getInt64(0));
    llvm::Value* q = narrow(x, d, count, false);
    return q ? q : b.CreateUDiv(x, d);
  };
  auto remainder = [&](llvm::Value* x, llvm::Value* d, llvm::Value* count) {
    if (oneOuter) return x;
    llvm::Value* r = narrow(x, d, count, true);
    return r ? r : b.CreateURem(x, d);
  };

  // Which program this thread runs: outer point o, inner points [lo, hi).
  llvm::Value *o = nullptr, *lo = nullptr, *hi = nullptr, *inRange = nullptr;
  switch (mapping.kind) {
    case ThreadMapping::Kind::kPointPerThread:
    case ThreadMapping::Kind::kBlockPerPoint: {
      const bool perBlock = mapping.kind == ThreadMapping::Kind::kBlockPerPoint;
      const bool perWarp = perBlock && mapping.pointsPerBlock > 1;
      llvm::Value* point = perWarp ? b.CreateAdd(b.CreateMul(block, b.getInt64(mapping.pointsPerBlock)),
                                                 b.CreateLShr(thread, b.getInt64(5)), "point")
                           : perBlock
                               ? block
                               : b.CreateAdd(b.CreateMul(block, b.getInt64(mapping.blockThreads)), thread, "point");
      // Every thread of a block-per-point program reaches the entry (it synchronizes the
      // block), and every block launched is a point; a warp-per-point program's warps past
      // the last point leave (they share no barrier with the others).
      inRange = perBlock && !perWarp ? b.getTrue() : b.CreateICmpULT(point, b.CreateMul(outer, inner));
      o = quotient(point, inner, b.CreateMul(outer, inner));
      lo = remainder(point, inner, b.CreateMul(outer, inner));
      hi = b.CreateAdd(lo, b.getInt64(1), "", /*HasNUW=*/true, /*HasNSW=*/true);
      break;
    }
    case ThreadMapping::Kind::kLanesPerThread: {
      llvm::Value* lanes = b.getInt64(mapping.lanes);
      llvm::Value* chunks = b.CreateUDiv(b.CreateAdd(inner, b.getInt64(mapping.lanes - 1)), lanes, "chunks");
      llvm::Value* t = b.CreateAdd(b.CreateMul(block, b.getInt64(mapping.blockThreads)), thread, "t");
      inRange = b.CreateICmpULT(t, b.CreateMul(outer, chunks));
      o = quotient(t, chunks, b.CreateMul(outer, chunks));
      lo = b.CreateMul(remainder(t, chunks, b.CreateMul(outer, chunks)), lanes);
      hi = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b.CreateAdd(lo, lanes), inner);
      break;
    }
  }
  b.CreateCondBr(inRange, run, done);
  b.SetInsertPoint(run);
  // One outer index each (no wrap: the entry's loop over [o, o + 1) is known to run once).
  llvm::Value* next = b.CreateAdd(o, b.getInt64(1), "o.next", /*HasNUW=*/true, /*HasNSW=*/true);

  if (!alignedBody) {
    b.CreateCall(body, {frame, o, next, lo, hi});
    b.CreateBr(done);
    b.SetInsertPoint(done);
    b.CreateRetVoid();
    return;
  }
  // The aligned copy when every pointer is 16-byte aligned and every symbol a multiple of 4.
  llvm::Value* aligned = b.getTrue();
  for (size_t a = 0; a < nArgs; ++a)
    aligned = b.CreateAnd(
        aligned, b.CreateICmpEQ(b.CreateAnd(b.CreatePtrToInt(f->getArg(a), i64), b.getInt64(kAssumedArgAlign - 1)),
                                b.getInt64(0)));
  for (size_t s = 0; s < nSyms; ++s)
    aligned = b.CreateAnd(aligned, b.CreateICmpEQ(b.CreateAnd(f->getArg(static_cast<unsigned>(nArgs + s)),
                                                              b.getInt64(kAssumedSymbolDivisor - 1)),
                                                  b.getInt64(0)));
  llvm::BasicBlock* fast = llvm::BasicBlock::Create(ctx, "aligned", f);
  llvm::BasicBlock* slow = llvm::BasicBlock::Create(ctx, "unaligned", f);
  b.CreateCondBr(aligned, fast, slow);
  for (auto [bb, callee] : {std::pair{fast, alignedBody}, std::pair{slow, body}}) {
    b.SetInsertPoint(bb);
    b.CreateCall(callee, {frame, o, next, lo, hi});
    b.CreateBr(done);
  }
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

}  // namespace plugsdk::cuda
