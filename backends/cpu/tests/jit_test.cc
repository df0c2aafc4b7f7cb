// The JIT's stages on a hand-built module: optimize, emit an object and assembly, load it and
// call it; a malformed module and a damaged object are errors, not crashes; the ISA choice
// refuses what the CPU cannot run.
#include <gtest/gtest.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "backends/cpu/jit.h"

namespace plugsdk::cpu {
namespace {

/// void NAME(float* x, int64 n): x[i] = x[i] * 2 + 1
std::unique_ptr<llvm::Module> scaleModule(llvm::LLVMContext& c, const std::string& name) {
  auto m = std::make_unique<llvm::Module>("test", c);
  llvm::IRBuilder<> b(c);
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getInt64Ty()}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, m.get());
  auto* entry = llvm::BasicBlock::Create(c, "entry", f);
  auto* loop = llvm::BasicBlock::Create(c, "loop", f);
  auto* done = llvm::BasicBlock::Create(c, "done", f);
  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateICmpSGT(f->getArg(1), b.getInt64(0)), loop, done);
  b.SetInsertPoint(loop);
  auto* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(b.getInt64(0), entry);
  auto* p = b.CreateGEP(b.getFloatTy(), f->getArg(0), i);
  auto* v = b.CreateLoad(b.getFloatTy(), p);
  b.CreateStore(b.CreateFAdd(b.CreateFMul(v, llvm::ConstantFP::get(b.getFloatTy(), 2.0)),
                             llvm::ConstantFP::get(b.getFloatTy(), 1.0)),
                p);
  auto* next = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, f->getArg(1)), loop, done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return m;
}

TEST(Jit, CompilesLoadsAndRuns) {
  auto isa = selectIsa(hostFeatures(), "");
  ASSERT_TRUE(isa.isOk()) << isa.status().message();
  auto jit = Jit::create(*isa);
  ASSERT_TRUE(jit.isOk()) << jit.status().message();
  llvm::LLVMContext c;
  auto m = scaleModule(c, "scale");
  ASSERT_TRUE((*jit)->prepare(*m).isOk());
  ASSERT_TRUE((*jit)->optimize(*m, 2).isOk());
  auto obj = (*jit)->emitObject(*m);
  ASSERT_TRUE(obj.isOk()) << obj.status().message();
  auto asmText = (*jit)->emitAssembly(*m);
  ASSERT_TRUE(asmText.isOk());
  EXPECT_NE(asmText->find("scale:"), std::string::npos);
  auto lo = (*jit)->load(*obj, "scale", {"scale"});
  ASSERT_TRUE(lo.isOk()) << lo.status().message();
  auto fn = reinterpret_cast<void (*)(float*, int64_t)>(*(*lo)->lookup("scale"));
  std::vector<float> x = {1, 2, 3, -4.5f};
  fn(x.data(), 4);
  EXPECT_EQ(x, (std::vector<float>{3, 5, 7, -8}));
  EXPECT_FALSE((*lo)->lookup("missing").isOk());
}

TEST(Jit, MalformedModuleIsAnError) {
  auto jit = Jit::create(*selectIsa(hostFeatures(), ""));
  ASSERT_TRUE(jit.isOk());
  llvm::LLVMContext c;
  auto m = scaleModule(c, "bad");
  // A block without a terminator.
  llvm::Function* f = m->getFunction("bad");
  llvm::BasicBlock::Create(c, "dangling", f);
  sdk::Status st = (*jit)->optimize(*m, 2);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("malformed"), std::string::npos) << st.message();
}

TEST(Jit, DamagedObjectIsAnError) {
  auto jit = Jit::create(*selectIsa(hostFeatures(), ""));
  ASSERT_TRUE(jit.isOk());
  auto lo = (*jit)->load(
      "\x7f"
      "ELF this is not an object",
      "garbage", {"f"});
  ASSERT_FALSE(lo.isOk());
  EXPECT_NE(lo.status().message().find("garbage"), std::string::npos) << lo.status().message();
}

TEST(Isa, OverrideAndRefusal) {
  CpuFeatures none;
  none.llvmCpu = "x86-64";
  auto s = selectIsa(none, "");
  ASSERT_TRUE(s.isOk());
  EXPECT_EQ(s->level, IsaLevel::kScalar);
  auto refused = selectIsa(none, "avx512");
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.status().message().find("lacks AVX-512"), std::string::npos);
  EXPECT_FALSE(selectIsa(none, "avx2").isOk());
  auto bad = selectIsa(none, "sse9");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("sse9"), std::string::npos);
  const CpuFeatures& host = hostFeatures();
  if (host.avx512f) {
    auto two = selectIsa(host, "avx2");
    ASSERT_TRUE(two.isOk());
    EXPECT_EQ(two->f32Lanes(), 8u);
    EXPECT_NE(two->llvmFeatures.find("-avx512f"), std::string::npos);
  }
}

}  // namespace
}  // namespace plugsdk::cpu
