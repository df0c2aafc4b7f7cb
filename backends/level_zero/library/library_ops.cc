// The library ops' modules, compiled calls and launches (library_ops.h).
#include "backends/level_zero/library/library_ops.h"

#include <array>
#include <fstream>

#include "backends/level_zero/library/conv_spirv.h"
#include "backends/level_zero/library/matmul_spirv.h"
#include "backends/level_zero/spirv/validate.h"

namespace plugsdk::level_zero::library {

namespace {

constexpr const char* kMatmulEntry = "plugsdk_matmul_f32_tiled";
constexpr const char* kConvEntry = "plugsdk_conv_f32_implicit_gemm";

}  // namespace

sdk::StatusOr<std::shared_ptr<RuntimeModule>> LibraryOps::module(
    const std::string& entry, const std::string& what,
    sdk::StatusOr<std::vector<uint32_t>> (*write)(const std::string&), std::shared_ptr<RuntimeModule>* kept) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (*kept) return *kept;
  }
  sdk::StatusOr<std::vector<uint32_t>> words = write(entry);
  if (!words.isOk()) return words.status();
  if (!dumpDir_.empty()) {
    sdk::StatusOr<std::string> text = spirv::disassemble(*words);
    if (text.isOk()) std::ofstream(dumpDir_ + "/" + entry + ".spvasm") << *text;
  }
  sdk::StatusOr<std::shared_ptr<RuntimeModule>> built = runtime_.build(*words, what, entry, dumpDir_);
  if (!built.isOk()) return built.status();
  std::lock_guard<std::mutex> lock(mu_);
  if (!*kept) *kept = *built;
  return *kept;
}

sdk::StatusOr<std::unique_ptr<LibraryOp>> LibraryOps::compile(const sdk::LibraryCall& c) {
  if (c.op != PLUGSDK_LIBRARY_MATMUL && c.op != PLUGSDK_LIBRARY_CONVOLUTION)
    return sdk::unimplemented("the level_zero plugin implements prims.matmul and prims.convolution only (library op " +
                              std::to_string(c.op) + ")");
  const bool conv = c.op == PLUGSDK_LIBRARY_CONVOLUTION;
  const char* prim = conv ? "prims.convolution" : "prims.matmul";
  if (c.epilogue) return sdk::unimplemented(std::string("the level_zero plugin takes no epilogue on ") + prim);
  auto op = std::make_unique<LibraryOp>();
  if (conv) {
    sdk::StatusOr<ConvCall> call = ConvCall::from(c);
    if (!call.isOk()) return call.status();
    op->conv = std::make_unique<ConvCall>(std::move(*call));
  } else {
    sdk::StatusOr<MatmulCall> call = MatmulCall::from(c);
    if (!call.isOk()) return call.status();
    op->matmul = std::make_unique<MatmulCall>(std::move(*call));
  }
  const std::string entry = conv ? kConvEntry : kMatmulEntry;
  op->name = std::string(prim) + " (" + entry + ")";
  sdk::StatusOr<std::shared_ptr<RuntimeModule>> m = conv ? module(entry, op->name, implicitGemmConvModule, &conv_)
                                                         : module(entry, op->name, tiledMatmulModule, &matmul_);
  if (!m.isOk()) return m.status();
  sdk::StatusOr<std::unique_ptr<RuntimeKernel>> kernel = runtime_.createLibraryKernel(*m, entry, op->name);
  if (!kernel.isOk()) return kernel.status();
  op->kernel = std::move(*kernel);
  const std::string tiles = std::to_string(kTile) + " x " + std::to_string(kTile);
  op->log = conv ? "prims.convolution: the implicit-GEMM f32 kernel (work-groups of " + tiles +
                       ", the im2col gather in the tile loads, tiles in Workgroup memory) for " +
                       runtime_.device().description
                 : "prims.matmul: the tiled f32 kernel (work-groups of " + tiles + ", tiles in Workgroup memory) for " +
                       runtime_.device().description;
  return op;
}

sdk::Status LibraryOps::launch(const LibraryOp& op, const std::vector<void*>& args, const std::vector<int64_t>& symbols,
                               Queue q) {
  if (args.size() != 3)
    return sdk::invalidArgument(op.name + " launched with " + std::to_string(args.size()) + " buffers, not 3");
  const std::array<uint32_t, 3> local{kTile, kTile, 1};
  const sdk::Span<const int64_t> values(symbols.data(), symbols.size());
  auto one = [&](int64_t o0, int64_t o1, int64_t o2, const std::array<uint64_t, 3>& groups, const int64_t* scalars,
                 size_t n) {
    void* const p0 = static_cast<float*>(args[0]) + o0;
    void* const p1 = static_cast<float*>(args[1]) + o1;
    void* const p2 = static_cast<float*>(args[2]) + o2;
    std::vector<KernelParam> params{{true, sizeof(void*), &p0}, {true, sizeof(void*), &p1}, {true, sizeof(void*), &p2}};
    for (size_t i = 0; i < n; ++i) params.push_back({false, sizeof(int64_t), &scalars[i]});
    return runtime_.launchGroups(*op.kernel, params, local, groups, q);
  };
  if (op.conv) {
    sdk::StatusOr<std::vector<ConvLaunch>> plan = planConvLaunches(*op.conv, values);
    if (!plan.isOk()) return plan.status();
    for (const ConvLaunch& l : *plan) {
      sdk::Status st = one(l.xOffset, l.wOffset, l.yOffset, l.groups, l.scalars.data(), l.scalars.size());
      if (!st.isOk()) return st;
    }
    return sdk::Status::ok();
  }
  sdk::StatusOr<std::vector<MatmulLaunch>> plan = planLaunches(*op.matmul, values);
  if (!plan.isOk()) return plan.status();
  for (const MatmulLaunch& l : *plan) {
    sdk::Status st = one(l.aOffset, l.bOffset, l.cOffset, l.groups, l.scalars.data(), l.scalars.size());
    if (!st.isOk()) return st;
  }
  return sdk::Status::ok();
}

}  // namespace plugsdk::level_zero::library
