// The minimal backend's library calls (samples/minimal_backend/library.c): matmul,
// convolution and sdpa on strided views and with epilogues, compared with the prims'
// reference kernels; bad attributes and descriptors are errors, never crashes.
#include "core/plugin/minimal_backend_fixture.h"

namespace plugsdk::plugin {
namespace {

// ---- library calls (samples/minimal_backend/library.c) ------------------------------------------------

// A strided operand: `storage` is the whole buffer, the view is `shape` / `strides` / `offset`
// (elements) into it.
struct View {
  HostTensor storage;
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
};

// A view whose dims lie in memory in the order `perm` (outermost first; empty: row-major),
// `offset` elements into its storage and `slack` elements before its end; storage random.
View layout(Gen& gen, DType dt, const std::vector<int64_t>& shape, std::vector<size_t> perm = {}, int64_t offset = 0,
            int64_t slack = 0) {
  if (perm.empty())
    for (size_t i = 0; i < shape.size(); ++i) perm.push_back(i);
  View v;
  v.shape = shape;
  v.strides.assign(shape.size(), 0);
  v.offset = offset;
  int64_t run = 1;
  for (size_t i = perm.size(); i-- > 0;) {
    v.strides[perm[i]] = run;
    run *= shape[perm[i]];
  }
  v.storage = gen.tensor(dt, offset + run + slack);
  return v;
}

HostTensor materialize(const View& v) {
  HostTensor t(v.storage.dtype(), v.shape);
  exec::forEachIndex(v.shape, [&](const std::vector<int64_t>& idx, int64_t linear) {
    const int64_t at = v.offset + exec::offsetOf(idx, v.strides);
    if (t.isFloating())
      t.doubles()[static_cast<size_t>(linear)] = v.storage.doubles()[static_cast<size_t>(at)];
    else
      t.setInt(linear, v.storage.getInt(at));
  });
  return t;
}

// The storage `out` must hold after the call: `values` (row-major) inside the view, the old
// elements outside it.
HostTensor expectedStorage(const View& out, const HostTensor& values) {
  HostTensor t = out.storage;
  exec::forEachIndex(out.shape, [&](const std::vector<int64_t>& idx, int64_t linear) {
    const int64_t at = out.offset + exec::offsetOf(idx, out.strides);
    if (t.isFloating())
      t.doubles()[static_cast<size_t>(at)] = values.doubles()[static_cast<size_t>(linear)];
    else
      t.setInt(at, values.getInt(linear));
  });
  return t;
}

// Sizes as size symbols ("n<value>") or constants; strides and offset as constants.
LibraryOperand operandOf(const View& v, bool symbolic, Symbols& symbols) {
  LibraryOperand o;
  o.dtype = v.storage.dtype();
  for (size_t d = 0; d < v.shape.size(); ++d) {
    if (symbolic) {
      const std::string n = "n" + std::to_string(v.shape[d]);
      symbols[n] = v.shape[d];
      o.shape.push_back(ir::SymExpr::symbol(n));
    } else {
      o.shape.emplace_back(v.shape[d]);
    }
    o.strides.emplace_back(v.strides[d]);
  }
  o.offset = ir::SymExpr(v.offset);
  return o;
}

ir::AttrMap convAttrs(std::vector<int64_t> stride, std::vector<int64_t> padding, std::vector<int64_t> dilation,
                      int64_t groups = 1, bool transposed = false, std::vector<int64_t> outputPadding = {}) {
  if (outputPadding.empty()) outputPadding.assign(stride.size(), 0);
  return {{"stride", ir::Attribute::fromInts(stride)},
          {"padding", ir::Attribute::fromInts(padding)},
          {"dilation", ir::Attribute::fromInts(dilation)},
          {"transposed", ir::Attribute::fromBool(transposed)},
          {"output_padding", ir::Attribute::fromInts(outputPadding)},
          {"groups", ir::Attribute::fromInt(groups)}};
}

ir::AttrMap sdpaAttrs(bool causal = false, std::optional<double> scale = std::nullopt, double dropout = 0,
                      int64_t seed = 0) {
  return {{"is_causal", ir::Attribute::fromBool(causal)},
          {"scale", scale ? ir::Attribute::fromFloat(*scale) : ir::Attribute::none()},
          {"dropout_p", ir::Attribute::fromFloat(dropout)},
          {"seed", ir::Attribute::fromInt(seed)}};
}

class MinimalLibrary : public MinimalBackend {
 protected:
  static const std::shared_ptr<const ir::Context>& context() {
    static const std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
    return ctx;
  }

  struct Epilogue {
    const kernel::Kernel* kernel = nullptr;
    std::vector<HostTensor>* args = nullptr;  // its arguments but the accumulator, in order (in and out)
    Symbols symbols;                          // its own symbols' values
  };

