// The matmul executable (matmul.h).
#include "backends/cuda/library/matmul.h"

#include <algorithm>

#include "backends/cuda/runtime/device.h"
#include "backends/llvm_lowering/dtypes.h"

namespace plugsdk::cuda {

namespace {
constexpr size_t kWorkspaceBytes = size_t{32} << 20;
// cublasLtMatmulPreferenceAttributes_t: the operands' minimum alignments.
constexpr int kPrefMinAlignA = 5, kPrefMinAlignB = 6, kPrefMinAlignC = 7, kPrefMinAlignD = 8;

uint32_t alignmentOf(CUdeviceptr p) {
  uint32_t a = 256;
  while (a > 1 && p % a != 0) a /= 2;
  return a;
}
}  // namespace

sdk::Status LtDevice::ready() {
  if (handle) return sdk::Status::ok();
  ContextGuard g(*api, context);
  sdk::Status st = lt->check(lt->create(&handle), "cublasLtCreate");
  if (!st.isOk()) return st;
  st = api->check(api->memAlloc(&workspace, kWorkspaceBytes), "the cuBLASLt workspace");
  if (!st.isOk()) return st;
  workspaceBytes = kWorkspaceBytes;
  return sdk::Status::ok();
}

sdk::StatusOr<CUdeviceptr> LtDevice::scratchOf(size_t bytes) {
  return scratch.atLeast(*api, context, bytes, "a padded matmul result");
}

LtDevice::~LtDevice() {
  if (!api) return;
  ContextGuard g(*api, context);
  scratch.release(*api);
  if (workspace) api->memFree(workspace);
  if (handle) lt->destroy(handle);
}

struct MatmulExecutable::Prepared {
  const lt::Api* lt = nullptr;
  lt::MatmulDesc desc = nullptr;
  lt::Layout a = nullptr, b = nullptr, d = nullptr;
  lt::Algo algo{};
  ~Prepared() {
    if (d) lt->layoutDestroy(d);
    if (b) lt->layoutDestroy(b);
    if (a) lt->layoutDestroy(a);
    if (desc) lt->descDestroy(desc);
  }
};

MatmulExecutable::~MatmulExecutable() = default;

bool MatmulExecutable::ltDtype() const {
  const uint32_t t = call_.a.dtype, o = call_.out.dtype;
  const bool half = t == PLUGSDK_DTYPE_F16 || t == PLUGSDK_DTYPE_BF16;
  return (half || t == PLUGSDK_DTYPE_F32 || t == PLUGSDK_DTYPE_F64) && call_.b.dtype == t &&
         (o == t || (half && o == PLUGSDK_DTYPE_F32));
}

namespace {

int ltType(uint32_t dtype) {
  return dtype == PLUGSDK_DTYPE_F16    ? lt::kR16F
         : dtype == PLUGSDK_DTYPE_BF16 ? lt::kR16BF
         : dtype == PLUGSDK_DTYPE_F64  ? lt::kR64F
                                       : lt::kR32F;
}

/// The call's attributes: none, or ABI 1.2's result dtype (which the output descriptor holds).
sdk::Status checkAttributes(const std::string& text, uint32_t outDtype) {
  if (text.empty() || text == "{}") return sdk::Status::ok();
  if (text == "dtype = f32" && outDtype == PLUGSDK_DTYPE_F32) return sdk::Status::ok();
  return sdk::unimplemented("prims.matmul with attributes " + text);
}

}  // namespace

sdk::StatusOr<std::unique_ptr<MatmulExecutable>> MatmulExecutable::create(const sdk::LibraryCall& c, LtDevice* lt,
                                                                          CompileKernel compile) {
  sdk::StatusOr<MatmulCall> call = MatmulCall::from(c);
  if (!call.isOk()) return call.status();
  sdk::Status attrs = checkAttributes(std::string(c.attributes), call->out.dtype);
  if (!attrs.isOk()) return attrs;
  auto e = std::unique_ptr<MatmulExecutable>(new MatmulExecutable());
  e->call_ = std::move(*call);
  e->lt_ = lt;
  e->compile_ = std::move(compile);
  e->built_ = matmulKernel(e->call_);
  sdk::Status valid = sdk::KernelView::validate(e->built_->kernel);
  if (!valid.isOk()) return sdk::internalError("the generated matmul kernel is malformed: " + valid.message());
  // Known now (no symbols): build the kernel now when cuBLASLt will not take the call.
  const bool cublas = lt->lt && e->ltDtype();
  sdk::StatusOr<MatmulShape> now = MatmulShape::eval(e->call_, {});
  const bool needKernel = !cublas || (now.isOk() && !planCublasLt(*now));
  if (needKernel) {
    sdk::StatusOr<std::unique_ptr<LoadedKernel>> k = e->compile_(e->built_->view());
    if (!k.isOk()) return k.status();
    e->kernel_ = std::move(*k);
  }
  e->log_ = cublas
                ? "prims.matmul: cuBLASLt (" + lt->lt->path + ")" +
                      (needKernel ? ", this layout by the generated kernel" : "")
                : "prims.matmul: the generated kernel (" +
                      std::string(lt->lt ? "a dtype cuBLASLt does not take here" : "no cuBLASLt on this machine") + ")";
  return e;
}

sdk::Status MatmulExecutable::runKernel(const CUdeviceptr args[3], const std::vector<int64_t>& symbols,
                                        CUstream stream) {
  if (!kernel_) {
    sdk::StatusOr<std::unique_ptr<LoadedKernel>> k = compile_(built_->view());
    if (!k.isOk()) return k.status();
    kernel_ = std::move(*k);
  }
  const std::vector<CUdeviceptr> a(args, args + 3);
  return launchKernel(*kernel_, a, symbols, kernel_->status->address(kernel_->statusSlot), stream);
}

sdk::StatusOr<const MatmulExecutable::Prepared*> MatmulExecutable::prepare(const LtPlan& p, const CUdeviceptr ptrs[3]) {
  const uint32_t alignA = alignmentOf(ptrs[0]), alignB = alignmentOf(ptrs[1]), alignD = alignmentOf(ptrs[2]);
  const std::string key =
      p.describe() + " align " + std::to_string(alignA) + " " + std::to_string(alignB) + " " + std::to_string(alignD);
  auto it = prepared_.find(key);
  if (it != prepared_.end()) return it->second.get();
  const lt::Api& L = *lt_->lt;
  auto pr = std::make_unique<Prepared>();
  pr->lt = &L;
  const uint32_t t = call_.a.dtype;
  const int type = ltType(t);
  const bool f64 = t == PLUGSDK_DTYPE_F64;
  const std::string what = "prims.matmul (" + key + ")";
  sdk::Status st =
      L.check(L.descCreate(&pr->desc, f64 ? lt::kCompute64F : lt::kCompute32F, f64 ? lt::kR64F : lt::kR32F),
              what + ": cublasLtMatmulDescCreate");
  if (st.isOk()) st = L.check(L.descSet(pr->desc, lt::kDescTransA, &p.A.op, sizeof(int32_t)), what + ": TRANSA");
  if (st.isOk()) st = L.check(L.descSet(pr->desc, lt::kDescTransB, &p.B.op, sizeof(int32_t)), what + ": TRANSB");
  auto layout = [&](lt::Layout* l, int type, const LtMatrix& m, int64_t stride) {
    sdk::Status s = L.check(L.layoutCreate(l, type, m.rows, m.cols, m.ld), what + ": cublasLtMatrixLayoutCreate");
    if (s.isOk() && p.batchCount > 1) {
      s = L.check(L.layoutSet(*l, lt::kLayoutBatchCount, &p.batchCount, sizeof(int32_t)), what + ": BATCH_COUNT");
      if (s.isOk())
        s = L.check(L.layoutSet(*l, lt::kLayoutBatchStride, &stride, sizeof(int64_t)), what + ": BATCH_STRIDE");
    }
    return s;
  };
  if (st.isOk()) st = layout(&pr->a, type, p.A, p.aStride);
  if (st.isOk()) st = layout(&pr->b, type, p.B, p.bStride);
  if (st.isOk()) st = layout(&pr->d, ltType(call_.out.dtype), p.D, p.dStride);
  if (!st.isOk()) return st;
  lt::Preference pref = nullptr;
  st = L.check(L.prefCreate(&pref), what + ": cublasLtMatmulPreferenceCreate");
  if (!st.isOk()) return st;
  const uint64_t ws = lt_->workspaceBytes;
  // cuBLASLt's A and B are the call's b and a when swapped (matmul_plan.h).
  const uint32_t alignLtA = p.swapped ? alignB : alignA, alignLtB = p.swapped ? alignA : alignB;
  st = L.check(L.prefSet(pref, lt::kPrefMaxWorkspaceBytes, &ws, sizeof(ws)), what + ": MAX_WORKSPACE_BYTES");
  for (auto [attr, align] : {std::pair{kPrefMinAlignA, alignLtA}, std::pair{kPrefMinAlignB, alignLtB},
                             std::pair{kPrefMinAlignC, alignD}, std::pair{kPrefMinAlignD, alignD}})
    if (st.isOk()) st = L.check(L.prefSet(pref, attr, &align, sizeof(uint32_t)), what + ": MIN_ALIGNMENT");
  lt::HeuristicResult result{};
  int found = 0;
  if (st.isOk())
    st = L.check(L.heuristic(lt_->handle, pr->desc, pr->a, pr->b, pr->d, pr->d, pref, 1, &result, &found),
                 what + ": cublasLtMatmulAlgoGetHeuristic");
  L.prefDestroy(pref);
  if (!st.isOk()) return st;
  if (found == 0) return static_cast<const Prepared*>(nullptr);  // the generated kernel runs it
  pr->algo = result.algo;
  const Prepared* out = pr.get();
  prepared_.emplace(key, std::move(pr));
  return out;
}

sdk::StatusOr<const MatmulExecutable::Setup*> MatmulExecutable::setupFor(const CUdeviceptr args[3],
                                                                         const std::vector<int64_t>& symbols) {
  if (last_ && last_->symbols == symbols) {
    if (std::equal(args, args + 3, last_->args)) return &*last_;
    // Pointers that moved by multiples of 256 bytes keep every alignment the plan and its
    // descriptors were chosen for (alignmentOf tops out at 256): only the operands move. (A
    // training step's tensors come from torch's allocator, at new addresses now and then.)
    if (std::equal(args, args + 3, last_->args, [](CUdeviceptr x, CUdeviceptr y) { return (x - y) % 256 == 0; })) {
      Setup& s = *last_;
      s.a += args[0] - s.args[0];
      s.b += args[1] - s.args[1];
      s.out += args[2] - s.args[2];
      std::copy(args, args + 3, s.args);
      return &s;
    }
  }
  last_.reset();
  Setup s;
  s.symbols = symbols;
  std::copy(args, args + 3, s.args);
  sdk::StatusOr<MatmulShape> shape = MatmulShape::eval(call_, symbols);
  if (!shape.isOk()) return shape.status();
  std::optional<LtPlan> plan;
  if (lt_->lt && ltDtype()) plan = planCublasLt(*shape);
  if (plan) {
    sdk::Status st = lt_->ready();
    if (!st.isOk()) return st;
    const uint64_t eb = lowering::dtypeBytes(call_.a.dtype), ed = lowering::dtypeBytes(call_.out.dtype);
    s.a = args[0] + static_cast<uint64_t>(shape->aOffset) * eb;
    s.b = args[1] + static_cast<uint64_t>(shape->bOffset) * eb;
    s.out = args[2] + static_cast<uint64_t>(shape->outOffset) * ed;
    // An unaligned result: computed into an aligned temporary (cuMemAlloc: 256-byte aligned,
    // whichever it is), then copied into place; it runs as aligned parts (alignedRowParts).
    s.paddedLd = paddedResultLd(*plan, shape->k, ed, alignmentOf(s.out));
    s.plan = *plan;
    s.copy = s.plan;
    if (s.paddedLd > 0) {
      s.plan.D.ld = s.paddedLd;
      s.scratchBytes = static_cast<size_t>(s.paddedLd) * s.plan.D.cols * ed;
    }
    s.parts = s.paddedLd > 0 ? alignedRowParts(s.plan, ed) : std::vector<RowPart>{{s.plan, 0, 0}};
    for (const RowPart& part : s.parts) {
      const CUdeviceptr callA = plan->swapped ? s.a : s.a + static_cast<uint64_t>(part.aOffset) * eb;
      const CUdeviceptr callB = plan->swapped ? s.b + static_cast<uint64_t>(part.aOffset) * eb : s.b;
      const CUdeviceptr d = s.paddedLd > 0 ? CUdeviceptr{256} : s.out;  // only its alignment is read
      const CUdeviceptr ptrs[3] = {callA, callB, d + static_cast<uint64_t>(part.dOffset) * ed};
      sdk::StatusOr<const Prepared*> pr = prepare(part.plan, ptrs);
      if (!pr.isOk()) return pr.status();
      if (!*pr) {  // no cuBLASLt algorithm: the generated kernel, in place
        s.prepared.clear();
        break;
      }
      s.prepared.push_back(*pr);
    }
  }
  last_ = std::move(s);
  return &*last_;
}

sdk::Status MatmulExecutable::launch(const CUdeviceptr args[3], const std::vector<int64_t>& symbols, CUstream stream) {
  // The setup of the last launch is kept: a model calls each matmul with the same symbols and
  // pointers every time (its shape, plan and cuBLASLt descriptors cost more host time than
  // cublasLtMatmul itself).
  sdk::StatusOr<const Setup*> setup = setupFor(args, symbols);
  if (!setup.isOk()) return setup.status();
  const Setup& s = **setup;
  if (s.prepared.empty()) return runKernel(args, symbols, stream);
  const uint64_t eb = lowering::dtypeBytes(call_.a.dtype), ed = lowering::dtypeBytes(call_.out.dtype);
  CUdeviceptr d = s.out;
  if (s.paddedLd > 0) {
    sdk::StatusOr<CUdeviceptr> tmp = lt_->scratchOf(s.scratchBytes);
    if (!tmp.isOk()) return tmp.status();
    d = *tmp;
  }
  const lt::Api& L = *lt_->lt;
  const float one = 1, zero = 0;
  const double oneD = 1, zeroD = 0;
  const bool f64 = call_.a.dtype == PLUGSDK_DTYPE_F64;
  const void* alpha = f64 ? static_cast<const void*>(&oneD) : &one;
  const void* beta = f64 ? static_cast<const void*>(&zeroD) : &zero;
  for (size_t pi = 0; pi < s.parts.size(); ++pi) {
    const LtPlan& pl = s.parts[pi].plan;
    const Prepared& pr = *s.prepared[pi];
    // The outer batch dims the plan could not flatten, one cuBLASLt call per point.
    std::vector<int64_t> at(pl.outerSizes.size(), 0);
    for (;;) {
      int64_t oa = s.parts[pi].aOffset, ob = 0, od = s.parts[pi].dOffset;
      for (size_t i = 0; i < at.size(); ++i) {
        oa += at[i] * pl.outerA[i];
        ob += at[i] * pl.outerB[i];
        od += at[i] * pl.outerD[i];
      }
      const CUdeviceptr ltA = (pl.swapped ? s.b : s.a) + static_cast<uint64_t>(oa) * eb;
      const CUdeviceptr ltB = (pl.swapped ? s.a : s.b) + static_cast<uint64_t>(ob) * eb;
      const CUdeviceptr ltD = d + static_cast<uint64_t>(od) * ed;
      const lt::Status r = L.matmul(lt_->handle, pr.desc, alpha, reinterpret_cast<const void*>(ltA), pr.a,
                                    reinterpret_cast<const void*>(ltB), pr.b, beta, reinterpret_cast<const void*>(ltD),
                                    pr.d, reinterpret_cast<void*>(ltD), pr.d, &pr.algo,
                                    reinterpret_cast<void*>(lt_->workspace), lt_->workspaceBytes, stream);
      if (r != lt::kSuccess) return L.check(r, "prims.matmul: cublasLtMatmul (" + pl.describe() + ")");
      size_t i = at.size();
      while (i > 0 && ++at[i - 1] == pl.outerSizes[i - 1]) at[--i] = 0;
      if (i == 0) break;
    }
  }
  if (s.paddedLd == 0) return sdk::Status::ok();
  Memcpy2D copy;
  copy.srcMemoryType = copy.dstMemoryType = kMemoryTypeDevice;
  copy.srcDevice = d;
  copy.srcPitch = static_cast<size_t>(s.paddedLd) * ed;
  copy.dstDevice = s.out;
  copy.dstPitch = static_cast<size_t>(s.copy.D.ld) * ed;
  copy.WidthInBytes = s.copy.D.rows * ed;
  copy.Height = s.copy.D.cols;
  const CUresult r = lt_->api->memcpy2DAsync(&copy, stream);
  if (r == CUDA_SUCCESS) return sdk::Status::ok();
  return lt_->api->check(r, "prims.matmul: copying the padded result into place (" + s.copy.describe() + ")");
}

}  // namespace plugsdk::cuda
