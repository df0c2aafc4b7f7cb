// The convolution executable (conv.h).
#include "backends/cuda/library/conv.h"

#include <algorithm>

#include "backends/cuda/library/cudnn_graph.h"
#include "backends/cuda/runtime/device.h"
#include "backends/llvm_lowering/dtypes.h"

namespace plugsdk::cuda {

namespace {

/// Workspaces above this are not taken (the next algorithm is): 1 GiB.
constexpr size_t kMaxWorkspace = size_t{1} << 30;

size_t roundUp(size_t b) { return (b + 255) / 256 * 256; }

int dnnType(uint32_t dtype) {
  return dtype == PLUGSDK_DTYPE_F16    ? dnn::kHalf
         : dtype == PLUGSDK_DTYPE_BF16 ? dnn::kBfloat16
         : dtype == PLUGSDK_DTYPE_F64  ? dnn::kDouble
                                       : dnn::kFloat;
}

/// `g` for `images` images a call (the last chunk of a chunked batch).
DnnGeometry withImages(DnnGeometry g, int64_t images) {
  g.images = images;
  g.x[0] = g.y[0] = static_cast<int>(images);
  return g;
}

}  // namespace

sdk::Status DnnDevice::ready() {
  if (handle) return sdk::Status::ok();
  ContextGuard g(*api, context);
  return dnn->check(dnn->create(&handle), "cudnnCreate");
}

sdk::StatusOr<CUdeviceptr> DnnDevice::scratchOf(size_t bytes) {
  return scratch.atLeast(*api, context, bytes, "prims.convolution's workspace and temporaries");
}

DnnDevice::~DnnDevice() {
  if (!api) return;
  ContextGuard g(*api, context);
  scratch.release(*api);
  accumulators.release(*api);
  if (handle) dnn->destroy(handle);
}

struct ConvExecutable::Prepared {
  const dnn::Api* dnn = nullptr;
  DnnGeometry g;
  dnn::TensorDesc x = nullptr, y = nullptr;           ///< packed (or as they lie, when taken in place)
  dnn::TensorDesc xSrc = nullptr, ySrc = nullptr;     ///< as they lie, when copied through a temporary
  dnn::TensorDesc wSrc = nullptr, wPacked = nullptr;  ///< the weight's copy into a packed temporary
  dnn::FilterDesc w = nullptr;
  dnn::ConvDesc conv = nullptr;
  std::unique_ptr<dnn::ConvGraphPlan> graph;  ///< the graph API's plan; null: the legacy call with `algo`
  int algo = 0;
  size_t workspace = 0, xTemp = 0, wTemp = 0, yTemp = 0;  ///< bytes, each a multiple of 256
  size_t scratch() const { return workspace + xTemp + wTemp + yTemp; }
  ~Prepared() {
    for (dnn::TensorDesc t : {x, y, xSrc, ySrc, wSrc, wPacked})
      if (t) dnn->destroyTensor(t);
    if (w) dnn->destroyFilter(w);
    if (conv) dnn->destroyConv(conv);
  }
};

ConvExecutable::~ConvExecutable() = default;

sdk::StatusOr<std::unique_ptr<ConvExecutable>> ConvExecutable::create(const sdk::LibraryCall& c, DnnDevice* dnn,
                                                                      const CompileKernel& compile,
                                                                      bool nativeEpilogues) {
  if (!dnn->dnn) return sdk::failedPrecondition("prims.convolution: no cuDNN on this machine");
  sdk::StatusOr<ConvCall> call = ConvCall::from(c);
  if (!call.isOk()) return call.status();
  auto e = std::unique_ptr<ConvExecutable>(new ConvExecutable());
  e->call_ = std::move(*call);
  e->dnn_ = dnn;
  e->log_ = "prims.convolution: cuDNN " + std::to_string(dnn->dnn->getVersion()) + " (" + dnn->dnn->path + ")";
  if (c.epilogue) {
    sdk::StatusOr<std::unique_ptr<EpilogueKernel>> k = EpilogueKernel::create(*c.epilogue, c.symbols.size(), compile);
    if (!k.isOk()) return k.status().withContext("prims.convolution");
    if ((*k)->accumulatorDtype() != e->call_.out.dtype)
      return sdk::invalidArgument("prims.convolution: the epilogue's accumulator is not of the result's dtype");
    e->epilogue_ = std::move(*k);
    // The result goes to the accumulator temporary, row-major as the ABI lays it out.
    makeRowMajor(e->call_.out, e->call_.pool);
    // cuDNN's form: the grid is the result [N, K, ...], the bias read by channel (dim 1).
    std::string why = "native epilogues are off";
    if (nativeEpilogues && c.epilogue->numGrid() != e->call_.out.sizes.size())
      why = "a grid of another rank than the result's";
    else if (nativeEpilogues)
      e->native_ = matchNativeEpilogue(*c.epilogue, &why, 1);
    e->log_ += e->native_ ? "; epilogue in cuDNN's kernel where an engine takes it: " + e->native_->describe()
                          : "; epilogue kernel " + std::string(c.epilogue->name()) + " (" + why + ")";
  }
  return e;
}

sdk::StatusOr<const ConvExecutable::Prepared*> ConvExecutable::prepare(const DnnGeometry& g, bool xCopy, bool wCopy,
                                                                       bool yCopy,
                                                                       const dnn::ConvEpilogueSpec* epilogue) {
  const std::string key = g.describe() + (xCopy ? " x copied" : "") + (wCopy ? " w copied" : "") +
                          (yCopy ? " y copied" : "") + " " + std::to_string(g.xStrides[0]) + " " +
                          std::to_string(g.yStrides[0]) + (epilogue ? " fused" : "");
  auto it = prepared_.find(key);
  if (it != prepared_.end() && !it->second)
    return sdk::unimplemented("prims.convolution (" + key + "): no engine takes the fused epilogue (tried before)");
  if (it != prepared_.end()) return it->second.get();
  const dnn::Api& D = *dnn_->dnn;
  auto p = std::make_unique<Prepared>();
  p->dnn = &D;
  p->g = g;
  const uint32_t t = call_.x.dtype;
  const int type = dnnType(t);
  const size_t eb = lowering::dtypeBytes(t);
  const std::string what = "prims.convolution (" + key + ")";
  auto tensor = [&](dnn::TensorDesc* d, const std::vector<int>& dims, const std::vector<int>& strides) {
    sdk::Status s = D.check(D.createTensor(d), what + ": cudnnCreateTensorDescriptor");
    if (s.isOk())
      s = D.check(D.setTensorNd(*d, type, g.rank, dims.data(), strides.data()), what + ": cudnnSetTensorNdDescriptor");
    return s;
  };
  auto numel = [](const std::vector<int>& d) {
    size_t n = 1;
    for (int v : d) n *= static_cast<size_t>(v);
    return n;
  };
  sdk::Status st = tensor(&p->x, g.x, xCopy || g.xPacked ? packedStrides(g.x) : g.xStrides);
  if (st.isOk()) st = tensor(&p->y, g.y, yCopy || g.yPacked ? packedStrides(g.y) : g.yStrides);
  if (st.isOk() && xCopy) st = tensor(&p->xSrc, g.x, g.xStrides);
  if (st.isOk() && yCopy) st = tensor(&p->ySrc, g.y, g.yStrides);
  if (st.isOk() && wCopy) st = tensor(&p->wSrc, g.w, g.wStrides);
  if (st.isOk() && wCopy) st = tensor(&p->wPacked, g.w, packedStrides(g.w));
  if (st.isOk()) st = D.check(D.createFilter(&p->w), what + ": cudnnCreateFilterDescriptor");
  if (st.isOk())
    st = D.check(D.setFilterNd(p->w, type, dnn::kNchw, g.rank, g.w.data()), what + ": cudnnSetFilterNdDescriptor");
  if (st.isOk()) st = D.check(D.createConv(&p->conv), what + ": cudnnCreateConvolutionDescriptor");
  const bool f64 = t == PLUGSDK_DTYPE_F64, f32 = t == PLUGSDK_DTYPE_F32;
  if (st.isOk())
    st = D.check(D.setConvNd(p->conv, g.rank - 2, g.pad.data(), g.stride.data(), g.dilation.data(),
                             dnn::kCrossCorrelation, f64 ? dnn::kDouble : dnn::kFloat),
                 what + ": cudnnSetConvolutionNdDescriptor");
  if (st.isOk()) st = D.check(D.setConvGroups(p->conv, static_cast<int>(call_.groups)), what + ": group count");
  // f32 without TF32 (as torch's matmuls and the conformance tolerances take f32).
  const int math = f32 ? dnn::kFmaMath : f64 ? dnn::kDefaultMath : dnn::kTensorOpMath;
  if (st.isOk()) st = D.check(D.setConvMath(p->conv, math), what + ": math type");
  if (!st.isOk()) return st;
  // The graph API's plan first (a launch then costs one execute); the legacy call when no
  // engine finalizes.
  auto wide = [](const std::vector<int>& v) { return std::vector<int64_t>(v.begin(), v.end()); };
  dnn::ConvSpec spec;
  spec.dataType = type;
  spec.computeType = f64 ? dnn::kDouble : dnn::kFloat;
  spec.x = wide(g.x);
  spec.xStrides = wide(packedStrides(g.x));
  spec.w = wide(g.w);
  spec.wStrides = wide(packedStrides(g.w));
  spec.y = wide(g.y);
  spec.yStrides = wide(packedStrides(g.y));
  spec.pad = wide(g.pad);
  spec.stride = wide(g.stride);
  spec.dilation = wide(g.dilation);
  spec.weightGradient = g.weightGradient;
  if (epilogue) spec.epilogue = *epilogue;
  if (xCopy || g.xPacked) {
    sdk::StatusOr<std::unique_ptr<dnn::ConvGraphPlan>> plan = dnn::ConvGraphPlan::create(D, dnn_->handle, spec);
    if (plan.isOk()) {
      p->graph = std::move(*plan);
      p->workspace = roundUp(p->graph->workspaceBytes());
    } else {
      graphFailure_ = plan.status().message();
    }
  }
  // A fused epilogue has no legacy form: the caller runs the epilogue kernel instead.
  if (epilogue && !p->graph) {
    prepared_.emplace(key, nullptr);  // asked once per geometry
    return sdk::unimplemented(what + ": no engine takes the fused epilogue (" + graphFailure_ + ")");
  }
  // The weight gradient has no legacy form here: the caller falls back to the forward one.
  if (g.weightGradient && !p->graph)
    return sdk::unimplemented(what + ": the graph API took no engine (" + graphFailure_ + ")");
  dnn::FwdAlgoPerf perf[16] = {};
  int found = 0;
  if (!p->graph)
    st = D.check(D.forwardAlgorithms(dnn_->handle, p->x, p->w, p->conv, p->y, 16, &found, perf),
                 what + ": cudnnGetConvolutionForwardAlgorithm_v7");
  if (!st.isOk()) return st;
  const dnn::FwdAlgoPerf* pick = nullptr;
  for (int i = 0; i < found && !pick; ++i) {
    if (perf[i].status != dnn::kSuccess || perf[i].memory > kMaxWorkspace) continue;
    if (f32 && perf[i].mathType != dnn::kFmaMath) continue;  // TF32 would round the operands
    pick = &perf[i];
  }
  if (!pick && !p->graph)
    return sdk::unimplemented(what + ": cuDNN's heuristics offer no algorithm (" + std::to_string(found) +
                              " considered; the graph API: " + graphFailure_ + ")");
  if (!p->graph) {
    p->algo = pick->algo;
    st = D.check(D.setConvMath(p->conv, pick->mathType), what + ": math type");
    size_t ws = 0;
    if (st.isOk())
      st = D.check(D.forwardWorkspace(dnn_->handle, p->x, p->w, p->conv, p->y, p->algo, &ws),
                   what + ": cudnnGetConvolutionForwardWorkspaceSize");
    if (!st.isOk()) return st;
    p->workspace = roundUp(ws);
  }
  p->xTemp = xCopy ? roundUp(numel(g.x) * eb) : 0;
  p->wTemp = wCopy ? roundUp(numel(g.w) * eb) : 0;
  p->yTemp = yCopy ? roundUp(numel(g.y) * eb) : 0;
  const Prepared* out = p.get();
  prepared_.emplace(key, std::move(p));
  return out;
}

sdk::StatusOr<const ConvExecutable::Setup*> ConvExecutable::setupFor(const CUdeviceptr args[3],
                                                                     const std::vector<int64_t>& symbols) {
  if (last_ && last_->symbols == symbols && std::equal(args, args + 3, last_->args)) return &*last_;
  last_.reset();
  sdk::StatusOr<ConvShape> shape = ConvShape::eval(call_, symbols);
  if (!shape.isOk()) return shape.status();
  Setup s;
  s.symbols = symbols;
  std::copy(args, args + 3, s.args);
  const uint64_t eb = lowering::dtypeBytes(call_.x.dtype);
  s.x = args[0] + static_cast<uint64_t>(shape->x.offset) * eb;
  s.w = args[1] + static_cast<uint64_t>(shape->w.offset) * eb;
  s.y = args[2] + static_cast<uint64_t>(shape->out.offset) * eb;
  s.n = shape->x.sizes[0];
  if (shape->out.numel() == 0) {
    last_ = std::move(s);
    return &*last_;
  }
  if (shape->x.numel() == 0 || shape->w.numel() == 0) {  // no channels to sum over: zeros
    if (!shape->out.packed()) return sdk::unimplemented("prims.convolution: a strided result of an empty reduction");
    s.zeroBytes = static_cast<size_t>(shape->out.numel()) * eb;
    last_ = std::move(s);
    return &*last_;
  }
  sdk::StatusOr<DnnGeometry> g = dnnGeometry(call_, *shape);
  if (!g.isOk()) return g.status();
  sdk::Status st = dnn_->ready();
  if (!st.isOk()) return st;
  // Packed and 16-byte aligned operands are read in place; the rest go through temporaries.
  auto aligned = [](CUdeviceptr p) { return p % 16 == 0; };
  const bool xCopy = !g->xPacked || !aligned(s.x), wCopy = !g->wPacked || !aligned(s.w),
             yCopy = !g->yPacked || !aligned(s.y);
  // A weight gradient (a filter as large as an image) through cuDNN's weight-gradient
  // kernels, one call for the batch; the forward formulation when no engine takes it.
  if (isWeightGradient(*g, call_.groups)) {
    const DnnGeometry wg = weightGradientForm(*g);
    sdk::StatusOr<const Prepared*> p =
        prepare(wg, !wg.xPacked || !aligned(s.x), !wg.wPacked || !aligned(s.w), !wg.yPacked || !aligned(s.y));
    if (p.isOk()) {
      s.prepared = *p;
      s.n = wg.images;
      last_ = std::move(s);
      return &*last_;
    }
  }
  sdk::StatusOr<const Prepared*> full = prepare(*g, xCopy, wCopy, yCopy);
  if (!full.isOk()) return full.status();
  s.prepared = *full;
  const int64_t tail = s.n % g->images;
  if (tail != 0 && s.n > g->images) {
    sdk::StatusOr<const Prepared*> t = prepare(withImages(*g, tail), xCopy, wCopy, yCopy);
    if (!t.isOk()) return t.status();
  }
  last_ = std::move(s);
  return &*last_;
}

sdk::StatusOr<const ConvExecutable::Fused*> ConvExecutable::fusedFor(const CUdeviceptr* args, size_t numArgs,
                                                                     const std::vector<int64_t>& symbols) {
  if (lastFused_ && lastFused_->symbols == symbols && lastFused_->args.size() == numArgs &&
      std::equal(args, args + numArgs, lastFused_->args.begin()))
    return &*lastFused_;
  lastFused_.reset();
  Fused f;
  f.symbols = symbols;
  f.args.assign(args, args + numArgs);
  sdk::StatusOr<ConvShape> shape = ConvShape::eval(call_, symbols);
  if (!shape.isOk()) return shape.status();
  const uint64_t eb = lowering::dtypeBytes(call_.x.dtype);
  f.x = args[0] + static_cast<uint64_t>(shape->x.offset) * eb;
  f.w = args[1] + static_cast<uint64_t>(shape->w.offset) * eb;
  const CUdeviceptr* extra = args + 3;  // the epilogue's buffers follow x, w and the result
  f.y = epilogue_->bufferOf(extra, native_->out);
  f.bias = native_->bias >= 0 ? epilogue_->bufferOf(extra, native_->bias) : 0;
  f.residual = native_->residual >= 0 ? epilogue_->bufferOf(extra, native_->residual) : 0;
  // cuDNN's fused form: the forward convolution of packed, 16-byte aligned operands, the
  // batch in one call. Anything else runs the epilogue kernel.
  const bool aligned = f.x % 16 == 0 && f.w % 16 == 0 && f.y % 16 == 0 && f.bias % 16 == 0 && f.residual % 16 == 0;
  const bool nonEmpty = shape->out.numel() > 0 && shape->x.numel() > 0 && shape->w.numel() > 0;
  std::optional<DnnGeometry> g;
  if (nonEmpty) {
    sdk::StatusOr<DnnGeometry> geometry = dnnGeometry(call_, *shape);
    if (geometry.isOk()) g = std::move(*geometry);
  }
  if (aligned && g && g->xPacked && g->wPacked && g->images == shape->x.sizes[0] &&
      !isWeightGradient(*g, call_.groups)) {
    sdk::Status st = dnn_->ready();
    if (!st.isOk()) return st;
    dnn::ConvEpilogueSpec ep;
    ep.on = true;
    ep.act = native_->act == Activation::kRelu ? 1 : native_->act == Activation::kGeluTanh ? 2 : 0;
    ep.bias = native_->bias >= 0;
    ep.residual = native_->residual >= 0;
    ep.yType = dnnType(native_->outDtype);
    ep.biasType = dnnType(native_->biasDtype);
    ep.residualType = dnnType(native_->residualDtype);
    sdk::StatusOr<const Prepared*> p = prepare(*g, false, false, false, &ep);
    if (p.isOk()) f.prepared = *p;  // else: no engine takes it; the epilogue kernel runs
  }
  lastFused_ = std::move(f);
  return &*lastFused_;
}

sdk::StatusOr<size_t> ConvExecutable::accumulatorBytes(const std::vector<int64_t>& symbols) {
  if (accKnown_ && accSymbols_ == symbols) return accBytes_;
  sdk::StatusOr<ConvShape> shape = ConvShape::eval(call_, symbols);
  if (!shape.isOk()) return shape.status();
  accSymbols_ = symbols;
  accBytes_ = static_cast<size_t>(shape->out.numel()) * lowering::dtypeBytes(call_.out.dtype);
  accKnown_ = true;
  return accBytes_;
}

sdk::Status ConvExecutable::launch(const CUdeviceptr* args, size_t numArgs, const std::vector<int64_t>& symbols,
                                   CUstream stream) {
  const size_t want = 3 + (epilogue_ ? epilogue_->numExtraBuffers() : 0);
  if (numArgs != want)
    return sdk::invalidArgument("prims.convolution: " + std::to_string(numArgs) + " buffers where it takes " +
                                std::to_string(want));
  if (!epilogue_) return run(args, symbols, stream);
  if (native_) {  // inside cuDNN's kernel where an engine takes it
    sdk::StatusOr<const Fused*> f = fusedFor(args, numArgs, symbols);
    if (!f.isOk()) return f.status();
    if ((*f)->prepared) return runFused(**f, stream);
  }
  // The convolution into the accumulator temporary (or the buffer the epilogue stores the
  // result to, epilogue_kernel.h), then the epilogue kernel over it.
  CUdeviceptr acc = 0;
  if (epilogue_->resultArg() >= 0) {
    acc = epilogue_->bufferOf(args + 3, epilogue_->resultArg());
  } else {
    sdk::StatusOr<size_t> bytes = accumulatorBytes(symbols);
    if (!bytes.isOk()) return bytes.status();
    sdk::StatusOr<CUdeviceptr> temp = dnn_->accumulators.atLeast(*dnn_->api, dnn_->context, std::max<size_t>(*bytes, 1),
                                                                 "a convolution's result for its epilogue");
    if (!temp.isOk()) return temp.status();
    acc = *temp;
  }
  const CUdeviceptr conv[3] = {args[0], args[1], acc};
  sdk::Status st = run(conv, symbols, stream);
  if (!st.isOk()) return st;
  return epilogue_->launch(acc, args + 3, symbols, stream);
}

sdk::Status ConvExecutable::runFused(const Fused& f, CUstream stream) {
  const dnn::Api& D = *dnn_->dnn;
  sdk::Status st = D.check(D.setStream(dnn_->handle, stream), "prims.convolution: cudnnSetStream");
  if (!st.isOk()) return st;
  sdk::StatusOr<CUdeviceptr> ws = dnn_->scratchOf(std::max<size_t>(f.prepared->scratch(), 1));
  if (!ws.isOk()) return ws.status();
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(p); };
  st = f.prepared->graph->execute(dnn_->handle, ptr(f.x), ptr(f.w), ptr(f.y), ptr(f.bias), ptr(f.residual), ptr(*ws));
  return st.isOk() ? st : st.withContext("prims.convolution with its epilogue (" + f.prepared->g.describe() + ")");
}

