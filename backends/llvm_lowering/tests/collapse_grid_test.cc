// Target::collapseGrid on the host: kernels lowered with and without it, JIT-compiled for
// this CPU, called as the CUDA wrapper calls them (the outer points of the dims before
// LoweredKernel::innerGridDims, the inner range over the product of the rest), must write
// the same bits; which dims join is checked too. The CPU backend leaves collapseGrid off.
#include <gtest/gtest.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/Support/TargetSelect.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends/llvm_lowering/frame.h"
#include "backends/llvm_lowering/lowering.h"
#include "core/kernel/kernel_text.h"
#include "core/plugin/kernel_encoding.h"

namespace plugsdk::lowering {
namespace {

struct Run {
  size_t innerGridDims = 0;
  std::vector<std::vector<float>> out;  ///< every argument after the run
};

/// Lowers `text` (f32 arguments of `sizes` elements, filled with distinct values; no symbols),
/// runs it over `grid` and returns the arguments afterwards.
Run lowerAndRun(const std::string& text, bool collapse, const std::vector<int64_t>& grid,
                const std::vector<size_t>& sizes) {
  Run r;
  StatusOr<kernel::Kernel> k = kernel::parseKernel(text);
  EXPECT_TRUE(k.isOk()) << k.status().message();
  StatusOr<std::unique_ptr<plugin::EncodedKernel>> e = plugin::encodeKernel(*k);
  EXPECT_TRUE(e.isOk()) << e.status().message();
  const sdk::KernelView view((*e)->get());
  auto ctx = std::make_unique<llvm::LLVMContext>();
  Target t;
  t.f32Lanes = 4;
  t.collapseGrid = collapse;
  sdk::StatusOr<LoweredKernel> lowered = lowerKernel(*ctx, view, t, "entry");
  EXPECT_TRUE(lowered.isOk()) << lowered.status().message();
  if (!lowered.isOk()) return r;
  r.innerGridDims = lowered->innerGridDims;
  auto jit = llvm::orc::LLJITBuilder().create();
  EXPECT_TRUE(static_cast<bool>(jit));
  if (!jit) return r;
  lowered->module->setDataLayout((*jit)->getDataLayout());
  EXPECT_FALSE(
      static_cast<bool>((*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(lowered->module), std::move(ctx)))));
  auto sym = (*jit)->lookup("entry");
  EXPECT_TRUE(static_cast<bool>(sym));
  if (!sym) return r;
  auto entry = sym->toPtr<KernelEntry>();
  for (size_t a = 0; a < sizes.size(); ++a) {
    r.out.emplace_back(sizes[a]);
    for (size_t i = 0; i < sizes[a]; ++i) r.out[a][i] = static_cast<float>(a * 1000 + i) * 0.25f - 7.0f;
  }
  std::vector<void*> args;
  for (auto& v : r.out) args.push_back(v.data());
  int32_t status = 0;
  const CallFrame frame{args.data(), nullptr, grid.data(), &status};
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < grid.size(); ++d) (d + r.innerGridDims < grid.size() ? outer : inner) *= grid[d];
  entry(&frame, 0, outer, 0, inner);
  EXPECT_EQ(status, 0);
  return r;
}

void expectSame(const std::string& text, const std::vector<int64_t>& grid, const std::vector<size_t>& sizes,
                size_t innerGridDims) {
  const Run off = lowerAndRun(text, false, grid, sizes);
  const Run on = lowerAndRun(text, true, grid, sizes);
  EXPECT_EQ(off.innerGridDims, 1u);
  EXPECT_EQ(on.innerGridDims, innerGridDims) << text;
  ASSERT_EQ(off.out.size(), on.out.size());
  for (size_t a = 0; a < off.out.size(); ++a)
    EXPECT_EQ(std::memcmp(off.out[a].data(), on.out[a].data(), off.out[a].size() * sizeof(float)), 0)
        << "argument " << a << " of " << text;
}

class CollapseGrid : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  }
};

// All three dims nest: one inner range of 120 points (a multiple of the 4 lanes).
TEST_F(CollapseGrid, NestedDimsAreOneRange) {
  expectSame(R"(kernel @k(%x: f32 in, %y: f32 out) grid [3, 5, 8] {
  %0 = load %x[40*i0+8*i1+i2] : f32
  %1 = index 40*i0+8*i1+i2 : i64
  %2 = cast %1 : f32
  %3 = rand 7, 40*i0+8*i1+i2 : f32
  %4 = mul %0, %2 : f32
  %5 = add %4, %3 : f32
  store %y[40*i0+8*i1+i2], %5
}
)",
             {3, 5, 8}, {120, 120}, 3);
}

// A bias read at i2 keeps the last dim apart; i0 and i1 still nest (the outer points are
// one index split once). Its extent 6 is no multiple of the lanes either.
TEST_F(CollapseGrid, BroadcastKeepsTheLastDimApart) {
  expectSame(R"(kernel @k(%x: f32 in, %b: f32 in, %y: f32 out) grid [3, 5, 6] {
  %0 = load %x[30*i0+6*i1+i2] : f32
  %1 = load %b[i2] : f32
  %2 = add %0, %1 : f32
  store %y[30*i0+6*i1+i2], %2
}
)",
             {3, 5, 6}, {90, 6, 90}, 1);
}

// What blocks a join: an index of one dim alone, a transposed access, a modulo.
TEST_F(CollapseGrid, IndicesThatDoNotNestKeepTheDims) {
  expectSame(R"(kernel @k(%x: f32 in, %y: f32 out) grid [4, 8] {
  %0 = load %x[8*i0+i1] : f32
  %1 = index i1 : i64
  %2 = cast %1 : f32
  %3 = add %0, %2 : f32
  store %y[8*i0+i1], %3
}
)",
             {4, 8}, {32, 32}, 1);
  expectSame(R"(kernel @k(%x: f32 in, %y: f32 out) grid [4, 8] {
  %0 = load %x[i0+4*i1] : f32
  store %y[8*i0+i1], %0
}
)",
             {4, 8}, {32, 32}, 1);
  expectSame(R"(kernel @k(%x: f32 in, %y: f32 out) grid [4, 8] {
  %0 = load %x[(8*i0+i1) % 5] : f32
  store %y[8*i0+i1], %0
}
)",
             {4, 8}, {32, 32}, 1);
}

// Loop mode (one lane a point along the grid): the grid dims of a row reduction nest too.
TEST_F(CollapseGrid, RowReductionGridNests) {
  expectSame(R"(kernel @k(%x: f32 in, %y: f32 out) grid [2, 3] {
  loop [16] {
    %0 = load %x[48*i0+16*i1+r0] : f32
    %1 = reduce max %0 : f32
  }
  store %y[3*i0+i1], %1
}
)",
             {2, 3}, {96, 6}, 2);
}

}  // namespace
}  // namespace plugsdk::lowering
