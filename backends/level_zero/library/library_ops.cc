// The library ops' modules, compiled calls and launches (library_ops.h).
#include "backends/level_zero/library/library_ops.h"

#include <array>
#include <fstream>

#include "backends/level_zero/library/conv_spirv.h"
#include "backends/level_zero/library/matmul_spirv.h"
#include "backends/level_zero/library/sdpa_spirv.h"
#include "backends/level_zero/spirv/validate.h"

namespace plugsdk::level_zero::library {

namespace {

constexpr const char* kMatmulEntry = "plugsdk_matmul_f32_tiled";
constexpr const char* kConvEntry = "plugsdk_conv_f32_implicit_gemm";
constexpr const char* kSdpaEntry = "plugsdk_sdpa_f32_flash";
constexpr const char* kSdpaBoolEntry = "plugsdk_sdpa_f32_flash_bool_mask";
constexpr const char* kSdpaFloatEntry = "plugsdk_sdpa_f32_flash_float_mask";

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
  if (c.op != PLUGSDK_LIBRARY_MATMUL && c.op != PLUGSDK_LIBRARY_CONVOLUTION && c.op != PLUGSDK_LIBRARY_SDPA)
    return sdk::unimplemented(
        "the level_zero plugin implements prims.matmul, prims.convolution and prims.sdpa only (library op " +
        std::to_string(c.op) + ")");
  const char* prim = c.op == PLUGSDK_LIBRARY_CONVOLUTION ? "prims.convolution"
                     : c.op == PLUGSDK_LIBRARY_SDPA      ? "prims.sdpa"
                                                         : "prims.matmul";
  if (c.epilogue) return sdk::unimplemented(std::string("the level_zero plugin takes no epilogue on ") + prim);
  auto op = std::make_unique<LibraryOp>();
  std::string entry;
  using Writer = sdk::StatusOr<std::vector<uint32_t>> (*)(const std::string&);
  Writer write = nullptr;
  std::shared_ptr<RuntimeModule>* kept = nullptr;
  const std::string tiles = std::to_string(kTile) + " x " + std::to_string(kTile);
  if (c.op == PLUGSDK_LIBRARY_CONVOLUTION) {
    sdk::StatusOr<ConvCall> call = ConvCall::from(c);
    if (!call.isOk()) return call.status();
    op->conv = std::make_unique<ConvCall>(std::move(*call));
    entry = kConvEntry, write = implicitGemmConvModule, kept = &conv_;
    op->log = "prims.convolution: the implicit-GEMM f32 kernel (work-groups of " + tiles +
              ", the im2col gather in the tile loads, tiles in Workgroup memory)";
  } else if (c.op == PLUGSDK_LIBRARY_SDPA) {
    sdk::StatusOr<SdpaCall> call = SdpaCall::from(c);
    if (!call.isOk()) return call.status();
    op->sdpa = std::make_unique<SdpaCall>(std::move(*call));
    const SdpaMask mask = op->sdpa->maskKind;
    static constexpr Writer kWriters[3] = {
        [](const std::string& e) { return flashAttentionModule(e, SdpaMask::kNone); },
        [](const std::string& e) { return flashAttentionModule(e, SdpaMask::kBool); },
        [](const std::string& e) { return flashAttentionModule(e, SdpaMask::kFloat); }};
    static constexpr const char* kEntries[3] = {kSdpaEntry, kSdpaBoolEntry, kSdpaFloatEntry};
    entry = kEntries[static_cast<int>(mask)], write = kWriters[static_cast<int>(mask)];
    kept = &sdpa_[static_cast<int>(mask)];
    op->log = std::string("prims.sdpa: the flash-attention f32 kernel (work-groups of ") + std::to_string(kSdpaKeys) +
              " x " + std::to_string(kSdpaRows) + ", K and V tiles in Workgroup memory, an online softmax" +
              (mask == SdpaMask::kBool    ? ", a bool mask"
               : mask == SdpaMask::kFloat ? ", a float mask"
                                          : "") +
              ")";
  } else {
    sdk::StatusOr<MatmulCall> call = MatmulCall::from(c);
    if (!call.isOk()) return call.status();
    op->matmul = std::make_unique<MatmulCall>(std::move(*call));
    entry = kMatmulEntry, write = tiledMatmulModule, kept = &matmul_;
    op->log = "prims.matmul: the tiled f32 kernel (work-groups of " + tiles + ", tiles in Workgroup memory)";
  }
  op->log += " for " + runtime_.device().description;
  op->name = std::string(prim) + " (" + entry + ")";
  sdk::StatusOr<std::shared_ptr<RuntimeModule>> m = module(entry, op->name, write, kept);
  if (!m.isOk()) return m.status();
  sdk::StatusOr<std::unique_ptr<RuntimeKernel>> kernel = runtime_.createLibraryKernel(*m, entry, op->name);
  if (!kernel.isOk()) return kernel.status();
  op->kernel = std::move(*kernel);
  return op;
}

sdk::Status LibraryOps::launch(const LibraryOp& op, const std::vector<void*>& args, const std::vector<int64_t>& symbols,
                               Queue q) {
  const size_t want = op.sdpa ? kSdpaOps : 3;
  if (args.size() != want)
    return sdk::invalidArgument(op.name + " launched with " + std::to_string(args.size()) + " buffers, not " +
                                std::to_string(want));
  const sdk::Span<const int64_t> values(symbols.data(), symbols.size());
  // One launch: the buffers (NULL: absent, passed as no parameter) at their element offsets
  // (f32 elements, or bytes for a bool mask), then the i64 scalars.
  auto one = [&](const int64_t* offsets, const std::array<uint32_t, 3>& local, const std::array<uint64_t, 3>& groups,
                 const int64_t* scalars, size_t n) {
    std::vector<void*> pointers;
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i]) continue;
      const bool bytes = op.sdpa && i == kSdpaOpMask && op.sdpa->maskKind == SdpaMask::kBool;
      pointers.push_back(bytes ? static_cast<void*>(static_cast<uint8_t*>(args[i]) + offsets[i])
                               : static_cast<void*>(static_cast<float*>(args[i]) + offsets[i]));
    }
    std::vector<KernelParam> params;
    for (void* const& p : pointers) params.push_back({true, sizeof(void*), &p});
    for (size_t i = 0; i < n; ++i) params.push_back({false, sizeof(int64_t), &scalars[i]});
    return runtime_.launchGroups(*op.kernel, params, local, groups, q);
  };
  if (op.sdpa) {
    if ((args[kSdpaOpMask] != nullptr) != (op.sdpa->maskKind != SdpaMask::kNone))
      return sdk::invalidArgument(op.name + ": the attn_mask buffer does not match the compiled call");
    sdk::StatusOr<std::vector<SdpaLaunch>> plan = planSdpaLaunches(*op.sdpa, values);
    if (!plan.isOk()) return plan.status();
    for (const SdpaLaunch& l : *plan) {
      sdk::Status st = one(l.offsets.data(), {kSdpaKeys, kSdpaRows, 1}, l.groups, l.scalars.data(), l.scalars.size());
      if (!st.isOk()) return st;
    }
    return sdk::Status::ok();
  }
  const std::array<uint32_t, 3> local{kTile, kTile, 1};
  if (op.conv) {
    sdk::StatusOr<std::vector<ConvLaunch>> plan = planConvLaunches(*op.conv, values);
    if (!plan.isOk()) return plan.status();
    for (const ConvLaunch& l : *plan) {
      const int64_t offsets[3] = {l.xOffset, l.wOffset, l.yOffset};
      sdk::Status st = one(offsets, local, l.groups, l.scalars.data(), l.scalars.size());
      if (!st.isOk()) return st;
    }
    return sdk::Status::ok();
  }
  sdk::StatusOr<std::vector<MatmulLaunch>> plan = planLaunches(*op.matmul, values);
  if (!plan.isOk()) return plan.status();
  for (const MatmulLaunch& l : *plan) {
    const int64_t offsets[3] = {l.aOffset, l.bOffset, l.cOffset};
    sdk::Status st = one(offsets, local, l.groups, l.scalars.data(), l.scalars.size());
    if (!st.isOk()) return st;
  }
  return sdk::Status::ok();
}

}  // namespace plugsdk::level_zero::library
