// Kernel IR -> LLVM IR -> PTX (see nvptx.h).
#include "backends/cuda/codegen/nvptx.h"

#include <sys/stat.h>

#include <cstdlib>
#include <mutex>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "backends/cuda/codegen/block_group.h"
#include "backends/cuda/codegen/device_assert.h"
#include "backends/cuda/codegen/kernel_wrapper.h"
#include "backends/llvm_lowering/lowering.h"

namespace plugsdk::cuda {

namespace {

constexpr const char* kTriple = "nvptx64-nvidia-cuda";

/// Transcendentals beyond which a kernel is lowered once, one lane per thread (each inlines a
/// polynomial per lane, and libdevice for its rare slow lanes; 700 of them at 4 lanes in two
/// copies took the driver's JIT past the conformance suite's 120 s).
constexpr size_t kMostMathForLanes = 32;

size_t mathCalls(const sdk::KernelView& k) {
  size_t n = 0;
  for (size_t i = 0; i < k.numStmts(); ++i) {
    const plugsdk_stmt_t& s = k.stmt(i);
    if (s.kind != PLUGSDK_STMT_SCALAR) continue;
    const bool transcendental =
        s.op >= PLUGSDK_OP_EXP && s.op <= PLUGSDK_OP_ERF && s.op != PLUGSDK_OP_SQRT && s.op != PLUGSDK_OP_RSQRT;
    if (transcendental || s.op == PLUGSDK_OP_POW || s.op == PLUGSDK_OP_ATAN2 || s.op == PLUGSDK_OP_FMOD ||
        s.op == PLUGSDK_OP_REMAINDER)
      ++n;
  }
  return n;
}

/// Points per block of a warp-per-point kernel.
constexpr uint32_t kWarpPoints = 4;

/// Threads per block for a loop-mode kernel: enough to give each thread a chunk of the
/// longest loop whose extent is known (the chunks of every row of a loop of several dims, as
/// the lowering spreads them), between a warp and kBlockThreads.
uint32_t loopBlockThreads(const sdk::KernelView& k, uint32_t lanes) {
  uint64_t need = 0;
  for (size_t i = 0; i < k.numStmts(); ++i) {
    const plugsdk_stmt_t& s = k.stmt(i);
    if (s.kind != PLUGSDK_STMT_LOOP || s.num_loop_sizes == 0) continue;
    uint64_t chunks = 1;
    for (size_t d = 0; d < s.num_loop_sizes; ++d) {
      sdk::StatusOr<int64_t> n = sdk::evalIndex(k.indexPool(), s.loop_sizes[d], sdk::IndexEnv{});
      if (!n.isOk()) return kBlockThreads;  // depends on the launch: the most
      const uint64_t e = static_cast<uint64_t>(std::max<int64_t>(*n, 0));
      chunks = std::min<uint64_t>(chunks * (d + 1 == s.num_loop_sizes ? (e + lanes - 1) / lanes : e), 1u << 20);
    }
    need = std::max<uint64_t>(need, chunks);
  }
  uint32_t threads = kWarpSize;
  while (threads < kBlockThreads && threads < need) threads *= 2;
  return threads;
}

sdk::StatusOr<std::unique_ptr<llvm::TargetMachine>> targetMachine(const GpuArch& arch) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(kTriple, err);
  if (!t) return sdk::failedPrecondition("this LLVM has no NVPTX target: " + err);
  llvm::TargetOptions to;  // IEEE: no fast-math, the kernel IR's NaN and signed-zero rules hold
  auto* tm = t->createTargetMachine(kTriple, arch.name(), "", to, std::nullopt, std::nullopt,
                                    llvm::CodeGenOptLevel::Aggressive);
  if (!tm) return sdk::internalError("LLVM cannot create an NVPTX target machine for " + arch.name());
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

std::string printModule(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

/// Links the libdevice functions `m` calls, or names the first one that cannot be had.
sdk::Status linkLibdevice(llvm::Module& m, const std::string& path, const std::string& kernel) {
  // The lowering calls libm by its C names; libdevice has each as __nv_<name>. The device
  // assert (device_assert.h) is the driver's, not libdevice's.
  std::string needed;
  for (llvm::Function& f : m) {
    if (!f.isDeclaration() || f.isIntrinsic() || f.getName() == "__assertfail") continue;
    if (!f.getName().starts_with("__nv_")) f.setName("__nv_" + f.getName());
    needed = f.getName().str();
  }
  if (needed.empty()) return sdk::Status::ok();
  if (path.empty())
    return sdk::unimplemented(kernel + " calls " + needed +
                              " from libdevice, and no libdevice.10.bc was found (set PLUGSDK_CUDA_LIBDEVICE or "
                              "CUDA_HOME)");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) return sdk::failedPrecondition("cannot read libdevice " + path + ": " + buf.getError().message());
  llvm::Expected<std::unique_ptr<llvm::Module>> lib = llvm::parseBitcodeFile((*buf)->getMemBufferRef(), m.getContext());
  if (!lib) return sdk::failedPrecondition("libdevice " + path + " is not bitcode: " + llvm::toString(lib.takeError()));
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::LinkOnlyNeeded))
    return sdk::internalError(kernel + ": linking libdevice " + path + " failed");
  // libdevice asks __nvvm_reflect whether to flush denormals: no (IEEE semantics).
  m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  return sdk::Status::ok();
}

}  // namespace

