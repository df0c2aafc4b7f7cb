// The grid's size and the parameter list of a lowered kernel (see launch_shape.h).
#include "backends/level_zero/common/launch_shape.h"

#include "backends/llvm_lowering/frame.h"

namespace plugsdk::level_zero {

LaunchShape LaunchShape::of(const sdk::KernelView& k) {
  LaunchShape s;
  s.name = std::string(k.name());
  s.pool.assign(k.indexPool().begin(), k.indexPool().end());
  for (size_t d = 0; d < k.numGrid(); ++d) s.grid.push_back(k.grid(d));
  s.numArgs = k.numArgs();
  s.numSymbols = k.numSymbols();
  return s;
}

sdk::StatusOr<uint64_t> LaunchShape::points(const std::vector<int64_t>& symbols) const {
  const sdk::Span<const plugsdk_index_insn_t> p(pool.data(), pool.size());
  sdk::StatusOr<std::vector<int64_t>> extents = lowering::evalGrid(p, grid, symbols, name);
  if (!extents.isOk()) return extents.status();
  uint64_t n = 1;
  for (int64_t g : *extents) n *= static_cast<uint64_t>(g);
  return n;
}

std::vector<KernelParam> kernelParams(const std::vector<void*>& args, void* const& status,
                                      const std::vector<int64_t>& symbols) {
  std::vector<KernelParam> params;
  params.reserve(args.size() + 1 + symbols.size());
  for (void* const& a : args) params.push_back({true, sizeof(void*), &a});
  params.push_back({true, sizeof(void*), &status});
  for (const int64_t& s : symbols) params.push_back({false, sizeof(int64_t), &s});
  return params;
}

}  // namespace plugsdk::level_zero
