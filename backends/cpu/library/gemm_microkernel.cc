// The GEMM micro-kernel generated as LLVM IR for an ISA (see gemm_microkernel.h).
//
// The generated loop keeps MR x (NR / lanes) accumulators in registers; per k step it loads
// NR / lanes vectors of B and broadcasts each of the MR elements of A (LLVM folds the
// broadcast into the FMA's memory operand, vfmadd231ps zmm, zmm, [a]{1to16}), so a k step is
// MR * NR / lanes FMAs against NR / lanes + MR loads. The accumulators are phis of an
// explicit loop rather than allocas, so no pass has to discover that they stay in registers.
#include "backends/cpu/library/gemm_microkernel.h"

#include <atomic>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

namespace plugsdk::cpu {

GemmMicroKernelShape defaultGemmMicroKernelShape(const Isa& isa) {
  GemmMicroKernelShape s;
  switch (isa.level) {
    case IsaLevel::kAvx512:
      // 8x32 (16 ZMM accumulators) measured as fast as 12x32, 14x32, 6x64 and 8x48 on large
      // problems (all ~115 GFLOP/s in L1 on Zen 4) and best on small ones (64^3 has no edge).
      s.mr = 8;
      s.nr = 32;
      break;
    case IsaLevel::kAvx2:
      s.mr = 6;
      s.nr = 16;
      break;
    case IsaLevel::kScalar:
      s.mr = 4;  // 12 accumulators + 3 of B + 1 broadcast = the 16 XMM registers
      s.nr = 3;
      s.prefetchC = false;
      break;
  }
  return s;
}

sdk::Status validateGemmMicroKernelShape(const Isa& isa, const GemmMicroKernelShape& s) {
  const int lanes = static_cast<int>(isa.f32Lanes());
  const std::string what = "GEMM micro-kernel " + std::to_string(s.mr) + "x" + std::to_string(s.nr) + " for " +
                           std::string(isa.name()) + ": ";
  if (s.mr < 1 || s.nr < 1 || s.mr > 64 || s.nr > 256) return sdk::invalidArgument(what + "tile out of range");
  if (s.nr % lanes != 0) return sdk::invalidArgument(what + "NR must be a multiple of " + std::to_string(lanes));
  // Scalar code has 16 XMM registers holding one float each, like the vector paths.
  const int regs = static_cast<int>(isa.vectorRegisters());
  const int vectorsPerRow = s.nr / lanes;
  if (s.mr * vectorsPerRow + vectorsPerRow + 1 > regs)
    return sdk::invalidArgument(what + "needs " + std::to_string(s.mr * vectorsPerRow + vectorsPerRow + 1) +
                                " registers, the ISA has " + std::to_string(regs));
  if (s.unroll < 1 || s.unroll > 16) return sdk::invalidArgument(what + "unroll must be in [1, 16]");
  if (s.prefetchB < 0 || s.prefetchB > 64) return sdk::invalidArgument(what + "prefetch distance out of range");
  return sdk::Status::ok();
}

namespace {

struct Emitter {
  llvm::IRBuilder<>& b;
  llvm::Function* fmuladd;
  llvm::Function* prefetch;
  llvm::Type* vt;  // the accumulator type: <lanes x float>, or float when lanes == 1
  int lanes, mr, nr, nv;
  llvm::Value* bBase = nullptr;  // indirect B: the matrix; the loop's B pointer walks the row offsets