  // Compiles `op` on the views and launches it on the plugin: the outputs' storages (and the
  // epilogue's arguments) are uploaded as they are and read back.
  static StatusOr<std::vector<HostTensor>> runLibrary(const std::string& op, const ir::AttrMap& attrs,
                                                      const std::vector<std::optional<View>>& ins,
                                                      const std::vector<View>& outs, bool symbolic,
                                                      const Epilogue* epilogue = nullptr) {
    const Epilogue none;
    const Epilogue& ep = epilogue ? *epilogue : none;
    Symbols symbols;
    std::vector<LibraryOperand> li, lo;
    for (const auto& v : ins) li.push_back(v ? operandOf(*v, symbolic, symbols) : LibraryOperand{});
    for (const View& v : outs) lo.push_back(operandOf(v, symbolic, symbols));
    ASSIGN_OR_RETURN(std::unique_ptr<EncodedLibraryCall> call, encodeLibraryCall(op, attrs, li, lo));
    std::unique_ptr<EncodedKernel> enc;
    if (ep.kernel) {
      ASSIGN_OR_RETURN(enc, encodeKernel(*ep.kernel));
    }
    plugsdk_compile_library_args_t a{};
    a.struct_size = sizeof(a);
    a.client = client_;
    a.op = call->op;
    a.attributes = call->attributes.c_str();
    a.num_inputs = call->inputs.size();
    a.inputs = call->inputs.data();
    a.num_outputs = call->outputs.size();
    a.outputs = call->outputs.data();
    a.index_insns = call->insns.data();
    a.num_index_insns = call->insns.size();
    a.symbols = call->symbolPtrs.data();
    a.num_symbols = call->symbolPtrs.size();
    a.epilogue = enc ? &enc->get() : nullptr;
    RETURN_IF_ERROR(check(api().compile_library(&a), "compile_library"));
    // The call's symbols, then the epilogue's own.
    std::vector<int64_t> values;
    for (const std::string& n : call->symbols) values.push_back(symbols.at(n));
    if (enc)
      for (size_t i = 0; i < enc->get().num_symbols; ++i) values.push_back(ep.symbols.at(enc->get().symbols[i]));

    std::vector<HostTensor> results;
    for (const View& v : outs) results.push_back(v.storage);
    std::vector<HostTensor> inputs;
    inputs.reserve(ins.size());
    std::vector<HostTensor*> hosts;  // per buffer: what it holds, nullptr for a NULL buffer
    for (const auto& v : ins) {
      inputs.push_back(v ? v->storage : HostTensor(DType::kF32, {0}));
      hosts.push_back(v ? &inputs.back() : nullptr);
    }
    for (size_t i = 0; i < results.size(); ++i) hosts.push_back(i == 0 && enc ? nullptr : &results[i]);
    if (enc)
      for (HostTensor& t : *ep.args) hosts.push_back(&t);
    std::vector<plugsdk_buffer_t*> bufs;
    for (HostTensor* t : hosts) {
      if (!t) {
        bufs.push_back(nullptr);
        continue;
      }
      std::vector<uint8_t> bytes = toBytes(*t);
      bufs.push_back(allocate(bytes.size()));
      if (!bytes.empty()) {
        EXPECT_TRUE(copy(PLUGSDK_COPY_HOST_TO_DEVICE, bufs.back(), bytes.data(), bytes.size()).isOk());
      }
    }
    Status s = launch(a.out_executable, bufs, values);
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (!hosts[i]) continue;
      std::vector<uint8_t> bytes(toBytes(*hosts[i]).size());
      if (!bytes.empty()) {
        EXPECT_TRUE(copy(PLUGSDK_COPY_DEVICE_TO_HOST, bufs[i], bytes.data(), bytes.size()).isOk());
      }
      *hosts[i] = fromBytes(hosts[i]->dtype(), bytes);
      release(bufs[i]);
    }
    destroy(a.out_executable);
    RETURN_IF_ERROR(s);
    return results;
  }

  // The prim's reference kernel on the materialized views, floats rounded to their dtype as
  // memory holds them (the reference executor keeps float64).
  static StatusOr<std::vector<HostTensor>> reference(const std::string& op, const ir::AttrMap& attrs,
                                                     const std::vector<std::optional<View>>& ins) {
    std::vector<HostTensor> dense;
    dense.reserve(ins.size());
    std::vector<const HostTensor*> ptrs;
    for (const auto& v : ins) {
      if (v) dense.push_back(materialize(*v));
      ptrs.push_back(v ? &dense.back() : nullptr);
    }
    ASSIGN_OR_RETURN(std::vector<HostTensor> outs, exec::runOp(context(), op, ptrs, attrs));
    for (HostTensor& t : outs)
      if (t.isFloating())
        for (double& v : t.doubles()) v = exec::roundToFloatType(v, t.dtype());
    return outs;
  }

  // The call on the plugin, with constant and with symbolic sizes, against the reference:
  // every element of every output's storage must be the reference's (inside the view, bit
  // for bit, NaN == NaN) or untouched (outside). Output 0 is a strided view when `strided`.
  static void checkCall(const std::string& what, const std::string& op, const ir::AttrMap& attrs,
                        const std::vector<std::optional<View>>& ins, bool strided = false) {
    auto want = reference(op, attrs, ins);
    ASSERT_TRUE(want.isOk()) << what << ": " << want.status().toString();
    Gen gen;
    std::vector<View> outs;
    for (size_t i = 0; i < want->size(); ++i) {
      const HostTensor& w = (*want)[i];
      std::vector<size_t> perm;
      if (strided && i == 0 && w.rank() >= 2) {  // the last two dims swapped, after 3 elements
        for (size_t d = 0; d < static_cast<size_t>(w.rank()); ++d) perm.push_back(d);
        std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
      }
      outs.push_back(layout(gen, w.dtype(), w.shape(), perm, strided ? 3 : 0, strided ? 2 : 0));
    }
    for (bool symbolic : {false, true}) {
      auto got = runLibrary(op, attrs, ins, outs, symbolic);
      ASSERT_TRUE(got.isOk()) << what << ": " << got.status().toString();
      std::vector<HostTensor> expected;
      for (size_t i = 0; i < outs.size(); ++i) expected.push_back(expectedStorage(outs[i], (*want)[i]));
      expectSame(expected, *got, what + (symbolic ? " (symbolic sizes)" : ""));
    }
  }

  // compile_library on a call whose descriptors or attributes were tampered with.
  static Status compileRaw(plugsdk_compile_library_args_t a) {
    a.struct_size = sizeof(a);
    a.client = client_;
    Status s = check(api().compile_library(&a), "compile_library");
    if (s.isOk()) destroy(a.out_executable);
    return s;
  }
};

TEST_F(MinimalLibrary, MatmulMatchesTheReference) {
  Gen gen;
  checkCall("f64", "prims.matmul", {}, {layout(gen, DType::kF64, {3, 4}), layout(gen, DType::kF64, {4, 5})});
  checkCall("f64 batched", "prims.matmul", {},
            {layout(gen, DType::kF64, {2, 3, 4}), layout(gen, DType::kF64, {2, 4, 5})}, true);
  // Transposed operands through strides, with offsets: a is [2, 3, 4] stored as [2, 4, 3]
  // after 5 elements; b is [2, 4, 5] stored as [5, 2, 4].
  checkCall("transposed views", "prims.matmul", {},
            {layout(gen, DType::kF64, {2, 3, 4}, {0, 2, 1}, 5, 1), layout(gen, DType::kF64, {2, 4, 5}, {2, 0, 1}, 1)},
            true);
  checkCall("rank 4", "prims.matmul", {},
            {layout(gen, DType::kF32, {2, 1, 3, 4}, {1, 0, 3, 2}), layout(gen, DType::kF32, {2, 1, 4, 3})});
  checkCall("K = 0", "prims.matmul", {}, {layout(gen, DType::kF64, {3, 0}), layout(gen, DType::kF64, {0, 2})});
  checkCall("M = 0", "prims.matmul", {}, {layout(gen, DType::kF64, {0, 3}), layout(gen, DType::kF64, {3, 2})});
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kI64, DType::kI32, DType::kI16, DType::kU8})
    checkCall(dt(t) + " with edge values", "prims.matmul", {},
              {layout(gen, t, {2, 4, 16}), layout(gen, t, {2, 16, 3}, {0, 2, 1})});
}

