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

MatmulExecutable::~MatmulExecutable() {
  if (!biasCopy_.ptr && biasCopy_.retired.empty()) return;
  ContextGuard g(*lt_->api, lt_->context);
  biasCopy_.release(*lt_->api);
}

bool MatmulExecutable::ltDtype(uint32_t o) const {
  const uint32_t t = call_.a.dtype;
  const bool half = t == PLUGSDK_DTYPE_F16 || t == PLUGSDK_DTYPE_BF16;
  return (half || t == PLUGSDK_DTYPE_F32 || t == PLUGSDK_DTYPE_F64) && call_.b.dtype == t &&
         (o == t || (half && o == PLUGSDK_DTYPE_F32));
}

namespace {

// cublasLtMatmulDescAttributes_t and cublasLtEpilogue_t (cublasLt.h).
constexpr int kDescEpilogue = 7, kDescBiasPointer = 8;
constexpr uint32_t kEpilogueDefault = 1, kEpilogueRelu = 2, kEpilogueBias = 4, kEpilogueGelu = 32;

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

uint32_t MatmulExecutable::ltEpilogue() const {
  if (!native_) return kEpilogueDefault;
  uint32_t e = native_->bias >= 0 ? kEpilogueBias : 0;
  if (native_->act == Activation::kRelu) e |= kEpilogueRelu;
  if (native_->act == Activation::kGeluTanh) e |= kEpilogueGelu;
  return e ? e : kEpilogueDefault;
}

sdk::StatusOr<std::unique_ptr<MatmulExecutable>> MatmulExecutable::create(const sdk::LibraryCall& c, LtDevice* lt,
                                                                          CompileKernel compile, bool nativeEpilogues) {
  sdk::StatusOr<MatmulCall> call = MatmulCall::from(c);
  if (!call.isOk()) return call.status();
  sdk::Status attrs = checkAttributes(std::string(c.attributes), call->out.dtype);
  if (!attrs.isOk()) return attrs;
  auto e = std::unique_ptr<MatmulExecutable>(new MatmulExecutable());
  e->call_ = std::move(*call);
  e->lt_ = lt;
  e->compile_ = std::move(compile);
  std::string epilogueLog;
  if (c.epilogue) {
    sdk::StatusOr<std::unique_ptr<EpilogueKernel>> k =
        EpilogueKernel::create(*c.epilogue, c.symbols.size(), e->compile_);
    if (!k.isOk()) return k.status().withContext("prims.matmul");
    e->epilogue_ = std::move(*k);
    e->accArg_ = static_cast<int>(e->epilogue_->accumulator());
    if (e->epilogue_->accumulatorDtype() != e->call_.out.dtype)
      return sdk::invalidArgument("prims.matmul: the epilogue's accumulator is not of the result's dtype");
    // The result, and the epilogue's store when cuBLASLt computes it, is row-major.
    makeRowMajor(e->call_.out, e->call_.pool);
    std::string why = "native epilogues are off";
    if (nativeEpilogues) e->native_ = matchNativeEpilogue(*c.epilogue, &why);
    const uint32_t outDtype = e->native_ ? e->native_->outDtype : 0;
    if (e->native_ && e->native_->bias >= 0 && e->native_->biasDtype == PLUGSDK_DTYPE_F32 &&
        (outDtype == PLUGSDK_DTYPE_F16 || outDtype == PLUGSDK_DTYPE_BF16)) {
      // cuBLASLt takes no f32 bias on an f16 / bf16 result (tools/probes/cublaslt_epilogue_probe.py):
      // each launch converts it first (an autocast graph casts the parameter to the result's dtype).
      const std::unique_ptr<BuiltKernel> cast = castKernel(PLUGSDK_DTYPE_F32, outDtype);
      sdk::StatusOr<std::unique_ptr<LoadedKernel>> k = e->compile_(cast->view());
      if (!k.isOk()) return k.status().withContext("prims.matmul: the epilogue's bias conversion");
      e->biasCast_ = std::move(*k);
    }
    epilogueLog = e->native_ ? "; epilogue in cuBLASLt where it takes it: " + e->native_->describe()
                             : "; epilogue kernel " + std::string(c.epilogue->name()) + " (" + why + ")";
  }
  e->built_ = matmulKernel(e->call_);
  sdk::Status valid = sdk::KernelView::validate(e->built_->kernel);
  if (!valid.isOk()) return sdk::internalError("the generated matmul kernel is malformed: " + valid.message());
  // Known now (no symbols): build the kernel now when cuBLASLt will not take the call.
  const bool cublas = lt->lt && e->ltDtype(e->call_.out.dtype);
  sdk::StatusOr<MatmulShape> now = MatmulShape::eval(e->call_, {});
  const bool needKernel = !cublas || (now.isOk() && !planCublasLt(*now));
  if (needKernel) {
    sdk::StatusOr<std::unique_ptr<LoadedKernel>> k = e->compile_(e->built_->view());
    if (!k.isOk()) return k.status();
    e->kernel_ = std::move(*k);
  }
  e->log_ =
      (cublas ? "prims.matmul: cuBLASLt (" + lt->lt->path + ")" +
                    (needKernel ? ", this layout by the generated kernel" : "")
              : "prims.matmul: the generated kernel (" +
                    std::string(lt->lt ? "a dtype cuBLASLt does not take here" : "no cuBLASLt on this machine") + ")") +
      epilogueLog;
  return e;
}

sdk::Status MatmulExecutable::runKernel(CUdeviceptr a, CUdeviceptr b, CUdeviceptr out,
                                        const std::vector<int64_t>& symbols, CUstream stream) {
  if (!kernel_) {
    sdk::StatusOr<std::unique_ptr<LoadedKernel>> k = compile_(built_->view());
    if (!k.isOk()) return k.status();
    kernel_ = std::move(*k);
  }
  const std::vector<CUdeviceptr> args = {a, b, out};
  const std::vector<int64_t> own(
      symbols.begin(), symbols.begin() + static_cast<std::ptrdiff_t>(std::min(symbols.size(), call_.symbols.size())));
  return launchKernel(*kernel_, args, own, kernel_->status->address(kernel_->statusSlot), stream);
}

sdk::StatusOr<const MatmulExecutable::Prepared*> MatmulExecutable::prepare(const LtPlan& p, const CUdeviceptr ptrs[3],
                                                                           const Setup& s) {
  const uint32_t alignA = alignmentOf(ptrs[0]), alignB = alignmentOf(ptrs[1]), alignD = alignmentOf(ptrs[2]);
  const uint32_t alignC = s.residual ? alignmentOf(s.residual) : alignD;
  const uint32_t epilogue = s.native ? ltEpilogue() : kEpilogueDefault;
  std::string key =
      p.describe() + " align " + std::to_string(alignA) + " " + std::to_string(alignB) + " " + std::to_string(alignD);
  if (s.native)
    key += " epilogue " + std::to_string(epilogue) + " bias align " + std::to_string(s.bias ? alignmentOf(s.bias) : 0) +
           " C align " + std::to_string(alignC) + " D " + std::to_string(s.dDtype);
  auto it = prepared_.find(key);
  if (it != prepared_.end()) return it->second.get();
  const lt::Api& L = *lt_->lt;
  // cuBLASLt refusing an epilogue (a bias type, an epilogue it has no kernel for) is no
  // error: the epilogue then runs as its kernel.
  auto declined = [&](const sdk::Status& st) -> sdk::StatusOr<const Prepared*> {
    if (!s.native) return st;
    return static_cast<const Prepared*>(nullptr);
  };
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
  if (st.isOk() && s.native) {
    st = L.check(L.descSet(pr->desc, kDescEpilogue, &epilogue, sizeof(uint32_t)), what + ": EPILOGUE");
    // The heuristic reads the bias pointer's alignment; each launch sets its own.
    if (st.isOk() && s.bias)
      st = L.check(L.descSet(pr->desc, kDescBiasPointer, &s.bias, sizeof(CUdeviceptr)), what + ": BIAS_POINTER");
  }
  auto layout = [&](lt::Layout* l, int type, const LtMatrix& m, int64_t stride) {
    sdk::Status r = L.check(L.layoutCreate(l, type, m.rows, m.cols, m.ld), what + ": cublasLtMatrixLayoutCreate");
    if (r.isOk() && p.batchCount > 1) {
      r = L.check(L.layoutSet(*l, lt::kLayoutBatchCount, &p.batchCount, sizeof(int32_t)), what + ": BATCH_COUNT");
      if (r.isOk())
        r = L.check(L.layoutSet(*l, lt::kLayoutBatchStride, &stride, sizeof(int64_t)), what + ": BATCH_STRIDE");
    }
    return r;
  };
  if (st.isOk()) st = layout(&pr->a, type, p.A, p.aStride);
  if (st.isOk()) st = layout(&pr->b, type, p.B, p.bStride);
  if (st.isOk()) st = layout(&pr->d, ltType(s.dDtype), p.D, p.dStride);
  if (!st.isOk()) return declined(st);
  lt::Preference pref = nullptr;
  st = L.check(L.prefCreate(&pref), what + ": cublasLtMatmulPreferenceCreate");
  if (!st.isOk()) return declined(st);
  const uint64_t ws = lt_->workspaceBytes;
  // cuBLASLt's A and B are the call's b and a when swapped (matmul_plan.h).
  const uint32_t alignLtA = p.swapped ? alignB : alignA, alignLtB = p.swapped ? alignA : alignB;
  st = L.check(L.prefSet(pref, lt::kPrefMaxWorkspaceBytes, &ws, sizeof(ws)), what + ": MAX_WORKSPACE_BYTES");
  for (auto [attr, align] : {std::pair{kPrefMinAlignA, alignLtA}, std::pair{kPrefMinAlignB, alignLtB},
                             std::pair{kPrefMinAlignC, alignC}, std::pair{kPrefMinAlignD, alignD}})
    if (st.isOk()) st = L.check(L.prefSet(pref, attr, &align, sizeof(uint32_t)), what + ": MIN_ALIGNMENT");
  lt::HeuristicResult result{};
  int found = 0;
  if (st.isOk())
    st = L.check(L.heuristic(lt_->handle, pr->desc, pr->a, pr->b, pr->d, pr->d, pref, 1, &result, &found),
                 what + ": cublasLtMatmulAlgoGetHeuristic");
  L.prefDestroy(pref);
  if (!st.isOk()) return declined(st);
  if (found == 0) return static_cast<const Prepared*>(nullptr);  // the caller runs it otherwise
  pr->algo = result.algo;
  const Prepared* out = pr.get();
  prepared_.emplace(key, std::move(pr));
  return out;
}

sdk::StatusOr<bool> MatmulExecutable::planLt(Setup& s, const MatmulShape& shape) {
  if (!lt_->lt || !ltDtype(s.dDtype)) return false;
  std::optional<LtPlan> plan = planCublasLt(shape);
  if (!plan) return false;
  // cuBLASLt's bias runs along D's rows: the row-major result's columns when swapped.
  if (s.native && (!plan->swapped || plan->D.rows != static_cast<uint64_t>(shape.n))) return false;
  sdk::Status st = lt_->ready();
  if (!st.isOk()) return st;
  const uint64_t eb = lowering::dtypeBytes(call_.a.dtype), ed = lowering::dtypeBytes(s.dDtype);
  // An unaligned result: computed into an aligned temporary (cuMemAlloc: 256-byte aligned,
  // whichever it is), then copied into place; it runs as aligned parts (alignedRowParts).
  s.paddedLd = lt_->padResults ? paddedResultLd(*plan, shape.k, ed, alignmentOf(s.out), eb,
                                                std::min(alignmentOf(s.a), alignmentOf(s.b)))
                               : 0;
  if (s.native && s.paddedLd > 0) return false;  // bias and residual would need the parts' offsets
  s.plan = *plan;
  s.copy = s.plan;
  s.scratchBytes = 0;
  if (s.paddedLd > 0) {
    s.plan.D.ld = s.paddedLd;
    s.scratchBytes = static_cast<size_t>(s.paddedLd) * s.plan.D.cols * ed;
  }
  s.parts = s.paddedLd > 0 ? alignedRowParts(s.plan, ed) : std::vector<RowPart>{{s.plan, 0, 0}};
  s.prepared.clear();
  for (const RowPart& part : s.parts) {
    const CUdeviceptr callA = plan->swapped ? s.a : s.a + static_cast<uint64_t>(part.aOffset) * eb;
    const CUdeviceptr callB = plan->swapped ? s.b + static_cast<uint64_t>(part.aOffset) * eb : s.b;
    const CUdeviceptr d = s.paddedLd > 0 ? CUdeviceptr{256} : s.out;  // only its alignment is read
    const CUdeviceptr ptrs[3] = {callA, callB, d + static_cast<uint64_t>(part.dOffset) * ed};
    sdk::StatusOr<const Prepared*> pr = prepare(part.plan, ptrs, s);
    if (!pr.isOk()) return pr.status();
    if (!*pr) {  // no cuBLASLt algorithm
      s.prepared.clear();
      return false;
    }
    s.prepared.push_back(*pr);
  }
  return true;
}

sdk::StatusOr<const MatmulExecutable::Setup*> MatmulExecutable::setupFor(const std::vector<CUdeviceptr>& args,
                                                                         const std::vector<int64_t>& symbols) {
  if (last_ && last_->symbols == symbols && last_->args.size() == args.size()) {
    if (args == last_->args) return &*last_;
    // Pointers that moved by multiples of 256 bytes keep every alignment the plan and its
    // descriptors were chosen for (alignmentOf tops out at 256): only the operands move. (A
    // training step's tensors come from torch's allocator, at new addresses now and then.)
    if (std::equal(args.begin(), args.end(), last_->args.begin(),
                   [](CUdeviceptr x, CUdeviceptr y) { return (x - y) % 256 == 0; })) {
      Setup& s = *last_;
      auto move = [&](CUdeviceptr& p, size_t i) {
        if (p && i < args.size()) p += args[i] - s.args[i];
      };
      move(s.a, 0);
      move(s.b, 1);
      if (s.native) {
        move(s.out, 3 + static_cast<size_t>(nativeArg(native_->out)));
        if (native_->bias >= 0)
          move(biasCast_ ? s.biasSource : s.bias, 3 + static_cast<size_t>(nativeArg(native_->bias)));
        if (native_->residual >= 0) move(s.residual, 3 + static_cast<size_t>(nativeArg(native_->residual)));
      } else if (!epilogue_) {
        move(s.out, 2);
      }
      s.args = args;
      return &s;
    }
  }
  last_.reset();
  Setup s;
  s.symbols = symbols;
  s.args = args;
  const std::vector<int64_t> own(
      symbols.begin(), symbols.begin() + static_cast<std::ptrdiff_t>(std::min(symbols.size(), call_.symbols.size())));
  sdk::StatusOr<MatmulShape> shape = MatmulShape::eval(call_, own);
  if (!shape.isOk()) return shape.status();
  const uint64_t eb = lowering::dtypeBytes(call_.a.dtype);
  s.a = args[0] + static_cast<uint64_t>(shape->aOffset) * eb;
  s.b = args[1] + static_cast<uint64_t>(shape->bOffset) * eb;
  bool lt = false;
  if (native_) {  // the epilogue inside cuBLASLt: D is its store, row-major as the result
    s.native = true;
    s.dDtype = native_->outDtype;
    s.out = args[3 + static_cast<size_t>(nativeArg(native_->out))];
    if (native_->bias >= 0) s.bias = args[3 + static_cast<size_t>(nativeArg(native_->bias))];
    if (biasCast_) {  // cuBLASLt reads the bias converted to D's dtype, in a copy of ours
      s.biasSource = s.bias;
      s.biasLength = shape->n;
      sdk::StatusOr<CUdeviceptr> copy =
          biasCopy_.atLeast(*lt_->api, lt_->context, static_cast<size_t>(shape->n) * lowering::dtypeBytes(s.dDtype),
                            "a matmul epilogue's bias in the result's dtype");
      if (!copy.isOk()) return copy.status();
      s.bias = *copy;
    }
    if (native_->residual >= 0) s.residual = args[3 + static_cast<size_t>(nativeArg(native_->residual))];
    const bool dtypes = (native_->bias < 0 || native_->biasDtype == s.dDtype || biasCast_) &&
                        (native_->residual < 0 || native_->residualDtype == s.dDtype) &&
                        call_.a.dtype != PLUGSDK_DTYPE_F64;
    sdk::StatusOr<bool> r = dtypes ? planLt(s, *shape) : sdk::StatusOr<bool>(false);
    if (!r.isOk()) return r.status();
    lt = *r;
  }
  if (!lt) {  // the result itself: in place, or the accumulator temporary an epilogue reads
    s.native = false;
    s.bias = s.residual = 0;
    s.dDtype = call_.out.dtype;
    s.out = epilogue_ ? CUdeviceptr{0}
                      : args[2] + static_cast<uint64_t>(shape->outOffset) * lowering::dtypeBytes(call_.out.dtype);
    if (epilogue_) {
      int64_t numel = shape->m * shape->n;
      for (int64_t b : shape->batch) numel *= b;
      s.accBytes = static_cast<size_t>(numel) * lowering::dtypeBytes(call_.out.dtype);
      s.out = 256;  // the temporary's alignment, for planning; launch() binds it
    }
    sdk::StatusOr<bool> r = planLt(s, *shape);
    if (!r.isOk()) return r.status();
    lt = *r;
  }
  if (!lt) s.prepared.clear();  // the generated kernel
  last_ = std::move(s);
  return &*last_;
}

size_t MatmulExecutable::nativeArg(int epilogueArg) const {
  // The epilogue's buffers follow a, b and the result in the launch, its accumulator skipped.
  size_t i = 0;
  for (int a = 0; a < epilogueArg; ++a)
    if (a != accArg_) ++i;
  return i;
}

sdk::Status MatmulExecutable::runLt(const Setup& s, CUdeviceptr out, CUstream stream) {
  const uint64_t eb = lowering::dtypeBytes(call_.a.dtype), ed = lowering::dtypeBytes(s.dDtype);
  CUdeviceptr d = out;
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
  const void* beta = f64 ? static_cast<const void*>(&zeroD) : s.residual ? &one : &zero;
  for (size_t pi = 0; pi < s.parts.size(); ++pi) {
    const LtPlan& pl = s.parts[pi].plan;
    const Prepared& pr = *s.prepared[pi];
    if (s.bias) {
      const lt::Status r = L.descSet(pr.desc, kDescBiasPointer, &s.bias, sizeof(CUdeviceptr));
      if (r != lt::kSuccess) return L.check(r, "prims.matmul: the epilogue's bias pointer");
    }
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
      const CUdeviceptr ltC = s.residual ? s.residual + static_cast<uint64_t>(od) * ed : ltD;
      const lt::Status r = L.matmul(lt_->handle, pr.desc, alpha, reinterpret_cast<const void*>(ltA), pr.a,
                                    reinterpret_cast<const void*>(ltB), pr.b, beta, reinterpret_cast<const void*>(ltC),
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
  copy.dstDevice = out;
  copy.dstPitch = static_cast<size_t>(s.copy.D.ld) * ed;
  copy.WidthInBytes = s.copy.D.rows * ed;
  copy.Height = s.copy.D.cols;
  const CUresult r = lt_->api->memcpy2DAsync(&copy, stream);
  if (r == CUDA_SUCCESS) return sdk::Status::ok();
  return lt_->api->check(r, "prims.matmul: copying the padded result into place (" + s.copy.describe() + ")");
}

sdk::Status MatmulExecutable::launch(const CUdeviceptr* args, size_t numArgs, const std::vector<int64_t>& symbols,
                                     CUstream stream) {
  const size_t want = 3 + (epilogue_ ? epilogue_->numExtraBuffers() : 0);
  if (numArgs != want)
    return sdk::invalidArgument("prims.matmul: " + std::to_string(numArgs) + " buffers where it takes " +
                                std::to_string(want));
  // The setup of the last launch is kept: a model calls each matmul with the same symbols and
  // pointers every time (its shape, plan and cuBLASLt descriptors cost more host time than
  // cublasLtMatmul itself).
  // The kept setup's pointers are compared in place (no vector made for a launch that reuses it).
  const bool same = last_ && last_->symbols == symbols && last_->args.size() == numArgs &&
                    std::equal(args, args + numArgs, last_->args.begin());
  sdk::StatusOr<const Setup*> setup =
      same ? sdk::StatusOr<const Setup*>(&*last_) : setupFor(std::vector<CUdeviceptr>(args, args + numArgs), symbols);
  if (!setup.isOk()) return setup.status();
  const Setup& s = **setup;
  if (s.native) {
    if (biasCast_) {
      const sdk::Status st = launchKernel(*biasCast_, {s.biasSource, s.bias}, {s.biasLength},
                                          biasCast_->status->address(biasCast_->statusSlot), stream);
      if (!st.isOk()) return st.withContext("prims.matmul: converting the epilogue's bias");
    }
    return runLt(s, s.out, stream);
  }
  // The generated kernel applies the descriptors' offsets itself.
  if (!epilogue_)
    return s.prepared.empty() ? runKernel(args[0], args[1], args[2], symbols, stream) : runLt(s, s.out, stream);
  // The epilogue kernel over the result in the accumulator temporary, or in the buffer the
  // epilogue stores the result to (epilogue_kernel.h). The product goes straight there when it
  // is aligned as the plan assumed; otherwise through the temporary and a copy into place.
  const CUdeviceptr result = epilogue_->resultArg() >= 0 ? epilogue_->bufferOf(args + 3, epilogue_->resultArg()) : 0;
  CUdeviceptr into = result;
  if (result == 0 || result % 256 != 0) {
    sdk::StatusOr<CUdeviceptr> temp = lt_->accumulators.atLeast(
        *lt_->api, lt_->context, std::max<size_t>(s.accBytes, 1), "a matmul result for its epilogue");
    if (!temp.isOk()) return temp.status();
    into = *temp;
  }
  sdk::Status st = s.prepared.empty() ? runKernel(args[0], args[1], into, symbols, stream) : runLt(s, into, stream);
  if (!st.isOk()) return st;
  if (result != 0 && into != result) {
    const CUresult r = lt_->api->memcpyDtoDAsync(result, into, s.accBytes, stream);
    if (r != CUDA_SUCCESS) return lt_->api->check(r, "prims.matmul: copying the result for its epilogue");
  }
  const CUdeviceptr acc = result != 0 ? result : into;
  return epilogue_->launch(acc, args + 3, symbols, stream);
}

}  // namespace plugsdk::cuda