  /// One k step at offset `step` from the panel pointers: acc[i][j] += a[i] * b[j].
  void kStep(llvm::Value* a, llvm::Value* bp, int step, std::vector<llvm::Value*>& acc) {
    llvm::Type* f32 = b.getFloatTy();
    std::vector<llvm::Value*> bv(nv);
    llvm::Value* row = nullptr;
    if (bBase) {
      llvm::Value* off =
          b.CreateAlignedLoad(b.getInt64Ty(), b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), bp, step), llvm::Align(8));
      row = b.CreateInBoundsGEP(f32, bBase, off);
    }
    for (int j = 0; j < nv; ++j) {
      llvm::Value* p = bBase ? b.CreateConstInBoundsGEP1_64(f32, row, static_cast<uint64_t>(j) * lanes)
                             : b.CreateConstInBoundsGEP1_64(f32, bp, static_cast<uint64_t>(step) * nr + j * lanes);
      bv[j] = b.CreateAlignedLoad(vt, p, llvm::Align(4));
    }
    for (int i = 0; i < mr; ++i) {
      llvm::Value* p = b.CreateConstInBoundsGEP1_64(f32, a, static_cast<uint64_t>(step) * mr + i);
      llvm::Value* s = b.CreateAlignedLoad(f32, p, llvm::Align(4));
      if (lanes > 1) s = b.CreateVectorSplat(lanes, s);
      for (int j = 0; j < nv; ++j) acc[i * nv + j] = b.CreateCall(fmuladd, {s, bv[j], acc[i * nv + j]});
    }
  }
};

}  // namespace