TEST_F(MinimalLibrary, ConvolutionMatchesTheReference) {
  Gen gen;
  gen.edges = false;
  const DType F = DType::kF64;
  checkCall("2d", "prims.convolution", convAttrs({1, 1}, {0, 0}, {1, 1}),
            {layout(gen, F, {2, 3, 6, 7}), layout(gen, F, {4, 3, 3, 2})});
  checkCall("2d stride padding", "prims.convolution", convAttrs({2, 3}, {1, 2}, {1, 1}),
            {layout(gen, F, {1, 2, 9, 8}), layout(gen, F, {4, 2, 3, 3})}, true);
  checkCall("2d dilation groups", "prims.convolution", convAttrs({1, 1}, {2, 2}, {2, 2}, 2),
            {layout(gen, F, {1, 4, 9, 9}), layout(gen, F, {6, 2, 3, 3})});
  checkCall("1d depthwise", "prims.convolution", convAttrs({2}, {1}, {1}, 3),
            {layout(gen, F, {2, 3, 10}), layout(gen, F, {6, 1, 4})});
  checkCall("1d single values", "prims.convolution", convAttrs({2}, {3}, {2}),
            {layout(gen, F, {2, 3, 10}), layout(gen, F, {2, 3, 3})});
  checkCall("3d", "prims.convolution", convAttrs({1, 2, 1}, {1, 0, 0}, {1, 1, 2}),
            {layout(gen, F, {1, 2, 4, 5, 3}), layout(gen, F, {3, 2, 2, 3, 1})});
  checkCall("3d one value for every dim", "prims.convolution", convAttrs({2}, {1}, {1}),
            {layout(gen, F, {1, 2, 5, 4, 4}), layout(gen, F, {2, 2, 3, 2, 2})});
  checkCall("transposed 2d", "prims.convolution", convAttrs({2, 2}, {1, 0}, {1, 1}, 1, true, {1, 0}),
            {layout(gen, F, {2, 4, 3, 4}), layout(gen, F, {4, 3, 3, 3})}, true);
  checkCall("transposed 1d groups dilation", "prims.convolution", convAttrs({3}, {1}, {2}, 2, true, {2}),
            {layout(gen, F, {1, 4, 5}), layout(gen, F, {4, 1, 3})});
  checkCall("transposed 3d", "prims.convolution", convAttrs({2, 1, 2}, {0, 1, 1}, {1, 2, 1}, 1, true, {1, 0, 0}),
            {layout(gen, F, {1, 2, 3, 4, 3}), layout(gen, F, {2, 3, 2, 2, 3})});
  // Channels-last input and a permuted weight, through strides.
  checkCall("channels-last views", "prims.convolution", convAttrs({2, 1}, {1, 1}, {1, 2}, 2),
            {layout(gen, F, {2, 4, 7, 6}, {0, 2, 3, 1}, 7), layout(gen, F, {6, 2, 3, 2}, {2, 3, 1, 0}, 1)}, true);
  gen.edges = true;  // NaN / inf weights poison the outputs whose window touches padding, as PyTorch
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kI32, DType::kI64})
    checkCall(dt(t) + " with edge values", "prims.convolution", convAttrs({1, 2}, {1, 1}, {1, 1}),
              {layout(gen, t, {1, 3, 5, 6}), layout(gen, t, {4, 3, 3, 3})});
  checkCall("f32 transposed with edge values", "prims.convolution", convAttrs({2, 2}, {1, 1}, {1, 1}, 1, true, {1, 1}),
            {layout(gen, DType::kF32, {1, 2, 4, 3}), layout(gen, DType::kF32, {2, 3, 3, 3})});
}

