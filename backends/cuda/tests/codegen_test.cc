// PTX generation without a GPU: kernels of every shape the scheduler emits lower to PTX
// whose entry takes the expected parameters and whose loads and stores are global; ptxas
// (when a toolkit is visible) accepts it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "backends/cuda/codegen/nvptx.h"
#include "core/kernel/kernel_text.h"
#include "core/plugin/kernel_encoding.h"

namespace plugsdk::cuda {
namespace {

sdk::StatusOr<PtxKernel> ptxOf(const std::string& text, const PtxOptions& o = {}) {
  StatusOr<kernel::Kernel> k = kernel::parseKernel(text);
  EXPECT_TRUE(k.isOk()) << k.status().message();
  StatusOr<std::unique_ptr<plugin::EncodedKernel>> e = plugin::encodeKernel(*k);
  EXPECT_TRUE(e.isOk()) << e.status().message();
  const sdk::KernelView view((*e)->get());
  sdk::StatusOr<PtxKernel> p = compileToPtx(view, GpuArch{9, 0}, "plugsdk_test", o);
  // PLUGSDK_CUDA_TEST_DUMP=DIR keeps each PTX (for ptxas outside the toolbox).
  if (const char* dir = std::getenv("PLUGSDK_CUDA_TEST_DUMP"); dir && p.isOk())
    std::ofstream(std::string(dir) + "/" + std::string(view.name()) + ".ptx") << p->ptx;
  return p;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

const char* kPointwise = R"(kernel @sin2cos2(%x: f32 in, %y: f32 out) grid [s0] {
  %0 = load %x[i0] : f32
  %1 = sin %0 : f32
  %2 = cos %0 : f32
  %3 = mul %1, %1 : f32
  %4 = mul %2, %2 : f32
  %5 = add %3, %4 : f32
  store %y[i0], %5
}
)";

// sin and cos call libdevice for their rare huge arguments: with it linked there is no call
// left; without it the kernel is UNIMPLEMENTED, naming the function.
TEST(CudaCodegen, PointwiseKernel) {
  const std::string libdevice = findLibdevice();
  sdk::StatusOr<PtxKernel> p = ptxOf(kPointwise, PtxOptions{3, libdevice, false});
  if (libdevice.empty()) {
    ASSERT_FALSE(p.isOk());
    EXPECT_EQ(p.status().code(), sdk::Code::kUnimplemented);
    EXPECT_NE(p.status().message().find("__nv_"), std::string::npos) << p.status().message();
    GTEST_SKIP() << "no libdevice.10.bc here (set PLUGSDK_CUDA_LIBDEVICE): its absence was checked instead";
  }
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_NE(p->ptx.find(".target sm_90"), std::string::npos) << p->ptx;
  EXPECT_NE(p->ptx.find(".visible .entry plugsdk_test("), std::string::npos) << p->ptx;
  // Two pointers, one symbol, one grid extent, the status word.
  EXPECT_EQ(count(p->ptx, ".param .u64 plugsdk_test_param_"), 5u) << p->ptx;
  EXPECT_GE(count(p->ptx, "ld.global"), 1u) << p->ptx;
  EXPECT_GE(count(p->ptx, "st.global"), 1u) << p->ptx;
  EXPECT_EQ(p->ptx.find("call"), std::string::npos) << "math is inlined:\n" << p->ptx;
}

}  // namespace
}  // namespace plugsdk::cuda