llvm::Function* emitGemmMicroKernel(llvm::Module& m, const Isa& isa, const GemmMicroKernelShape& s,
                                    const std::string& name, bool indirectB) {
  llvm::LLVMContext& c = m.getContext();
  llvm::IRBuilder<> b(c);
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* f32 = b.getFloatTy();
  const int lanes = static_cast<int>(isa.f32Lanes());
  llvm::Type* vt = lanes > 1 ? static_cast<llvm::Type*>(llvm::FixedVectorType::get(f32, lanes)) : f32;
  // (kc, a, b, c, ldc, flags), or indirect (kc, a, b, rows, c, ldc, flags).
  std::vector<llvm::Type*> params{i64, ptr, ptr, ptr, i64, b.getInt32Ty()};
  if (indirectB) params.insert(params.begin() + 3, ptr);
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), params, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, m);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  const unsigned cIndex = indirectB ? 4 : 3;
  for (unsigned p = 1; p <= cIndex; ++p) f->addParamAttr(p, llvm::Attribute::NoAlias);
  for (unsigned p = 1; p < cIndex; ++p) f->addParamAttr(p, llvm::Attribute::ReadOnly);
  llvm::Value *kc = f->getArg(0), *aArg = f->getArg(1), *cArg = f->getArg(cIndex);
  // The pointer the k loop walks for B: the packed panel, or the row offsets.
  llvm::Value* bArg = f->getArg(indirectB ? 3 : 2);
  llvm::Value *ldc = f->getArg(cIndex + 1), *flags = f->getArg(cIndex + 2);

  Emitter e{b,
            llvm::Intrinsic::getDeclaration(&m, llvm::Intrinsic::fmuladd, {vt}),
            llvm::Intrinsic::getDeclaration(&m, llvm::Intrinsic::prefetch, {ptr}),
            vt,
            lanes,
            s.mr,
            s.nr,
            s.nr / lanes,
            indirectB ? f->getArg(2) : nullptr};
  const int bStep = indirectB ? 1 : s.nr;  // elements the B pointer advances per k step
  const int nacc = s.mr * e.nv;

  auto* entry = llvm::BasicBlock::Create(c, "entry", f);
  auto* mainLoop = llvm::BasicBlock::Create(c, "main", f);
  auto* remCheck = llvm::BasicBlock::Create(c, "rem.check", f);
  auto* remLoop = llvm::BasicBlock::Create(c, "rem", f);
  auto* store = llvm::BasicBlock::Create(c, "store", f);

  b.SetInsertPoint(entry);
  auto rowPtr = [&](int i) { return b.CreateInBoundsGEP(f32, cArg, b.CreateMul(ldc, b.getInt64(i))); };
  if (s.prefetchC) {
    // Write intent, keep in all levels: the tile is read (accumulate) and written at the end.
    for (int i = 0; i < s.mr; ++i)
      for (int off = 0; off < s.nr; off += 16)
        b.CreateCall(e.prefetch,
                     {b.CreateConstInBoundsGEP1_64(f32, rowPtr(i), off), b.getInt32(1), b.getInt32(3), b.getInt32(1)});
  }
  llvm::Value* zero = llvm::Constant::getNullValue(vt);
  llvm::Value* kMain = b.CreateAnd(kc, b.getInt64(-static_cast<int64_t>(s.unroll)));
  b.CreateCondBr(b.CreateICmpSGT(kMain, b.getInt64(0)), mainLoop, remCheck);

  // Main loop: `unroll` k steps per iteration.
  b.SetInsertPoint(mainLoop);
  auto* kPhi = b.CreatePHI(i64, 2, "k");
  auto* aPhi = b.CreatePHI(ptr, 2, "a");
  auto* bPhi = b.CreatePHI(ptr, 2, "b");
  std::vector<llvm::PHINode*> accPhi(nacc);
  std::vector<llvm::Value*> acc(nacc);
  for (int q = 0; q < nacc; ++q) acc[q] = accPhi[q] = b.CreatePHI(vt, 2, "acc");
  kPhi->addIncoming(b.getInt64(0), entry);
  aPhi->addIncoming(aArg, entry);
  bPhi->addIncoming(bArg, entry);
  for (int q = 0; q < nacc; ++q) accPhi[q]->addIncoming(zero, entry);
  for (int u = 0; u < s.unroll; ++u) {
    if (!indirectB && s.prefetchB > 0 && (u * s.nr * 4) % 64 == 0)
      b.CreateCall(e.prefetch, {b.CreateConstInBoundsGEP1_64(f32, bPhi, static_cast<uint64_t>(s.prefetchB + u) * s.nr),
                                b.getInt32(0), b.getInt32(3), b.getInt32(1)});
    e.kStep(aPhi, bPhi, u, acc);
  }
  llvm::Value* kNext = b.CreateAdd(kPhi, b.getInt64(s.unroll));
  llvm::Value* aNext = b.CreateConstInBoundsGEP1_64(f32, aPhi, static_cast<uint64_t>(s.unroll) * s.mr);
  llvm::Type* bElem = indirectB ? i64 : f32;
  llvm::Value* bNext = b.CreateConstInBoundsGEP1_64(bElem, bPhi, static_cast<uint64_t>(s.unroll) * bStep);
  kPhi->addIncoming(kNext, mainLoop);
  aPhi->addIncoming(aNext, mainLoop);
  bPhi->addIncoming(bNext, mainLoop);
  for (int q = 0; q < nacc; ++q) accPhi[q]->addIncoming(acc[q], mainLoop);
  b.CreateCondBr(b.CreateICmpSLT(kNext, kMain), mainLoop, remCheck);

  // The remaining kc % unroll steps, one at a time.
  b.SetInsertPoint(remCheck);
  auto* kR = b.CreatePHI(i64, 2, "k.r");
  auto* aR = b.CreatePHI(ptr, 2, "a.r");
  auto* bR = b.CreatePHI(ptr, 2, "b.r");
  std::vector<llvm::PHINode*> accR(nacc);
  kR->addIncoming(b.getInt64(0), entry);
  aR->addIncoming(aArg, entry);
  bR->addIncoming(bArg, entry);
  kR->addIncoming(kNext, mainLoop);
  aR->addIncoming(aNext, mainLoop);
  bR->addIncoming(bNext, mainLoop);
  for (int q = 0; q < nacc; ++q) {
    accR[q] = b.CreatePHI(vt, 3, "acc.r");
    accR[q]->addIncoming(zero, entry);
    accR[q]->addIncoming(acc[q], mainLoop);
  }
  b.CreateCondBr(b.CreateICmpSLT(kR, kc), remLoop, store);

  b.SetInsertPoint(remLoop);
  std::vector<llvm::Value*> acc1(accR.begin(), accR.end());
  e.kStep(aR, bR, 0, acc1);
  kR->addIncoming(b.CreateAdd(kR, b.getInt64(1)), remLoop);
  aR->addIncoming(b.CreateConstInBoundsGEP1_64(f32, aR, s.mr), remLoop);
  bR->addIncoming(b.CreateConstInBoundsGEP1_64(bElem, bR, bStep), remLoop);
  for (int q = 0; q < nacc; ++q) accR[q]->addIncoming(acc1[q], remLoop);
  b.CreateBr(remCheck);

  // C (+)= the accumulators.
  b.SetInsertPoint(store);
  auto* addBlock = llvm::BasicBlock::Create(c, "store.add", f);
  auto* setBlock = llvm::BasicBlock::Create(c, "store.set", f);
  llvm::Value* accumulate = b.CreateICmpNE(b.CreateAnd(flags, b.getInt32(kGemmAccumulate)), b.getInt32(0));
  b.CreateCondBr(accumulate, addBlock, setBlock);
  for (int pass = 0; pass < 2; ++pass) {
    b.SetInsertPoint(pass == 0 ? addBlock : setBlock);
    for (int i = 0; i < s.mr; ++i) {
      llvm::Value* row = rowPtr(i);
      for (int j = 0; j < e.nv; ++j) {
        llvm::Value* p = b.CreateConstInBoundsGEP1_64(f32, row, static_cast<uint64_t>(j) * lanes);
        llvm::Value* v = accR[i * e.nv + j];
        if (pass == 0) v = b.CreateFAdd(b.CreateAlignedLoad(vt, p, llvm::Align(4)), v);
        b.CreateAlignedStore(v, p, llvm::Align(4));
      }
    }
    b.CreateRetVoid();
  }
  return f;
}