TEST_F(MinimalLibrary, SdpaMatchesTheReference) {
  Gen gen;
  gen.edges = false;
  const DType F = DType::kF64;
  checkCall("basic", "prims.sdpa", sdpaAttrs(),
            {layout(gen, F, {2, 3, 5, 8}), layout(gen, F, {2, 3, 6, 8}), layout(gen, F, {2, 3, 6, 4}), std::nullopt},
            true);
  checkCall("rank 2, scale", "prims.sdpa", sdpaAttrs(false, 0.3),
            {layout(gen, F, {4, 3}), layout(gen, F, {6, 3}), layout(gen, F, {6, 2}), std::nullopt});
  checkCall("causal", "prims.sdpa", sdpaAttrs(true),
            {layout(gen, F, {2, 5, 4}), layout(gen, F, {2, 5, 4}), layout(gen, F, {2, 5, 4}), std::nullopt});
  checkCall("causal L > S (top-left: rows past S see every key)", "prims.sdpa", sdpaAttrs(true),
            {layout(gen, F, {1, 6, 4}), layout(gen, F, {1, 3, 4}), layout(gen, F, {1, 3, 2}), std::nullopt});
  // Heads in [B, L, H, E] memory viewed as [B, H, L, E], as attention after a transpose.
  checkCall("head-transposed views", "prims.sdpa", sdpaAttrs(true, 0.5),
            {layout(gen, F, {2, 2, 4, 3}, {0, 2, 1, 3}, 2), layout(gen, F, {2, 2, 4, 3}, {0, 2, 1, 3}),
             layout(gen, F, {2, 2, 4, 5}, {0, 2, 1, 3}, 1), std::nullopt});
  Gen maskGen;
  maskGen.intLo = 0;
  maskGen.intHi = 1;
  checkCall("bool mask", "prims.sdpa", sdpaAttrs(),
            {layout(gen, F, {2, 4, 3}), layout(gen, F, {2, 5, 3}), layout(gen, F, {2, 5, 3}),
             layout(maskGen, DType::kBool, {2, 4, 5})});
  // A broadcast mask: [4, 5] stored once, batch stride 0 (prims.broadcast_in_dim as a view).
  View broadcast = layout(maskGen, DType::kBool, {2, 4, 5});
  broadcast.strides[0] = 0;
  checkCall("bool mask broadcast through a 0 stride", "prims.sdpa", sdpaAttrs(),
            {layout(gen, F, {2, 4, 3}), layout(gen, F, {2, 5, 3}), layout(gen, F, {2, 5, 3}), broadcast});
  View rows = layout(maskGen, DType::kBool, {1, 3, 3});
  for (int64_t i = 0; i < 9; ++i) rows.storage.setInt(i, i / 3 != 1);  // row 1 fully masked: 0, lse 0
  checkCall("fully masked row", "prims.sdpa", sdpaAttrs(),
            {layout(gen, F, {1, 3, 2}), layout(gen, F, {1, 3, 2}), layout(gen, F, {1, 3, 2}), rows});
  View floatMask = layout(gen, F, {2, 4, 5});
  floatMask.storage.doubles()[3] = -INFINITY;
  checkCall("float mask", "prims.sdpa", sdpaAttrs(),
            {layout(gen, F, {2, 4, 3}), layout(gen, F, {2, 5, 3}), layout(gen, F, {2, 5, 3}), floatMask}, true);
  checkCall("dropout", "prims.sdpa", sdpaAttrs(false, std::nullopt, 0.4, 11),
            {layout(gen, F, {2, 4, 3}), layout(gen, F, {2, 5, 3}), layout(gen, F, {2, 5, 2}), std::nullopt});
  checkCall("dropout causal", "prims.sdpa", sdpaAttrs(true, 0.7, 0.25, -5),
            {layout(gen, F, {2, 2, 4, 3}), layout(gen, F, {2, 2, 4, 3}), layout(gen, F, {2, 2, 4, 2}), std::nullopt});
  checkCall("S = 0 (every row fully masked)", "prims.sdpa", sdpaAttrs(),
            {layout(gen, F, {2, 3, 4}), layout(gen, F, {2, 0, 4}), layout(gen, F, {2, 0, 2}), std::nullopt});
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16})
    checkCall(
        dt(t), "prims.sdpa", sdpaAttrs(),
        {layout(gen, t, {2, 4, 8}), layout(gen, t, {2, 6, 8}), layout(gen, t, {2, 6, 8}), layout(gen, t, {2, 4, 6})});
  gen.edges = true;
  checkCall("f32 with edge values", "prims.sdpa", sdpaAttrs(),
            {layout(gen, DType::kF32, {2, 4, 8}), layout(gen, DType::kF32, {2, 6, 8}),
             layout(gen, DType::kF32, {2, 6, 8}), std::nullopt});
}

// With an epilogue, output 0 is not stored: the epilogue reads it through its accumulator
// and writes the real outputs; its other arguments follow the call's buffers in order, and
// its symbols follow the call's.
TEST_F(MinimalLibrary, EpiloguesReadTheResultThroughTheAccumulator) {
  Gen gen;
  gen.edges = false;
  // relu(matmul + bias); the grid's rows are the epilogue's own symbol.
  kernel::Kernel relu = parse(R"(kernel @bias_relu(%bias: f64 in, %acc: f64 acc, %y: f64 out) grid [m, 5] {
  %0 = load %acc[5*i0+i1] : f64
  %1 = load %bias[i1] : f64
  %2 = add %0, %1 : f64
  %3 = const 0.0 : f64
  %4 = maximum %2, %3 : f64
  store %y[5*i0+i1], %4
})");
  const View a = layout(gen, DType::kF64, {6, 4}, {1, 0}, 2), b = layout(gen, DType::kF64, {4, 5});
  auto want = reference("prims.matmul", {}, {a, b});
  ASSERT_TRUE(want.isOk());
  const HostTensor bias = gen.tensor(DType::kF64, 5);
  for (bool symbolic : {false, true}) {
    std::vector<HostTensor> args = {bias, HostTensor(DType::kF64, {30})};
    View out = layout(gen, DType::kF64, {6, 5});
    const Epilogue ep{&relu, &args, {{"m", 6}}};
    auto got = runLibrary("prims.matmul", {}, {a, b}, {out}, symbolic, &ep);
    ASSERT_TRUE(got.isOk()) << got.status().toString();
    expectSame({out.storage}, {(*got)[0]}, "output 0 is not written");
    HostTensor y(DType::kF64, {30});
    for (int64_t i = 0; i < 30; ++i) y.doubles()[i] = std::max(want->front().doubles()[i] + bias.doubles()[i % 5], 0.0);
    expectSame({bias, y}, args, "bias_relu epilogue");
  }

  // An f32 convolution whose epilogue writes two outputs, one of another dtype.
  kernel::Kernel two = parse(R"(kernel @two(%acc: f32 acc, %y: f32 out, %s: f32 in, %z: f64 out) grid [n] {
  %0 = load %acc[i0] : f32
  %1 = load %s[0] : f32
  %2 = mul %0, %1 : f32
  store %y[i0], %2
  %3 = cast %0 : f64
  store %z[i0], %3
})");
  const View x = layout(gen, DType::kF32, {1, 2, 5, 5}), w = layout(gen, DType::kF32, {3, 2, 3, 3});
  const ir::AttrMap attrs = convAttrs({2, 2}, {1, 1}, {1, 1});
  want = reference("prims.convolution", attrs, {x, w});
  ASSERT_TRUE(want.isOk());
  const int64_t n = want->front().numel();  // 1 * 3 * 3 * 3
  HostTensor scale(DType::kF32, {1});
  scale.doubles()[0] = 3.0;
  std::vector<HostTensor> args = {HostTensor(DType::kF32, {n}), scale, HostTensor(DType::kF64, {n})};
  const Epilogue ep{&two, &args, {{"n", n}}};
  auto got =
      runLibrary("prims.convolution", attrs, {x, w}, {layout(gen, DType::kF32, want->front().shape())}, true, &ep);
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  HostTensor y(DType::kF32, {n}), z(DType::kF64, {n});
  for (int64_t i = 0; i < n; ++i) {
    z.doubles()[i] = want->front().doubles()[i];  // rounded to f32, the accumulator's dtype
    y.doubles()[i] = exec::roundToFloatType(z.doubles()[i] * 3.0, DType::kF32);
  }
  expectSame({y, scale, z}, args, "two-output epilogue");
}