sdk::Status ConvExecutable::run(const CUdeviceptr args[3], const std::vector<int64_t>& symbols, CUstream stream) {
  sdk::StatusOr<const Setup*> setup = setupFor(args, symbols);
  if (!setup.isOk()) return setup.status();
  const Setup& s = **setup;
  const DriverApi& api = *dnn_->api;
  if (s.zeroBytes > 0)
    return api.check(api.memsetD8Async(s.y, 0, s.zeroBytes, stream), "prims.convolution: zeroing an empty sum");
  if (!s.prepared) return sdk::Status::ok();
  const dnn::Api& D = *dnn_->dnn;
  sdk::Status st = D.check(D.setStream(dnn_->handle, stream), "prims.convolution: cudnnSetStream");
  if (!st.isOk()) return st;
  const bool f64 = call_.x.dtype == PLUGSDK_DTYPE_F64;
  const float one = 1, zero = 0;
  const double oneD = 1, zeroD = 0;
  const void* alpha = f64 ? static_cast<const void*>(&oneD) : &one;
  const void* beta = f64 ? static_cast<const void*>(&zeroD) : &zero;
  const uint64_t eb = lowering::dtypeBytes(call_.x.dtype);
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(p); };
  const DnnGeometry& g = s.prepared->g;
  for (int64_t first = 0; first < s.n; first += g.images) {
    const int64_t count = std::min(g.images, s.n - first);
    const Prepared* p = s.prepared;
    if (count != g.images) {
      sdk::StatusOr<const Prepared*> t = prepare(withImages(g, count), s.prepared->xSrc != nullptr,
                                                 s.prepared->wSrc != nullptr, s.prepared->ySrc != nullptr);
      if (!t.isOk()) return t.status();
      p = *t;
    }
    sdk::StatusOr<CUdeviceptr> scratch = dnn_->scratchOf(p->scratch());
    if (!scratch.isOk()) return scratch.status();
    const CUdeviceptr ws = *scratch, xt = ws + p->workspace, wt = xt + p->xTemp, yt = wt + p->wTemp;
    const CUdeviceptr x = s.x + static_cast<uint64_t>(first * g.xImage) * eb;
    const CUdeviceptr y = s.y + static_cast<uint64_t>(first * g.yImage) * eb;
    auto what = [&] { return "prims.convolution (" + p->g.describe() + ")"; };
    if (p->xSrc)
      st = D.check(D.transform(dnn_->handle, alpha, p->xSrc, ptr(x), beta, p->x, ptr(xt)), what() + ": packing x");
    if (st.isOk() && p->wSrc)
      st = D.check(D.transform(dnn_->handle, alpha, p->wSrc, ptr(s.w), beta, p->wPacked, ptr(wt)),
                   what() + ": packing the weight");
    const CUdeviceptr xIn = p->xSrc ? xt : x, wIn = p->wSrc ? wt : s.w, yOut = p->ySrc ? yt : y;
    if (st.isOk() && p->graph) {
      st = p->graph->execute(dnn_->handle, ptr(xIn), ptr(wIn), ptr(yOut), ptr(ws));
    } else if (st.isOk()) {
      const dnn::Status r = D.forward(dnn_->handle, alpha, p->x, ptr(xIn), p->w, ptr(wIn), p->conv, p->algo, ptr(ws),
                                      p->workspace, beta, p->y, ptr(yOut));
      if (r != dnn::kSuccess)
        st = D.check(r, what() + ": cudnnConvolutionForward (algorithm " + std::to_string(p->algo) + ")");
    }
    if (st.isOk() && p->ySrc)
      st = D.check(D.transform(dnn_->handle, alpha, p->y, ptr(yt), beta, p->ySrc, ptr(y)),
                   what() + ": writing the result in place");
    if (!st.isOk()) return st;
  }
  return sdk::Status::ok();
}

}  // namespace plugsdk::cuda
