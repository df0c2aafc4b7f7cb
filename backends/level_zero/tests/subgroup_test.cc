// Row sums combined through sub-groups first (CompileOptions::minSubgroupSize,
// lower_group.cc): the module (OpGroupFAdd / OpGroupIAdd at Subgroup scope, the Groups
// capability, a shorter tree of barriers; max, argmax, prod and a loop mixing a sum with a
// max keep the plain tree), and the numbers on the OpenCL device (PoCL, whose sub-group is the
// whole work-group) with the sub-group of the whole group (no tree: what the plugin gives
// PoCL) and with a minimum of 8 (a tree over 32 slots, those no sub-group has holding zeros),
// strided and in chunks, against sums computed here and the plain tree.
#include <cmath>
#include <cstdint>
#include <limits>

#include "backends/level_zero/spirv/validate.h"
#include "backends/level_zero/tests/opencl_test_util.h"

namespace plugsdk::level_zero::opencl {
namespace {

using namespace testing;  // NOLINT: the helpers of opencl_test_util.h

spirv::CompileOptions withSubgroups(uint32_t minSize, bool chunks) {
  spirv::CompileOptions o;
  o.minSubgroupSize = minSize;
  o.contiguousChunks = chunks;
  return o;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

/// The disassembly of `text` compiled with `o` (validated and optimized).
std::string disassembled(const std::string& text, const spirv::CompileOptions& o) {
  std::unique_ptr<plugin::EncodedKernel> e = spirv::testing::encode(text);
  if (!e) return "";
  const sdk::KernelView view(e->get());
  sdk::StatusOr<spirv::SpirvKernel> k = spirv::compileKernel(view, "k", o);
  EXPECT_TRUE(k.isOk()) << k.status().message();
  if (!k.isOk()) return "";
  sdk::StatusOr<std::string> d = spirv::disassemble(k->words);
  return d.isOk() ? *d : "";
}

constexpr const char* kSumKernel = R"(kernel @s(%x: f32 in, %y: f32 out) grid [3] {
  loop [1000] {
    %0 = load %x[1000*i0+r0] : f32
    %1 = reduce sum %0 : f32
  }
  store %y[i0], %1
}
)";

TEST(SpirvSubgroups, SumsGoThroughSubgroupsOthersKeepTheTree) {
  const std::string tree = disassembled(kSumKernel, withSubgroups(0, false));
  const std::string whole = disassembled(kSumKernel, withSubgroups(UINT32_MAX, false));
  const std::string eight = disassembled(kSumKernel, withSubgroups(8, false));
  EXPECT_EQ(count(tree, "OpGroupFAdd"), 0u) << tree;
  EXPECT_EQ(count(tree, "OpCapability Groups"), 0u);
  EXPECT_NE(whole.find("OpGroupFAdd %float %uint_3 Reduce"), std::string::npos) << whole;
  EXPECT_NE(whole.find("OpCapability Groups"), std::string::npos);
  EXPECT_NE(whole.find("BuiltIn SubgroupId"), std::string::npos);
  // Barriers: the tree's 8 levels for 256 work-items and 2 around it; with the whole group
  // as the sub-group none of the levels; with sub-groups of 8 at least, 32 slots: 5.
  EXPECT_EQ(count(tree, "OpControlBarrier"), 10u);
  EXPECT_EQ(count(whole, "OpControlBarrier"), 2u) << whole;
  EXPECT_EQ(count(eight, "OpControlBarrier"), 7u) << eight;
  // i64 sums: OpGroupIAdd; max, argmax, prod, and a loop mixing a sum with a max: the tree.
  const std::string i64 = disassembled(R"(kernel @s(%x: i64 in, %y: i64 out) grid [3] {
  loop [1000] {
    %0 = load %x[1000*i0+r0] : i64
    %1 = reduce sum %0 : i64
  }
  store %y[i0], %1
}
)",
                                       withSubgroups(8, false));
  EXPECT_NE(i64.find("OpGroupIAdd %ulong %uint_3 Reduce"), std::string::npos) << i64;
  for (const char* op : {"max", "prod"}) {
    const std::string other = disassembled(std::string(R"(kernel @s(%x: f32 in, %y: f32 out) grid [3] {
  loop [1000] {
    %0 = load %x[1000*i0+r0] : f32
    %1 = reduce )") + op + R"( %0 : f32
  }
  store %y[i0], %1
}
)",
                                           withSubgroups(8, false));
    EXPECT_EQ(count(other, "OpGroup"), 0u) << op;
    EXPECT_EQ(count(other, "OpControlBarrier"), 10u) << op;
  }
  const std::string mixed = disassembled(R"(kernel @s(%x: f32 in, %y: f32 out, %m: f32 out) grid [3] {
  loop [1000] {
    %0 = load %x[1000*i0+r0] : f32
    %1 = reduce sum %0 : f32
    %2 = reduce max %0 : f32
  }
  store %y[i0], %1
  store %m[i0], %2
}
)",
                                         withSubgroups(8, false));
  EXPECT_EQ(count(mixed, "OpGroup"), 0u) << mixed;
}