TEST_F(MinimalLibrary, BadAttributesAreErrorsNamingTheAttribute) {
  Gen gen;
  Symbols symbols;
  std::vector<LibraryOperand> ins = {operandOf(layout(gen, DType::kF32, {1, 2, 5, 5}), false, symbols),
                                     operandOf(layout(gen, DType::kF32, {3, 2, 3, 3}), false, symbols)};
  std::vector<LibraryOperand> outs = {operandOf(layout(gen, DType::kF32, {1, 3, 3, 3}), false, symbols)};
  auto call = encodeLibraryCall("prims.convolution", convAttrs({2, 2}, {1, 1}, {1, 1}), ins, outs);
  ASSERT_TRUE(call.isOk());
  // The text exactly as the core prints it.
  EXPECT_EQ((*call)->attributes,
            "dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [1, 1], stride = [2, 2], "
            "transposed = false");
  plugsdk_compile_library_args_t a{};
  a.op = (*call)->op;
  a.num_inputs = 2;
  a.inputs = (*call)->inputs.data();
  a.num_outputs = 1;
  a.outputs = (*call)->outputs.data();
  a.index_insns = (*call)->insns.data();
  a.num_index_insns = (*call)->insns.size();
  a.attributes = (*call)->attributes.c_str();
  EXPECT_TRUE(compileRaw(a).isOk());
  const std::string good = "dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [1, 1], ";
  const std::pair<std::string, std::string> cases[] = {
      {good + "stride = [2, 2]", "missing attribute 'transposed'"},
      {"", "missing attribute 'stride'"},
      {good + "stride = [2, 2], transposed = false, alpha = 1", "unknown attribute 'alpha'"},
      {good + "stride = [a, 2], transposed = false", "attribute 'stride' = '[a, 2]' is not a list of up to 3 integers"},
      {good + "stride = [1, 1, 1, 1], transposed = false", "attribute 'stride' = '[1, 1, 1, 1]' is not"},
      {good + "stride = [1, 1, 1], transposed = false",
       "attribute 'stride' = '[1, 1, 1]' is not a list of 1 or 2 integers (the spatial dims)"},
      {good + "stride = [0, 1], transposed = false", "attribute 'stride' = '[0, 1]' is not a list of positive"},
      {good + "stride = 2, transposed = false", "attribute 'stride' = '2' is not"},
      {good + "stride = [2, 2], transposed = maybe", "attribute 'transposed' = 'maybe' is not true or false"},
      {"dilation = [1, 1], groups = 0, output_padding = [0, 0], padding = [1, 1], stride = [2, 2], transposed = false",
       "attribute 'groups' = '0' is not a positive integer"},
      {"dilation = [1, 1], groups = 99999999999999999999, output_padding = [0, 0], padding = [1, 1], stride = [2, "
       "2], transposed = false",
       "attribute 'groups'"},
      {"dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [s0, 1], stride = [2, 2], transposed = false",
       "attribute 'padding' = '[s0, 1]' is not"},
      {good + "stride = [2, 2], transposed = false, stride = [1, 1]", "attribute 'stride' is given twice"},
      {good + "stride [2, 2], transposed = false", "attribute 'stride' has no '= value'"},
      {good + "stride = [2, 2, transposed = false", "the value of attribute 'stride' is unbalanced"},
      {good + "stride = [2, 2]], transposed = false", "the value of attribute 'stride' is unbalanced"},
      {good + "stride = [2, 2], transposed = false,", "attributes end with a ','"},
      {good + "stride = , transposed = false", "attribute 'stride' has no value"},
      {"= 3", "cannot parse the attributes at '= 3'"},
  };
  for (const auto& [text, message] : cases) {
    a.attributes = text.c_str();
    Status s = compileRaw(a);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(s.message().find("compile_library: prims.convolution: " + message), std::string::npos)
        << text << ": " << s.toString();
  }
  // matmul takes none; sdpa's are optional with the schema's defaults, and checked.
  a.op = PLUGSDK_LIBRARY_MATMUL;
  std::vector<LibraryOperand> mm = {operandOf(layout(gen, DType::kF32, {2, 3}), false, symbols),
                                    operandOf(layout(gen, DType::kF32, {3, 4}), false, symbols),
                                    operandOf(layout(gen, DType::kF32, {2, 4}), false, symbols)};
  call = encodeLibraryCall("prims.matmul", {}, {mm[0], mm[1]}, {mm[2]});
  ASSERT_TRUE(call.isOk());
  EXPECT_EQ((*call)->attributes, "");
  a.inputs = (*call)->inputs.data();
  a.outputs = (*call)->outputs.data();
  a.index_insns = (*call)->insns.data();
  a.num_index_insns = (*call)->insns.size();
  a.attributes = nullptr;
  EXPECT_TRUE(compileRaw(a).isOk());
  a.attributes = "alpha = 1.0";
  EXPECT_NE(compileRaw(a).message().find("prims.matmul: unknown attribute 'alpha' (it takes: none)"),
            std::string::npos);

  const View q = layout(gen, DType::kF32, {2, 3, 4});
  std::vector<LibraryOperand> sd = {
      operandOf(q, false, symbols), operandOf(q, false, symbols),
      operandOf(q, false, symbols), LibraryOperand{},
      operandOf(q, false, symbols), operandOf(layout(gen, DType::kF32, {2, 3}), false, symbols)};
  call = encodeLibraryCall("prims.sdpa", sdpaAttrs(true, 0.25, 0.5, 7), {sd[0], sd[1], sd[2], sd[3]}, {sd[4], sd[5]});
  ASSERT_TRUE(call.isOk());
  EXPECT_EQ((*call)->attributes, "dropout_p = 0.5, is_causal = true, scale = 0.25, seed = 7");
  a.op = PLUGSDK_LIBRARY_SDPA;
  a.num_inputs = 4;
  a.inputs = (*call)->inputs.data();
  a.num_outputs = 2;
  a.outputs = (*call)->outputs.data();
  a.index_insns = (*call)->insns.data();
  a.num_index_insns = (*call)->insns.size();
  for (const char* ok : {"", "scale = none", "dropout_p = 1e-05, seed = -3", "scale = inf", "is_causal = false"}) {
    a.attributes = ok;
    EXPECT_TRUE(compileRaw(a).isOk()) << ok;
  }
  const std::pair<const char*, const char*> sdpaCases[] = {
      {"dropout_p = 1.5", "attribute 'dropout_p' = '1.5' is not a probability in [0, 1]"},
      {"dropout_p = nan", "attribute 'dropout_p' = 'nan' is not a probability"},
      {"scale = big", "attribute 'scale' = 'big' is not a float or none"},
      {"seed = 1.5", "attribute 'seed' = '1.5' is not an integer"},
      {"is_causal = 1", "attribute 'is_causal' = '1' is not true or false"},
      {"causal = true", "unknown attribute 'causal' (it takes: dropout_p, is_causal, scale, seed)"},
  };
  for (const auto& [text, message] : sdpaCases) {
    a.attributes = text;
    Status s = compileRaw(a);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(s.message().find(std::string("prims.sdpa: ") + message), std::string::npos) << s.toString();
  }
}

