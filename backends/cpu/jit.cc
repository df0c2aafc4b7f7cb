// The CPU backend's machine-code stages over LLVM 19 (see jit.h).
#include "backends/cpu/jit.h"

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

namespace plugsdk::cpu {

namespace {

void initializeLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

}  // namespace

std::string_view llvmVersion() { return PLUGSDK_CPU_LLVM_VERSION; }

LoadedObject::~LoadedObject() {
  if (release_) release_();
}

sdk::StatusOr<void*> LoadedObject::lookup(const std::string& symbol) const {
  auto it = symbols_.find(symbol);
  if (it == symbols_.end()) return sdk::notFound("symbol '" + symbol + "' is not in the loaded object");
  return it->second;
}

Jit::~Jit() = default;

sdk::StatusOr<std::unique_ptr<Jit>> Jit::create(const Isa& isa) {
  initializeLlvmOnce();
  std::unique_ptr<Jit> j(new Jit());
  j->isa_ = isa;
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) return sdk::internalError("cannot create the LLVM JIT: " + llvm::toString(jit.takeError()));
  j->jit_ = std::move(*jit);
  // Generated code may call libm and the C library (the scalar fallbacks of math
  // functions, memset): resolve them from the process.
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(j->jit_->getDataLayout().getGlobalPrefix());
  if (!gen) return sdk::internalError("cannot resolve host symbols for the JIT: " + llvm::toString(gen.takeError()));
  j->jit_->getMainJITDylib().addGenerator(std::move(*gen));
  return j;
}

sdk::StatusOr<std::unique_ptr<llvm::TargetMachine>> Jit::targetMachine() const {
  const std::string triple = llvm::sys::getProcessTriple();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target) return sdk::internalError("LLVM has no target for " + triple + ": " + err);
  llvm::TargetOptions to;
  // IEEE semantics: the kernel IR's NaN, infinity and signed-zero rules hold in every op.
  auto* tm = target->createTargetMachine(triple, isa_.llvmCpu, isa_.llvmFeatures, to, llvm::Reloc::PIC_,
                                         llvm::CodeModel::Small, llvm::CodeGenOptLevel::Aggressive);
  if (!tm) return sdk::internalError("LLVM cannot create a target machine for " + triple + " " + isa_.llvmCpu);
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

sdk::Status Jit::prepare(llvm::Module& m) const {
  sdk::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = targetMachine();
  if (!tm.isOk()) return tm.status();
  m.setTargetTriple((*tm)->getTargetTriple().str());
  m.setDataLayout((*tm)->createDataLayout());
  return sdk::Status::ok();
}

sdk::Status Jit::optimize(llvm::Module& m, int level) const {
  std::string msg;
  llvm::raw_string_ostream os(msg);
  if (llvm::verifyModule(m, &os)) return sdk::internalError("the generated LLVM IR is malformed: " + msg);
  sdk::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = targetMachine();
  if (!tm.isOk()) return tm.status();
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = false;  // the code generators vectorize explicitly
  pto.SLPVectorization = false;
  pto.LoopUnrolling = true;
  llvm::PassBuilder pb(tm->get(), pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      pb.buildPerModuleDefaultPipeline(level >= 3 ? llvm::OptimizationLevel::O3 : llvm::OptimizationLevel::O2);
  mpm.run(m, mam);
  return sdk::Status::ok();
}

namespace {

sdk::StatusOr<std::string> emit(llvm::TargetMachine& tm, llvm::Module& m, llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type))
    return sdk::internalError("LLVM cannot emit this file type for " + tm.getTargetTriple().str());
  pm.run(m);
  return std::string(out.data(), out.size());
}

}  // namespace

sdk::StatusOr<std::string> Jit::emitObject(llvm::Module& m) const {
  sdk::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = targetMachine();
  if (!tm.isOk()) return tm.status();
  return emit(**tm, m, llvm::CodeGenFileType::ObjectFile);
}

sdk::StatusOr<std::string> Jit::emitAssembly(llvm::Module& m) const {
  sdk::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = targetMachine();
  if (!tm.isOk()) return tm.status();
  return emit(**tm, m, llvm::CodeGenFileType::AssemblyFile);
}

sdk::StatusOr<std::unique_ptr<LoadedObject>> Jit::load(std::string_view object, const std::string& what,
                                                       const std::vector<std::string>& symbols) {
  std::lock_guard<std::mutex> lock(loadMutex_);
  llvm::orc::JITDylib& jd = jit_->getMainJITDylib();
  llvm::orc::ResourceTrackerSP rt = jd.createResourceTracker();
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), what);
  if (llvm::Error e = jit_->addObjectFile(rt, std::move(buffer)))
    return sdk::internalError(what + ": the JIT cannot add its object file: " + llvm::toString(std::move(e)));
  std::unique_ptr<LoadedObject> lo(new LoadedObject());
  lo->release_ = [rt] { llvm::consumeError(rt->remove()); };
  for (const std::string& s : symbols) {
    auto addr = jit_->lookup(jd, s);
    if (!addr)
      return sdk::internalError(what + ": cannot link symbol '" + s + "': " + llvm::toString(addr.takeError()));
    lo->symbols_[s] = addr->toPtr<void*>();
  }
  return lo;
}

sdk::Status Jit::defineHostSymbol(const std::string& name, void* address) {
  llvm::orc::SymbolMap map;
  map[jit_->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address), llvm::JITSymbolFlags::Exported};
  if (llvm::Error e = jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(map))))
    return sdk::internalError("cannot define host symbol " + name + " for the JIT: " + llvm::toString(std::move(e)));
  return sdk::Status::ok();
}

}  // namespace plugsdk::cpu
