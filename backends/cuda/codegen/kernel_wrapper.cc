// The launched kernel around the lowering's entry (see kernel_wrapper.h).
#include "backends/cuda/codegen/kernel_wrapper.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

namespace plugsdk::cuda {

void addKernelWrapper(llvm::Module& m, const sdk::KernelView& k, const std::string& entry, const std::string& name) {
  llvm::LLVMContext& ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Function* body = m.getFunction(entry);
  body->setLinkage(llvm::GlobalValue::InternalLinkage);
  body->addFnAttr(llvm::Attribute::AlwaysInline);

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
  m.getOrInsertNamedMetadata("nvvm.annotations")
      ->addOperand(llvm::MDNode::get(ctx, {llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx, "kernel"),
                                           llvm::ConstantAsMetadata::get(b.getInt32(1))}));

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
  llvm::Value* tid = b.CreateAdd(
      b.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
      sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x), "point");
  llvm::Value* inner = b.getInt64(1);
  if (rank) inner = f->getArg(static_cast<unsigned>(nArgs + nSyms + rank - 1));
  llvm::Value* outer = b.getInt64(1);
  for (size_t d = 0; d + 1 < rank; ++d) outer = b.CreateMul(outer, f->getArg(static_cast<unsigned>(nArgs + nSyms + d)));
  b.CreateCondBr(b.CreateICmpULT(tid, b.CreateMul(outer, inner)), run, done);
  b.SetInsertPoint(run);
  llvm::Value* o = b.CreateUDiv(tid, inner);
  llvm::Value* i = b.CreateURem(tid, inner);
  b.CreateCall(body, {frame, o, b.CreateAdd(o, b.getInt64(1)), i, b.CreateAdd(i, b.getInt64(1))});
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

}  // namespace plugsdk::cuda