TEST_F(MinimalLibrary, BadDescriptorsAreErrorsNotCrashes) {
  Gen gen;
  Symbols symbols;
  const View av = layout(gen, DType::kF64, {2, 3}), bv = layout(gen, DType::kF64, {3, 4});
  const View ov = layout(gen, DType::kF64, {2, 4});
  std::vector<LibraryOperand> ins = {operandOf(av, true, symbols), operandOf(bv, true, symbols)};
  std::vector<LibraryOperand> outs = {operandOf(ov, true, symbols)};
  auto call = encodeLibraryCall("prims.matmul", {}, ins, outs);
  ASSERT_TRUE(call.isOk());
  const EncodedLibraryCall& c = **call;
  plugsdk_compile_library_args_t good{};
  good.op = c.op;
  good.num_inputs = 2;
  good.inputs = c.inputs.data();
  good.num_outputs = 1;
  good.outputs = c.outputs.data();
  good.index_insns = c.insns.data();
  good.num_index_insns = c.insns.size();
  good.symbols = c.symbolPtrs.data();
  good.num_symbols = c.symbolPtrs.size();
  EXPECT_TRUE(compileRaw(good).isOk());

  auto expectBad = [](const plugsdk_compile_library_args_t& a, StatusCode code, const std::string& part) {
    Status s = compileRaw(a);
    EXPECT_EQ(s.code(), code) << s.toString();
    EXPECT_NE(s.message().find(part), std::string::npos) << s.toString();
  };
  plugsdk_compile_library_args_t a = good;
  a.op = 8;
  expectBad(a, StatusCode::kInvalidArgument, "compile_library: op 8 is not one library op bit");
  a = good;
  a.num_inputs = 1;
  expectBad(a, StatusCode::kInvalidArgument, "prims.matmul: takes 2 inputs and 1 outputs, got 1 and 1");
  a = good;
  a.outputs = nullptr;
  expectBad(a, StatusCode::kInvalidArgument, "inputs, outputs or index_insns is NULL");
  std::vector<plugsdk_tensor_desc_t> descs(c.inputs);
  a = good;
  a.inputs = descs.data();
  descs[1].dtype = 42;
  expectBad(a, StatusCode::kInvalidArgument, "prims.matmul: b has unknown dtype 42");
  descs = c.inputs;
  descs[1].dtype = UINT32_MAX;
  expectBad(a, StatusCode::kInvalidArgument, "b is absent, and it is not optional");
  descs = c.inputs;
  descs[0].rank = 1;
  expectBad(a, StatusCode::kInvalidArgument, "a has rank 1 (needs at least 2)");
  descs = c.inputs;
  descs[0].rank = 99;
  expectBad(a, StatusCode::kInvalidArgument, "a has rank 99 (at most 16)");
  descs = c.inputs;
  descs[1].dtype = static_cast<uint32_t>(DType::kI64);
  expectBad(a, StatusCode::kInvalidArgument, "b and a are not both floating or both integral");
  descs = c.inputs;
  std::vector<plugsdk_index_expr_t> exprs(descs[0].sizes, descs[0].sizes + 4);  // sizes, then strides
  descs[0].sizes = exprs.data();
  descs[0].strides = exprs.data() + 2;
  exprs[1] = {static_cast<uint32_t>(c.insns.size()), 1};
  expectBad(a, StatusCode::kInvalidArgument, "a size of a: index expression");
  exprs[1] = {0, 0};
  expectBad(a, StatusCode::kInvalidArgument, "outside the");
  descs[0].sizes = nullptr;
  expectBad(a, StatusCode::kInvalidArgument, "a has rank 2 and NULL sizes or strides");
  std::vector<plugsdk_index_insn_t> insns(c.insns);
  a = good;
  a.index_insns = insns.data();
  for (auto& in : insns)
    if (in.op == PLUGSDK_INDEX_SYMBOL) in.operand = 17;
  expectBad(a, StatusCode::kInvalidArgument, "uses symbol 17 of 3");
  insns = c.insns;
  insns[0].op = PLUGSDK_INDEX_GRID_VAR;
  expectBad(a, StatusCode::kInvalidArgument, "index op 1 is not allowed in a descriptor");
  insns = c.insns;
  insns[0].op = PLUGSDK_INDEX_MUL;
  expectBad(a, StatusCode::kInvalidArgument, "index program underflows its stack");
  insns[0].op = 99;
  expectBad(a, StatusCode::kInvalidArgument, "index op 99");

  // Epilogues: exactly one accumulator of the result's dtype; none on sdpa.
  kernel::Kernel noAcc = parse(R"(kernel @e(%x: f64 in, %y: f64 out) grid [8] {
  %0 = load %x[i0] : f64
  store %y[i0], %0
})");
  auto enc = encodeKernel(noAcc);
  ASSERT_TRUE(enc.isOk());
  a = good;
  a.epilogue = &(*enc)->get();
  expectBad(a, StatusCode::kInvalidArgument, "the epilogue kernel @e has 0 ACCUMULATOR arguments, needs 1");
  kernel::Kernel f32Acc = parse(R"(kernel @e(%acc: f32 acc, %y: f32 out) grid [8] {
  %0 = load %acc[i0] : f32
  store %y[i0], %0
})");
  auto enc2 = encodeKernel(f32Acc);
  ASSERT_TRUE(enc2.isOk());
  a.epilogue = &(*enc2)->get();
  expectBad(a, StatusCode::kInvalidArgument,
            "the epilogue's accumulator %acc has dtype 8, the result (output 0) dtype 9");
  plugsdk_kernel_t broken = (*enc2)->get();
  broken.num_index_insns = 0;
  a.epilogue = &broken;
  expectBad(a, StatusCode::kInvalidArgument, "compile_kernel: kernel @e");

  // Launch-time checks: symbol values give the sizes; every reachable element is checked.
  auto x = [&]() {
    plugsdk_compile_library_args_t ok = good;
    ok.struct_size = sizeof(ok);
    ok.client = client_;
    EXPECT_TRUE(check(api().compile_library(&ok), "compile_library").isOk());
    return ok.out_executable;
  }();
  std::vector<int64_t> values;  // n2, n3, n4 in the call's order
  for (const std::string& n : c.symbols) values.push_back(std::stoll(n.substr(1)));
  plugsdk_buffer_t* big = allocate(8 * 64);
  plugsdk_buffer_t* small = allocate(8 * 5);
  EXPECT_TRUE(launch(x, {big, big, big}, values).isOk());
  auto expectLaunch = [&](const std::vector<plugsdk_buffer_t*>& bufs, const std::vector<int64_t>& v, StatusCode code,
                          const std::string& part, const std::vector<uint64_t>* offsets = nullptr) {
    Status s = launch(x, bufs, v, offsets);
    EXPECT_EQ(s.code(), code) << s.toString();
    EXPECT_NE(s.message().find(part), std::string::npos) << s.toString();
  };
  expectLaunch({big, big}, values, StatusCode::kInvalidArgument, "library call prims.matmul takes 3 buffers, got 2");
  expectLaunch({big, big, big}, {1}, StatusCode::kInvalidArgument, "takes 3 symbol values, got 1");
  expectLaunch({big, small, big}, values, StatusCode::kOutOfRange,
               "prims.matmul: b reaches elements [0, 11], outside its buffer's 5 elements");
  const std::vector<uint64_t> offsets = {0, 0, 8 * 60};
  expectLaunch({big, big, big}, values, StatusCode::kOutOfRange, "out reaches elements [0, 7], outside its buffer's 4",
               &offsets);
  const std::vector<uint64_t> past = {8 * 65, 0, 0};
  expectLaunch({big, big, big}, values, StatusCode::kOutOfRange, "offset 520 of buffer 0 passes the end", &past);
  expectLaunch({nullptr, big, big}, values, StatusCode::kInvalidArgument, "the buffer of a is NULL");
  expectLaunch({big, reinterpret_cast<plugsdk_buffer_t*>(x), big}, values, StatusCode::kInvalidArgument,
               "bad buffer handle for buffer 1");
  std::vector<int64_t> negative = values;
  negative[0] = -1;
  expectLaunch({big, big, big}, negative, StatusCode::kInvalidArgument, "has size -1");
  std::vector<int64_t> huge = values;
  huge[0] = int64_t{1} << 62;
  expectLaunch({big, big, big}, huge, StatusCode::kOutOfRange, "");
  release(big);
  release(small);
  destroy(x);

  // Shapes that do not fit the op are launch errors (sizes are only known then).
  std::vector<LibraryOperand> mismatched = {operandOf(layout(gen, DType::kF64, {2, 3}), false, symbols),
                                            operandOf(layout(gen, DType::kF64, {4, 4}), false, symbols),
                                            operandOf(layout(gen, DType::kF64, {2, 4}), false, symbols)};
  auto bad = encodeLibraryCall("prims.matmul", {}, {mismatched[0], mismatched[1]}, {mismatched[2]});
  ASSERT_TRUE(bad.isOk());
  plugsdk_compile_library_args_t m = good;
  m.struct_size = sizeof(m);
  m.client = client_;
  m.inputs = (*bad)->inputs.data();
  m.outputs = (*bad)->outputs.data();
  m.index_insns = (*bad)->insns.data();
  m.num_index_insns = (*bad)->insns.size();
  m.num_symbols = 0;
  ASSERT_TRUE(check(api().compile_library(&m), "compile_library").isOk());
  big = allocate(8 * 64);
  Status s = launch(m.out_executable, {big, big, big}, {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[2, 3] x [4, 4] -> [2, 4]: the shapes do not match"), std::string::npos) << s.toString();
  release(big);
  destroy(m.out_executable);

  auto conv = encodeLibraryCall("prims.convolution", convAttrs({1, 1}, {0, 0}, {1, 1}),
                                {operandOf(layout(gen, DType::kF64, {1, 2, 5, 5}), false, symbols),
                                 operandOf(layout(gen, DType::kF64, {3, 2, 3, 3}), false, symbols)},
                                {operandOf(layout(gen, DType::kF64, {1, 3, 4, 3}), false, symbols)});
  ASSERT_TRUE(conv.isOk());
  plugsdk_compile_library_args_t cv{};
  cv.struct_size = sizeof(cv);
  cv.client = client_;
  cv.op = PLUGSDK_LIBRARY_CONVOLUTION;
  cv.attributes = (*conv)->attributes.c_str();
  cv.num_inputs = 2;
  cv.inputs = (*conv)->inputs.data();
  cv.num_outputs = 1;
  cv.outputs = (*conv)->outputs.data();
  cv.index_insns = (*conv)->insns.data();
  cv.num_index_insns = (*conv)->insns.size();
  ASSERT_TRUE(check(api().compile_library(&cv), "compile_library").isOk());
  big = allocate(8 * 64);
  s = launch(cv.out_executable, {big, big, big}, {});
  EXPECT_NE(s.message().find("spatial dim 0: out has size 4, the attributes give 3"), std::string::npos)
      << s.toString();
  release(big);
  destroy(cv.out_executable);
  cv.op = PLUGSDK_LIBRARY_SDPA;
  Status ss = check(api().compile_library(&cv), "compile_library");
  EXPECT_NE(ss.message().find("prims.sdpa: takes 4 inputs and 2 outputs, got 2 and 1"), std::string::npos);
}

TEST_F(MinimalLibrary, ClientOptionsChooseTheLibraryOps) {
  auto infoWith = [](const char* options, plugsdk_device_info_t& info) -> Status {
    plugsdk_client_create_args_t c{};
    c.struct_size = sizeof(c);
    c.options = options;
    RETURN_IF_ERROR(check(api().client_create(&c), "client_create"));
    info = plugsdk_device_info_t{};
    info.struct_size = sizeof(info);
    plugsdk_device_info_args_t d{};
    d.struct_size = sizeof(d);
    d.client = c.out_client;
    d.info = &info;
    Status s = check(api().device_info(&d), "device_info");
    if (s.isOk()) {  // library ops the client leaves out are UNIMPLEMENTED at compile time
      plugsdk_compile_library_args_t lib{};
      lib.struct_size = sizeof(lib);
      lib.client = c.out_client;
      lib.op = PLUGSDK_LIBRARY_CONVOLUTION;
      Status ls = check(api().compile_library(&lib), "compile_library");
      EXPECT_EQ(ls.code(), info.library_ops & PLUGSDK_LIBRARY_CONVOLUTION ? StatusCode::kInvalidArgument
                                                                          : StatusCode::kUnimplemented)
          << ls.toString();
    }
    plugsdk_client_destroy_args_t x{};
    x.struct_size = sizeof(x);
    x.client = c.out_client;
    EXPECT_TRUE(check(api().client_destroy(&x), "client_destroy").isOk());
    return s;
  };
  const uint32_t all = PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION | PLUGSDK_LIBRARY_SDPA;
  const struct {
    const char* options;
    uint32_t library, epilogue;
  } good[] = {
      {nullptr, all, PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION},
      {"", all, PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION},
      {"library=none", 0, 0},
      {" ; library = all ;", all, PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION},
      {"library=matmul, sdpa", PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_SDPA, PLUGSDK_LIBRARY_MATMUL},
      {"library=sdpa", PLUGSDK_LIBRARY_SDPA, 0},
      {"library=none;library=convolution", PLUGSDK_LIBRARY_CONVOLUTION, PLUGSDK_LIBRARY_CONVOLUTION},
  };
  for (const auto& g : good) {
    plugsdk_device_info_t info;
    Status s = infoWith(g.options, info);
    ASSERT_TRUE(s.isOk()) << (g.options ? g.options : "NULL") << ": " << s.toString();
    EXPECT_EQ(info.library_ops, g.library) << g.options;
    EXPECT_EQ(info.epilogue_ops, g.epilogue) << g.options;
  }
  const std::pair<const char*, const char*> bad[] = {
      {"librar=none", "client_create: unknown option 'librar' (known: library)"},
      {"library=none;numerics=float64", "unknown option 'numerics'"},
      {"library=gemm", "client_create: option library: unknown value 'gemm'"},
      {"library=matmul,,sdpa", "unknown value ''"},
      {"library", "client_create: option 'library' is not key=value"},
      {"=none", "unknown option ''"},
  };
  for (const auto& [options, message] : bad) {
    plugsdk_device_info_t info;
    Status s = infoWith(options, info);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << options;
    EXPECT_NE(s.message().find(message), std::string::npos) << options << ": " << s.toString();
  }
}

// A graph with every library op, compiled for the plugin's capabilities and run through
// DeviceProgram: library calls (matmul and convolution with fused epilogues) or loop kernels,
// always the reference executor's result.
const char* kLibraryGraph =
    R"(graph @lib(%x: f64[4, 6], %w: f64[5, 6], %b: f64[5], %img: f64[2, 2, 6, 6], %cw: f64[3, 2, 3, 3], %cb: f64[3], %q: f64[2, 2, 4, 8], %k: f64[2, 2, 5, 8], %v: f64[2, 2, 5, 8]) {
  %t = aten.t(%w) : f64[6, 5]
  %mm = aten.addmm(%b, %x, %t) : f64[4, 5]
  %r = aten.relu(%mm) : f64[4, 5]
  %c = aten.convolution(%img, %cw, %cb) {dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [1, 1], stride = [2, 2], transposed = false} : f64[2, 3, 3, 3]
  %cr = aten.relu(%c) : f64[2, 3, 3, 3]
  %a, %lse = aten._scaled_dot_product_flash_attention_for_cpu(%q, %k, %v, none) {is_causal = true} : f64[2, 2, 4, 8], f64[2, 2, 4]
  return %r, %cr, %a
})";