sdk::StatusOr<GemmKernels> buildGemmKernels(Jit& jit) {
  return buildGemmKernels(jit, defaultGemmMicroKernelShape(jit.isa()));
}

sdk::StatusOr<GemmKernels> buildGemmKernels(Jit& jit, const GemmMicroKernelShape& shape) {
  PLUGSDK_RETURN_IF_ERROR(validateGemmMicroKernelShape(jit.isa(), shape));
  // Symbols of one Jit share a namespace: each build gets its own name.
  static std::atomic<int> serial{0};
  const std::string name = "plugsdk_gemm_ukernel_" + std::string(jit.isa().name()) + "_" + std::to_string(shape.mr) +
                           "x" + std::to_string(shape.nr) + "_" + std::to_string(serial++);
  llvm::LLVMContext ctx;
  auto m = std::make_unique<llvm::Module>(name, ctx);
  PLUGSDK_RETURN_IF_ERROR(jit.prepare(*m));
  const std::string indirectName = name + "_indirect";
  emitGemmMicroKernel(*m, jit.isa(), shape, name);
  emitGemmMicroKernel(*m, jit.isa(), shape, indirectName, /*indirectB=*/true);
  PLUGSDK_RETURN_IF_ERROR(jit.optimize(*m, 3));
  sdk::StatusOr<std::string> obj = jit.emitObject(*m);
  if (!obj.isOk()) return obj.status();
  sdk::StatusOr<std::unique_ptr<LoadedObject>> lo = jit.load(*obj, name, {name, indirectName});
  if (!lo.isOk()) return lo.status();
  sdk::StatusOr<void*> fn = (*lo)->lookup(name);
  if (!fn.isOk()) return fn.status();
  sdk::StatusOr<void*> indirectFn = (*lo)->lookup(indirectName);
  if (!indirectFn.isOk()) return indirectFn.status();
  GemmKernels k;
  k.isa = jit.isa();
  k.shape = shape;
  k.micro = reinterpret_cast<GemmMicroKernelFn>(*fn);
  k.microIndirect = reinterpret_cast<GemmIndirectMicroKernelFn>(*indirectFn);
  k.code = std::shared_ptr<LoadedObject>(std::move(*lo));
  return k;
}

}  // namespace plugsdk::cpu