TEST(OpenCLSubgroups, RowSumsMatchThePlainTree) {
  OPEN_OR_SKIP(d);
  auto status = createKernelStatus(d);
  ASSERT_TRUE(status.isOk());
  // f32, f16 (in f32), i32 and i64 sums, each its own loop (so each combine is all sums),
  // and a max after them (the tree), over rows of s1.
  const std::string text =
      R"(kernel @sums(%x: f32 in, %h: f16 in, %n: i32 in, %l: i64 in, %y: f32 out, %yh: f16 out, %k: i32 out, %kl: i64 out, %m: f32 out) grid [3] {
  loop [s1] {
    %0 = load %x[s1*i0+r0] : f32
    %1 = reduce sum %0 : f32
  }
  loop [s1] {
    %2 = load %h[s1*i0+r0] : f16
    %3 = reduce sum %2 : f16
  }
  loop [s1] {
    %4 = load %n[s1*i0+r0] : i32
    %5 = reduce sum %4 : i32
  }
  loop [s1] {
    %6 = load %l[s1*i0+r0] : i64
    %7 = reduce sum %6 : i64
  }
  loop [s1] {
    %8 = load %x[s1*i0+r0] : f32
    %9 = reduce max %8 : f32
  }
  store %y[i0], %1
  store %yh[i0], %3
  store %k[i0], %5
  store %kl[i0], %7
  store %m[i0], %9
}
)";
  Built plain = build(d, **status, text, withSubgroups(0, true));
  ASSERT_TRUE(plain.kernel);
  std::vector<Built> variants;
  for (uint32_t minSize : {UINT32_MAX, 8u})
    for (bool chunks : {true, false}) variants.push_back(build(d, **status, text, withSubgroups(minSize, chunks)));
  for (const Built& b : variants) ASSERT_TRUE(b.kernel);
  for (int64_t n : {1, 63, 257, 4099}) {
    SCOPED_TRACE(n);
    std::vector<float> x(3 * n);
    std::vector<uint16_t> h(3 * n);
    std::vector<int32_t> ints(3 * n);
    std::vector<int64_t> longs(3 * n);
    for (int64_t i = 0; i < 3 * n; ++i) {
      x[i] = static_cast<float>(std::sin(0.37 * i) * 10);
      h[i] = static_cast<uint16_t>(0x3C00 + (i % 7) * 0x100);  // 1, 2, 8, ... as f16 bits
      ints[i] = static_cast<int32_t>((i * 7919) % 1000) - 500;
      longs[i] = (int64_t{1} << 40) + i * 977;
    }
    SvmArray<float> ax(d, x.size(), x);
    SvmArray<uint16_t> ah(d, h.size(), h);
    SvmArray<int32_t> an(d, ints.size(), ints);
    SvmArray<int64_t> al(d, longs.size(), longs);
    auto runOne = [&](Built& b, std::vector<float>* y, std::vector<uint16_t>* yh, std::vector<int32_t>* k,
                      std::vector<int64_t>* kl, std::vector<float>* m) {
      SvmArray<float> ay(d, 3), am(d, 3);
      SvmArray<uint16_t> ayh(d, 3);
      SvmArray<int32_t> ak(d, 3);
      SvmArray<int64_t> akl(d, 3);
      sdk::Status st = run(d, **status, *b.kernel, {ax.p, ah.p, an.p, al.p, ay.p, ayh.p, ak.p, akl.p, am.p}, {n});
      ASSERT_TRUE(st.isOk()) << st.message();
      *y = ay.read();
      *yh = ayh.read();
      *k = ak.read();
      *kl = akl.read();
      *m = am.read();
    };
    std::vector<float> y0, m0;
    std::vector<uint16_t> yh0;
    std::vector<int32_t> k0;
    std::vector<int64_t> kl0;
    runOne(plain, &y0, &yh0, &k0, &kl0, &m0);
    for (size_t v = 0; v < variants.size(); ++v) {
      SCOPED_TRACE(v);
      std::vector<float> y, m;
      std::vector<uint16_t> yh;
      std::vector<int32_t> k;
      std::vector<int64_t> kl;
      runOne(variants[v], &y, &yh, &k, &kl, &m);
      for (int64_t r = 0; r < 3; ++r) {
        double sum = 0, sumAbs = 0;
        int64_t isum = 0, lsum = 0;
        float max = -std::numeric_limits<float>::infinity();
        for (int64_t i = 0; i < n; ++i) {
          sum += x[r * n + i];
          sumAbs += std::fabs(x[r * n + i]);
          isum += ints[r * n + i];
          lsum += longs[r * n + i];
          max = std::max(max, x[r * n + i]);
        }
        EXPECT_NEAR(y[r], sum, 1e-6 * sumAbs + 1e-6) << "row " << r;
        EXPECT_NEAR(y[r], y0[r], 2e-6 * sumAbs + 1e-6) << "row " << r;
        EXPECT_EQ(yh[r], yh0[r]) << "row " << r;  // small integers: exact in any order
        EXPECT_EQ(k[r], isum) << "row " << r;
        EXPECT_EQ(kl[r], lsum) << "row " << r;
        EXPECT_EQ(m[r], max) << "row " << r;
      }
    }
  }
}

}  // namespace
}  // namespace plugsdk::level_zero::opencl