TEST_F(MinimalLibrary, ProgramsRunThroughDeviceProgramWithAndWithoutLibraryOps) {
  auto ctx = context();
  auto g = text::parseGraph(*ctx, kLibraryGraph);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  Gen gen;
  gen.edges = false;
  std::vector<HostTensor> inputs;
  for (const ir::Value* v : g->inputs()) {
    std::vector<int64_t> shape;
    for (const auto& d : v->type().shape) shape.push_back(*d.evaluate({}));
    HostTensor t = gen.tensor(v->type().dtype, exec::shapeNumel(shape));
    inputs.push_back(HostTensor(t.dtype(), shape));
    inputs.back().doubles() = t.doubles();
  }
  auto want = exec::ReferenceExecutor(ctx).run(*g, inputs);
  ASSERT_TRUE(want.isOk()) << want.status().toString();
  const struct {
    const char* options;
    int calls, epilogues;
  } cases[] = {{"", 3, 2},
               {"library=none", 0, 0},
               // sdpa as loops around two matmuls; the second's result, viewed as the 4-d
               // output, is stored by its epilogue (a member of the same points, sched/fusion.cc)
               {"library=matmul,convolution", 4, 3},
               {"library=sdpa", 1, 0}};
  for (const auto& c : cases) {
    auto device = Device::open(plugin_, 0, c.options);
    ASSERT_TRUE(device.isOk()) << device.status().toString();
    auto compiled = compile::compileGraph(*ctx, *g, optionsFor((*device)->caps(), {}));
    ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
    const sched::Program& p = compiled->program;
    int epilogues = 0;
    for (const sched::Step& s : p.steps) epilogues += s.kind == sched::Step::Kind::kCall && s.call.epilogue >= 0;
    EXPECT_EQ(p.numCalls(), c.calls) << c.options;
    EXPECT_EQ(epilogues, c.epilogues) << c.options << "\n" << sched::printProgram(p);
    auto dp = DeviceProgram::compile(**device, p);
    ASSERT_TRUE(dp.isOk()) << dp.status().toString();
    auto got = (*dp)->run(inputs);
    ASSERT_TRUE(got.isOk()) << got.status().toString();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < got->size(); ++i)
      expectSame({(*want)[i]}, {(*got)[i]}, std::string(c.options) + " output " + std::to_string(i), 1e-12);
  }
}

}  // namespace
}  // namespace plugsdk::plugin
