// __assertfail calls (device_assert.h).
#include "backends/cuda/codegen/device_assert.h"

#include <llvm/IR/Module.h>

namespace plugsdk::cuda {

namespace {

/// A NUL-terminated string in global memory (address space 1), as a generic pointer; one
/// global per distinct text in the module.
llvm::Value* globalString(llvm::IRBuilder<>& b, llvm::Module& m, const std::string& text) {
  llvm::Constant* init = llvm::ConstantDataArray::getString(m.getContext(), text, true);
  llvm::GlobalVariable* g = nullptr;
  for (llvm::GlobalVariable& x : m.globals())
    if (x.getName().starts_with("assert.text") && x.hasInitializer() && x.getInitializer() == init) g = &x;
  if (!g) {
    g = new llvm::GlobalVariable(m, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init, "assert.text",
                                 nullptr, llvm::GlobalValue::NotThreadLocal, 1);
    g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  }
  return b.CreateAddrSpaceCast(g, b.getPtrTy());
}

}  // namespace

void DeviceAssert::raise(llvm::IRBuilder<>& b, const std::string& kernel, const std::string& message) const {
  llvm::Module& m = *b.GetInsertBlock()->getModule();
  // void __assertfail(const char* message, const char* file, unsigned line, const char* function,
  //                   size_t charSize): CUDA's assert(), resolved by ptxas / the driver.
  llvm::FunctionCallee fail = m.getOrInsertFunction(
      "__assertfail",
      llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getPtrTy(), b.getInt32Ty(), b.getPtrTy(), b.getInt64Ty()},
                              false));
  b.CreateCall(fail, {globalString(b, m, message), globalString(b, m, "plugsdk"), b.getInt32(0),
                      globalString(b, m, "kernel @" + kernel), b.getInt64(1)});
}

}  // namespace plugsdk::cuda