const char* llvmVersionString() { return LLVM_VERSION_STRING; }

bool PtxOptions::fastExpByDefault() {
  const char* v = std::getenv("PLUGSDK_CUDA_FAST_EXP");
  return v != nullptr && (std::string(v) == "1" || std::string(v) == "on");
}

std::string findLibdevice() {
  auto exists = [](const std::string& p) {
    struct stat st{};
    return !p.empty() && stat(p.c_str(), &st) == 0;
  };
  if (const char* p = std::getenv("PLUGSDK_CUDA_LIBDEVICE")) return exists(p) ? p : "";
  for (const char* home : {static_cast<const char*>(std::getenv("CUDA_HOME")),
                           static_cast<const char*>(std::getenv("CUDA_PATH")), "/usr/local/cuda"}) {
    if (!home) continue;
    const std::string p = std::string(home) + "/nvvm/libdevice/libdevice.10.bc";
    if (exists(p)) return p;
  }
  return "";
}

sdk::StatusOr<PtxKernel> compileToPtx(const sdk::KernelView& k, const GpuArch& arch, const std::string& entry,
                                      const PtxOptions& options) {
  const std::string what = "kernel @" + std::string(k.name());
  sdk::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = targetMachine(arch);
  if (!tm.isOk()) return tm.status();
  llvm::LLVMContext ctx;
  lowering::Target target;
  target.cpu = arch.name();
  const bool heavy = mathCalls(k) > kMostMathForLanes;
  target.f32Lanes = heavy ? 1 : options.lanes;
  target.stopOnFailure = false;
  static const DeviceAssert deviceAssert;  // stateless
  target.raiser = &deviceAssert;
  // Transcendentals: the lowering's polynomials (measured on the H100: libdevice's expf made
  // the row softmax 13% slower, its sinf/cosf were no faster), libdevice for what they lack
  // and for erf: the polynomial evaluates both of its ranges and an exp on every lane
  // (vit_b_16's GELU kernels were compute-bound, 86 us on the H200 where inductor's, with
  // libdevice's erff, took 29 us); libdevice's branches on the range, per thread.
  target.libraryMath = uint64_t{1} << PLUGSDK_OP_ERF;
  target.nativeBf16 = arch.major >= 8;
  target.nanMinMax = arch.major >= 8;  // max.NaN.f32 / min.NaN.f32 (PTX 7.0, sm_80)
  if (options.fastExp) target.exp2Intrinsic = llvm::Intrinsic::nvvm_ex2_approx_ftz_f;
  target.collapseGrid = true;               // the wrapper walks LoweredKernel::innerGridDims as one range
  target.floatAtomicAdd = arch.major >= 6;  // red.global.add.f32 / .f64
  ThreadMapping mapping;
  const lowering::VectorMode mode = lowering::chooseMode(k, target);
  std::unique_ptr<BlockGroup> group;
  if (mode == lowering::VectorMode::kLoop) {
    mapping.kind = ThreadMapping::Kind::kBlockPerPoint;
    mapping.blockThreads = loopBlockThreads(k, target.f32Lanes);
    // Short loops (at most two rounds of a warp's chunks: attention's rows of 197): a warp
    // per point and kWarpPoints points per block. Reductions stay in the warp's shuffles (no
    // shared memory, no block barrier), and blocks are not a 64-thread sliver each (measured
    // on the H100: vit's softmax was 136 us at 18% of bandwidth, latency-bound).
    const bool perWarp = mapping.blockThreads <= 2 * kWarpSize;
    if (perWarp) {
      mapping.pointsPerBlock = kWarpPoints;
      mapping.blockThreads = kWarpSize * kWarpPoints;
    }
    group = std::make_unique<BlockGroup>(perWarp ? kWarpSize : mapping.blockThreads, perWarp);
    target.group = group.get();
  } else if (mode == lowering::VectorMode::kGrid) {
    mapping.kind = ThreadMapping::Kind::kLanesPerThread;
    mapping.lanes = options.lanes;
  }
  // The entry twice: assuming nothing, and assuming the launch's usual alignment (which only
  // matters to vector accesses).
  const std::string body = entry + "_body", alignedBody = heavy ? "" : entry + "_body_aligned";
  sdk::StatusOr<lowering::LoweredKernel> lowered = lowering::lowerKernel(ctx, k, target, body);
  if (!lowered.isOk()) return lowered.status().withContext(what);
  llvm::Module& m = *lowered->module;
  m.setTargetTriple(kTriple);
  m.setDataLayout((*tm)->createDataLayout());
  if (!alignedBody.empty()) {
    target.argAlign = kAssumedArgAlign;
    target.symbolDivisor = kAssumedSymbolDivisor;
    sdk::StatusOr<lowering::LoweredKernel> aligned = lowering::lowerKernel(ctx, k, target, alignedBody);
    if (!aligned.isOk()) return aligned.status().withContext(what);
    if (aligned->innerGridDims != lowered->innerGridDims)
      return sdk::internalError(what + ": the entry's two copies walk different grid dims");
    aligned->module->setTargetTriple(kTriple);
    aligned->module->setDataLayout(m.getDataLayout());
    if (llvm::Linker::linkModules(m, std::move(aligned->module)))
      return sdk::internalError(what + ": linking the aligned copy of the entry failed");
  }
  if (llvm::GlobalVariable* counters = m.getNamedGlobal(kSplitCountersSymbol)) {
    counters->setInitializer(llvm::Constant::getNullValue(counters->getValueType()));
    counters->setAlignment(llvm::Align(16));
  }
  mapping.minBlocksPerSm = options.minBlocksPerSm;
  addKernelWrapper(m, k, body, alignedBody, entry, mapping, lowered->innerGridDims);
  if (options.breakIr) llvm::BasicBlock::Create(ctx, "broken_on_purpose", m.getFunction(entry));
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(m, &es))
    return sdk::internalError(what + ": the generated LLVM IR is malformed: " + err + "\n" + printModule(m));
  sdk::Status st = linkLibdevice(m, options.libdevice, what);
  if (!st.isOk()) return st;
  for (llvm::Function& f : m)
    if (!f.isDeclaration() && f.getName() != entry) f.setLinkage(llvm::GlobalValue::InternalLinkage);

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm->get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(options.optLevel >= 3 ? llvm::OptimizationLevel::O3 : llvm::OptimizationLevel::O2)
      .run(m, mam);

  PtxKernel out;
  out.entry = entry;
  out.mapping = mapping;
  if (lowered->splitLoop) {
    const plugsdk_stmt_t& loop = k.stmt(*lowered->splitLoop);
    out.mapping.splittable = true;
    out.mapping.lanes = target.f32Lanes;
    out.mapping.splitDim = loop.loop_sizes[loop.num_loop_sizes - 1];
    out.splitStmt = static_cast<int64_t>(*lowered->splitLoop);
  }
  out.checkMessages = lowered->checkMessages;
  out.llvmIr = printModule(m);
  llvm::SmallVector<char, 0> text;
  llvm::raw_svector_ostream os(text);
  llvm::legacy::PassManager pm;
  if ((*tm)->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    return sdk::internalError("LLVM cannot emit PTX for " + arch.name());
  pm.run(m);
  out.ptx.assign(text.data(), text.size());
  return out;
}

}  // namespace plugsdk::cuda
