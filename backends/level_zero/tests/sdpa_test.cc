// Flash attention (library/sdpa_*): its module (validated, five Workgroup tiles, four
// barriers, a fixed 16 x 16 work-group, Int8 for a bool mask), the call's attributes and its
// launch plan, and its numbers on the OpenCL device (PoCL in the toolbox) against attention
// computed here in double over the same strided views, every element of the result and of
// the logsumexp checked, and what lies between them left untouched: L and S off the tiles,
// S = 1, L = 1, S = 0, head dims 1 to 128 with Ev != E, causal with L < S and L > S,
// permuted, broadcast, padded and offset batch views, a looped outer batch dim, bool and
// float masks (fully masked rows: zeros and lse 0; broadcast masks), large scores (the
// online softmax's rescaling) and a NaN. The device tests skip, saying why, without an
// OpenCL device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backends/level_zero/library/sdpa_call.h"
#include "backends/level_zero/library/sdpa_spirv.h"
#include "backends/level_zero/library/tiled_kernel.h"  // kMaxGroups
#include "backends/level_zero/spirv/validate.h"
#include "backends/level_zero/tests/opencl_test_util.h"

namespace plugsdk::level_zero::library {
namespace {

/// A strided view: sizes, strides and offset in elements.
struct View {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  int64_t span() const {
    int64_t last = offset;
    for (size_t d = 0; d < sizes.size(); ++d) last += (sizes[d] - 1) * strides[d];
    return last + 1;
  }
};

View rowMajor(const std::vector<int64_t>& sizes, int64_t offset = 0) {
  View v{sizes, std::vector<int64_t>(sizes.size(), 1), offset};
  for (size_t d = sizes.size() - 1; d-- > 0;) v.strides[d] = v.strides[d + 1] * sizes[d + 1];
  return v;
}

/// An attention call's operands and attributes.
struct Case {
  View q, k, v, out, lse;
  std::optional<View> mask;
  bool boolMask = false, causal = false;
  std::optional<double> scale;
};

/// The usual contiguous case: q [batch..., L, E], k [batch..., S, E], v [batch..., S, Ev].
Case contiguous(const std::vector<int64_t>& batch, int64_t L, int64_t S, int64_t E, int64_t Ev) {
  auto with = [&](int64_t a, int64_t b) {
    std::vector<int64_t> s = batch;
    s.push_back(a);
    if (b >= 0) s.push_back(b);
    return rowMajor(s);
  };
  return Case{with(L, E), with(S, E), with(S, Ev), with(L, Ev), with(L, -1), std::nullopt, false, false, {}};
}

/// An SdpaCall whose expressions are constants.
SdpaCall callOf(const Case& c) {
  SdpaCall s;
  auto expr = [&](int64_t v) {
    plugsdk_index_expr_t e{static_cast<uint32_t>(s.pool.size()), 1};
    s.pool.push_back({PLUGSDK_INDEX_CONST, 0, v});
    return e;
  };
  auto desc = [&](const View& v, uint32_t dtype) {
    OperandDesc d;
    d.dtype = dtype;
    for (size_t i = 0; i < v.sizes.size(); ++i) {
      d.sizes.push_back(expr(v.sizes[i]));
      d.strides.push_back(expr(v.strides[i]));
    }
    d.offset = expr(v.offset);
    return d;
  };
  s.q = desc(c.q, PLUGSDK_DTYPE_F32);
  s.k = desc(c.k, PLUGSDK_DTYPE_F32);
  s.v = desc(c.v, PLUGSDK_DTYPE_F32);
  s.out = desc(c.out, PLUGSDK_DTYPE_F32);
  s.lse = desc(c.lse, PLUGSDK_DTYPE_F32);
  if (c.mask) {
    s.mask = desc(*c.mask, c.boolMask ? PLUGSDK_DTYPE_BOOL : PLUGSDK_DTYPE_F32);
    s.maskKind = c.boolMask ? SdpaMask::kBool : SdpaMask::kFloat;
  }
  s.causal = c.causal;
  s.scale = c.scale;
  return s;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(FlashAttention, TheModuleHasFiveTilesAndFourBarriers) {
  for (SdpaMask mask : {SdpaMask::kNone, SdpaMask::kBool, SdpaMask::kFloat}) {
    sdk::StatusOr<std::vector<uint32_t>> words = flashAttentionModule("fa", mask);
    ASSERT_TRUE(words.isOk()) << words.status().message();
    EXPECT_EQ(spirv::validatorMessage(*words, spirv::TargetEnv::kOpenCL1_2), "");
    sdk::StatusOr<std::string> text = spirv::disassemble(*words);
    ASSERT_TRUE(text.isOk());
    EXPECT_NE(text->find("OpExecutionMode %fa LocalSize 16 16 1"), std::string::npos) << *text;
    EXPECT_NE(text->find("OpExecutionMode %fa ContractionOff"), std::string::npos) << *text;
    EXPECT_EQ(count(*text, "OpControlBarrier"), 4u) << *text;
    EXPECT_EQ(count(*text, "OpVariable %_ptr_Workgroup"), 5u) << *text;
    EXPECT_EQ(count(*text, "OpReturn"), 1u) << *text;  // no early return before the barriers
    EXPECT_EQ(count(*text, "OpUDiv") + count(*text, "OpSDiv"), 0u) << *text;
    EXPECT_EQ(count(*text, "OpCapability Int8"), mask == SdpaMask::kBool ? 1u : 0u) << *text;
    EXPECT_EQ(count(*text, "OpFunctionParameter"), (mask == SdpaMask::kNone ? 5u : 6u) + kSdpaScalars) << *text;
  }
}

TEST(FlashAttention, AttributesFromTheCall) {
  Case cs = contiguous({2}, 9, 17, 8, 8);
  cs.mask = rowMajor({2, 9, 17});
  cs.boolMask = true;
  SdpaCall ref = callOf(cs);
  auto desc = [&](const OperandDesc& d) {
    return plugsdk_tensor_desc_t{d.dtype, static_cast<uint32_t>(d.sizes.size()), d.sizes.data(), d.strides.data(),
                                 d.offset};
  };
  std::vector<plugsdk_tensor_desc_t> in{desc(ref.q), desc(ref.k), desc(ref.v), desc(ref.mask)},
      out{desc(ref.out), desc(ref.lse)};
  sdk::LibraryCall lc{};
  lc.op = PLUGSDK_LIBRARY_SDPA;
  lc.inputs = {in.data(), in.size()};
  lc.outputs = {out.data(), out.size()};
  lc.indexPool = {ref.pool.data(), ref.pool.size()};
  auto from = [&](const char* attrs) {
    lc.attributes = attrs;
    return SdpaCall::from(lc);
  };
  sdk::StatusOr<SdpaCall> c = from("dropout_p = 0.0, is_causal = false, scale = 0.25, seed = 0");
  ASSERT_TRUE(c.isOk()) << c.status().message();
  EXPECT_EQ(c->maskKind, SdpaMask::kBool);
  EXPECT_FALSE(c->causal);
  ASSERT_TRUE(c->scale.has_value());
  EXPECT_EQ(*c->scale, 0.25);
  in[3].dtype = PLUGSDK_DTYPE_F32;
  sdk::StatusOr<SdpaCall> f = from("dropout_p = 0.0, is_causal = false, scale = none, seed = 0");
  ASSERT_TRUE(f.isOk()) << f.status().message();
  EXPECT_EQ(f->maskKind, SdpaMask::kFloat);
  EXPECT_FALSE(f->scale.has_value());
  in[3] = plugsdk_tensor_desc_t{UINT32_MAX, 0, nullptr, nullptr, {}};  // absent
  sdk::StatusOr<SdpaCall> causal = from("dropout_p = 0.0, is_causal = true, scale = none, seed = 0");
  ASSERT_TRUE(causal.isOk()) << causal.status().message();
  EXPECT_EQ(causal->maskKind, SdpaMask::kNone);
  EXPECT_TRUE(causal->causal);
  sdk::StatusOr<SdpaCall> dropout = from("dropout_p = 0.25, is_causal = false, scale = none, seed = 3");
  ASSERT_FALSE(dropout.isOk());
  EXPECT_EQ(dropout.status().code(), sdk::Code::kUnimplemented);
  EXPECT_NE(dropout.status().message().find("dropout"), std::string::npos) << dropout.status().message();
  in[0].dtype = PLUGSDK_DTYPE_F16;
  sdk::StatusOr<SdpaCall> f16 = from("dropout_p = 0.0, is_causal = false, scale = none, seed = 0");
  ASSERT_FALSE(f16.isOk());
  EXPECT_NE(f16.status().message().find("f32 only"), std::string::npos) << f16.status().message();
}

TEST(FlashAttention, PlanMapsTwoBatchDimsToGroupsAndLoopsTheRest) {
  // [2, 3, 5, 40, 8]: dim 2 is y, dim 1 z, dim 0 looped (2 launches); 3 blocks of 16 rows.
  Case cs = contiguous({2, 3, 5}, 40, 33, 8, 4);
  sdk::StatusOr<std::vector<SdpaLaunch>> p = planSdpaLaunches(callOf(cs), {});
  ASSERT_TRUE(p.isOk()) << p.status().message();
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].groups, (std::array<uint64_t, 3>{3, 5, 3}));
  EXPECT_EQ((*p)[1].offsets[kSdpaOpQ], 3 * 5 * 40 * 8);
  EXPECT_EQ((*p)[1].offsets[kSdpaOpV], 3 * 5 * 33 * 4);
  EXPECT_EQ((*p)[1].offsets[kSdpaOpLse], 3 * 5 * 40);
  const auto& s = (*p)[0].scalars;
  EXPECT_EQ(s[kSdpaL], 40);
  EXPECT_EQ(s[kSdpaS], 33);
  EXPECT_EQ(s[kSdpaE], 8);
  EXPECT_EQ(s[kSdpaEv], 4);
  const float scale = 1 / std::sqrt(8.0f);
  uint32_t bits = 0;
  std::memcpy(&bits, &scale, 4);
  EXPECT_EQ(s[kSdpaScaleBits], bits);
  // q's strides: row, head dim, y (dim 2), z (dim 1); lse's: row, y, z.
  EXPECT_EQ(std::vector<int64_t>(s.begin() + kSdpaQ, s.begin() + kSdpaQ + 4), (std::vector<int64_t>{8, 1, 320, 1600}));
  EXPECT_EQ(std::vector<int64_t>(s.begin() + kSdpaLse, s.begin() + kSdpaLse + 3), (std::vector<int64_t>{1, 40, 200}));
  // Query blocks past kMaxGroups split the launch; the second starts at block kMaxGroups.
  sdk::StatusOr<std::vector<SdpaLaunch>> big =
      planSdpaLaunches(callOf(contiguous({}, int64_t{kSdpaRows} * static_cast<int64_t>(kMaxGroups + 2), 1, 1, 1)), {});
  ASSERT_TRUE(big.isOk()) << big.status().message();
  ASSERT_EQ(big->size(), 2u);
  EXPECT_EQ((*big)[1].groups, (std::array<uint64_t, 3>{2, 1, 1}));
  EXPECT_EQ((*big)[1].scalars[kSdpaBlockBase], static_cast<int64_t>(kMaxGroups));
  // A batch dim past kMaxGroups is looped, the next one mapped.
  sdk::StatusOr<std::vector<SdpaLaunch>> wide =
      planSdpaLaunches(callOf(contiguous({3, static_cast<int64_t>(kMaxGroups) + 1}, 1, 1, 1, 1)), {});
  ASSERT_TRUE(wide.isOk()) << wide.status().message();
  EXPECT_EQ(wide->size(), kMaxGroups + 1);
  EXPECT_EQ((*wide)[0].groups, (std::array<uint64_t, 3>{1, 3, 1}));
  EXPECT_EQ((*wide)[1].offsets[kSdpaOpQ], 1);
  // Nothing to compute: no launch. Head dims past the tiles, sizes that disagree: errors.
  EXPECT_TRUE(planSdpaLaunches(callOf(contiguous({2}, 0, 5, 8, 8)), {})->empty());
  sdk::StatusOr<std::vector<SdpaLaunch>> wideHead = planSdpaLaunches(callOf(contiguous({2}, 4, 5, 8, 129)), {});
  ASSERT_FALSE(wideHead.isOk());
  EXPECT_EQ(wideHead.status().code(), sdk::Code::kUnimplemented);
  Case bad = contiguous({2}, 4, 5, 8, 8);
  bad.k = rowMajor({2, 6, 8});
  sdk::StatusOr<std::vector<SdpaLaunch>> disagree = planSdpaLaunches(callOf(bad), {});
  ASSERT_FALSE(disagree.isOk());
  EXPECT_NE(disagree.status().message().find("sizes disagree"), std::string::npos) << disagree.status().message();
}

using namespace opencl;           // NOLINT: Device, cl_command_queue, CL_SUCCESS for the macro and the runs
using namespace opencl::testing;  // NOLINT: OPEN_OR_SKIP, SvmArray

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Inputs: uniform in [-1, 1] (with `integers`, q and k integers in [-4, 4], so that the
/// scores are exact and large), a bool mask about 1 in 3 false with the listed rows (of the
/// flattened [batch, L]) all false, a float mask normal with those rows all -inf; k's element
/// `nanAt` NaN.
struct Inputs {
  bool integers = false;
  std::vector<int64_t> maskedRows;
  int64_t nanAt = -1;
};

/// Runs the kernel on `cs` and checks every element of the result and the logsumexp against
/// attention in double (the core's reference semantics), and the sentinel elsewhere.
void runAndCheck(opencl::Device& dev, const Case& cs, const Inputs& in = {}) {
  const SdpaMask kind = !cs.mask ? SdpaMask::kNone : cs.boolMask ? SdpaMask::kBool : SdpaMask::kFloat;
  sdk::StatusOr<std::vector<uint32_t>> words = flashAttentionModule("plugsdk_sdpa_test", kind);
  ASSERT_TRUE(words.isOk()) << words.status().message();
  sdk::StatusOr<std::shared_ptr<opencl::Program>> prog = opencl::buildProgram(dev, *words, "sdpa", "sdpa", "");
  ASSERT_TRUE(prog.isOk()) << prog.status().message();
  LaunchShape shape;
  shape.name = "sdpa";
  sdk::StatusOr<std::unique_ptr<opencl::Kernel>> kernel =
      opencl::createKernel(dev.api(), *prog, "plugsdk_sdpa_test", shape);
  ASSERT_TRUE(kernel.isOk()) << kernel.status().message();

  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  std::normal_distribution<float> normal;
  auto filled = [&](const View& v, bool integers) {
    std::vector<float> h(static_cast<size_t>(std::max<int64_t>(v.span(), 1)));
    for (float& x : h) x = integers ? std::round(4 * u(rng)) : u(rng);
    return h;
  };
  std::vector<float> hq = filled(cs.q, in.integers), hk = filled(cs.k, in.integers), hv = filled(cs.v, false);
  if (in.nanAt >= 0) hk[static_cast<size_t>(in.nanAt)] = std::numeric_limits<float>::quiet_NaN();
  const size_t r = cs.q.sizes.size(), nb = r - 2;
  const int64_t L = cs.q.sizes[r - 2], E = cs.q.sizes[r - 1], S = cs.k.sizes[r - 2], Ev = cs.v.sizes[r - 1];
  int64_t batch = 1;
  for (size_t d = 0; d < nb; ++d) batch *= cs.q.sizes[d];
  std::vector<float> hmf;
  std::vector<uint8_t> hmb;
  if (cs.mask) {
    const size_t n = static_cast<size_t>(std::max<int64_t>(cs.mask->span(), 1));
    if (cs.boolMask) {
      hmb.resize(n);
      for (uint8_t& b : hmb) b = u(rng) > -0.33f ? 1 : 0;
    } else {
      hmf.resize(n);
      for (float& x : hmf) x = normal(rng);
    }
  }
  // Offsets of batch element z (flattened) in view `v` of the same batch dims.
  auto batchAt = [&](const View& v, int64_t z) {
    int64_t o = v.offset;
    for (size_t d = nb; d-- > 0;) {
      o += (z % cs.q.sizes[d]) * v.strides[d];
      z /= cs.q.sizes[d];
    }
    return o;
  };
  if (cs.mask)
    for (int64_t row : in.maskedRows)  // whole rows masked out (possibly through broadcast strides)
      for (int64_t j = 0; j < S; ++j) {
        const size_t at = static_cast<size_t>(batchAt(*cs.mask, row / L) + (row % L) * cs.mask->strides[nb] +
                                              j * cs.mask->strides[nb + 1]);
        if (cs.boolMask)
          hmb[at] = 0;
        else
          hmf[at] = -std::numeric_limits<float>::infinity();
      }

  const float sentinel = -12345.0f;
  std::vector<float> ho(static_cast<size_t>(cs.out.span()) + 3, sentinel),
      hl(static_cast<size_t>(cs.lse.span()) + 3, sentinel);
  SvmArray<float> dq(dev, hq.size(), hq), dk(dev, hk.size(), hk), dv(dev, hv.size(), hv), dout(dev, ho.size(), ho),
      dlse(dev, hl.size(), hl);
  SvmArray<float> dmf(dev, std::max<size_t>(hmf.size(), 1), hmf);
  SvmArray<uint8_t> dmb(dev, std::max<size_t>(hmb.size(), 1), hmb);

  sdk::StatusOr<std::vector<SdpaLaunch>> plan = planSdpaLaunches(callOf(cs), {});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  sdk::StatusOr<cl_command_queue> queue = dev.createQueue();
  ASSERT_TRUE(queue.isOk());
  for (const SdpaLaunch& l : *plan) {
    std::vector<void*> ptrs{dq.p + l.offsets[kSdpaOpQ], dk.p + l.offsets[kSdpaOpK], dv.p + l.offsets[kSdpaOpV]};
    if (kind == SdpaMask::kBool) ptrs.push_back(dmb.p + l.offsets[kSdpaOpMask]);
    if (kind == SdpaMask::kFloat) ptrs.push_back(dmf.p + l.offsets[kSdpaOpMask]);
    ptrs.push_back(dout.p + l.offsets[kSdpaOpOut]);
    ptrs.push_back(dlse.p + l.offsets[kSdpaOpLse]);
    std::vector<KernelParam> params;
    for (void* const& p : ptrs) params.push_back({true, sizeof(void*), &p});
    for (const int64_t& s : l.scalars) params.push_back({false, sizeof(int64_t), &s});
    sdk::Status st = opencl::launchGroups(**kernel, params, {kSdpaKeys, kSdpaRows, 1}, l.groups, *queue);
    ASSERT_TRUE(st.isOk()) << st.message();
  }
  ASSERT_EQ(dev.api().finish(*queue), CL_SUCCESS);
  dev.api().releaseCommandQueue(*queue);
  const std::vector<float> got = dout.read(), gotLse = dlse.read();

  // The reference, as the core's (core/exec/kernels_nn_attention.cc) in double.
  const double scale = cs.scale ? *cs.scale : 1.0 / std::sqrt(static_cast<double>(E));
  std::vector<double> want(got.size(), 0), wantLse(gotLse.size(), 0);
  std::vector<bool> reached(got.size(), false), reachedLse(gotLse.size(), false);
  double maxOut = 1, maxLse = 1;
  std::vector<double> w(static_cast<size_t>(S));
  for (int64_t z = 0; z < batch; ++z) {
    const int64_t oq = batchAt(cs.q, z), ok = batchAt(cs.k, z), ov = batchAt(cs.v, z), oo = batchAt(cs.out, z),
                  ol = batchAt(cs.lse, z), om = cs.mask ? batchAt(*cs.mask, z) : 0;
    for (int64_t i = 0; i < L; ++i) {
      bool allMasked = true;
      double mx = -kInf;
      for (int64_t j = 0; j < S; ++j) {
        double sc = 0;
        for (int64_t e = 0; e < E; ++e)
          sc += static_cast<double>(hq[static_cast<size_t>(oq + i * cs.q.strides[nb] + e * cs.q.strides[nb + 1])]) *
                hk[static_cast<size_t>(ok + j * cs.k.strides[nb] + e * cs.k.strides[nb + 1])];
        sc *= scale;
        if (cs.causal && j > i) sc = -kInf;
        if (cs.mask) {
          const size_t m = static_cast<size_t>(om + i * cs.mask->strides[nb] + j * cs.mask->strides[nb + 1]);
          if (cs.boolMask && hmb[m] == 0) sc = -kInf;
          if (!cs.boolMask) sc += hmf[m];
        }
        w[static_cast<size_t>(j)] = sc;
        if (sc != -kInf) allMasked = false;
        if (std::isnan(sc) || sc > mx) mx = std::isnan(mx) ? mx : sc;
      }
      const size_t li = static_cast<size_t>(ol + i * cs.lse.strides[nb]);
      reachedLse[li] = true;
      double sum = 0;
      for (double& x : w) sum += (x = std::exp(x - mx));
      wantLse[li] = allMasked ? 0.0 : mx + std::log(sum);
      for (int64_t e = 0; e < Ev; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < S; ++j)
          acc += w[static_cast<size_t>(j)] / sum *
                 hv[static_cast<size_t>(ov + j * cs.v.strides[nb] + e * cs.v.strides[nb + 1])];
        const size_t at = static_cast<size_t>(oo + i * cs.out.strides[nb] + e * cs.out.strides[nb + 1]);
        reached[at] = true;
        want[at] = allMasked ? 0.0 : acc;
        if (std::isfinite(want[at])) maxOut = std::max(maxOut, std::fabs(want[at]));
      }
      if (std::isfinite(wantLse[li])) maxLse = std::max(maxLse, std::fabs(wantLse[li]));
    }
  }
  // The conformance suite's bound: (4 u + 2 (E + S) u) max(1, max |reference|), u = 2^-24.
  const double u24 = std::ldexp(1.0, -24), tol = (4 + 2 * static_cast<double>(E + S)) * u24;
  auto check = [&](const std::vector<float>& g, const std::vector<double>& wv, const std::vector<bool>& reach,
                   double mag, const char* what) {
    for (size_t i = 0; i < g.size(); ++i) {
      if (!reach[i]) {
        ASSERT_EQ(g[i], sentinel) << what << " element " << i << " lies outside the view";
      } else if (std::isnan(wv[i])) {
        ASSERT_TRUE(std::isnan(g[i])) << what << " element " << i << ": " << g[i] << ", not NaN";
      } else {
        ASSERT_NEAR(g[i], wv[i], tol * mag) << what << " element " << i;
      }
    }
  };
  check(got, want, reached, maxOut, "result");
  check(gotLse, wantLse, reachedLse, maxLse, "logsumexp");
}

TEST(FlashAttentionOnOpenCL, OddSizesOneRowOneKey) {
  OPEN_OR_SKIP(dev);
  runAndCheck(dev, contiguous({2}, 37, 19, 23, 23));  // L, S off the tiles
  runAndCheck(dev, contiguous({}, 1, 1, 8, 8));
  runAndCheck(dev, contiguous({3}, 20, 1, 5, 7));     // S = 1: every weight 1
  runAndCheck(dev, contiguous({3}, 1, 50, 5, 7));     // L = 1
  runAndCheck(dev, contiguous({2}, 32, 48, 16, 16));  // exact tiles
}

TEST(FlashAttentionOnOpenCL, HeadDimsOneTo128AndUnequal) {
  OPEN_OR_SKIP(dev);
  for (auto [e, ev] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {2, 3}, {15, 17}, {16, 16}, {31, 64}, {64, 64}, {100, 33}, {128, 128}, {128, 1}, {1, 128}})
    runAndCheck(dev, contiguous({2}, 21, 27, e, ev));
}

TEST(FlashAttentionOnOpenCL, CausalWithLUnequalS) {
  OPEN_OR_SKIP(dev);
  for (auto [l, s] : std::vector<std::pair<int64_t, int64_t>>{{50, 50}, {40, 23}, {23, 40}, {9, 5}, {65, 63}}) {
    Case cs = contiguous({2}, l, s, 12, 9);
    cs.causal = true;
    runAndCheck(dev, cs);
  }
}

TEST(FlashAttentionOnOpenCL, PermutedBroadcastPaddedAndLoopedBatchViews) {
  OPEN_OR_SKIP(dev);
  // [2, 3, 19, 8] as [B, L, H, E] storage (PyTorch's usual layout), k broadcast over the heads,
  // v's rows padded to 12, the result at an offset with rows of 10 and lse with heads apart.
  Case cs;
  cs.q = View{{2, 3, 19, 8}, {3 * 19 * 8, 8, 3 * 8, 1}, 3};
  cs.k = View{{2, 3, 21, 8}, {21 * 8, 0, 8, 1}, 1};
  cs.v = View{{2, 3, 21, 6}, {3 * 21 * 12, 21 * 12, 12, 1}, 0};
  cs.out = View{{2, 3, 19, 6}, {3 * 19 * 10, 19 * 10, 10, 1}, 5};
  cs.lse = View{{2, 3, 19}, {3 * 40, 40, 1}, 2};
  runAndCheck(dev, cs);
  // Three batch dims: the outer one looped by the host; q and the result transposed in E.
  Case four = contiguous({2, 2, 3}, 17, 18, 5, 4);
  four.q = View{{2, 2, 3, 17, 5}, {2 * 3 * 5 * 17, 3 * 5 * 17, 5 * 17, 1, 17}, 0};
  four.out = View{{2, 2, 3, 17, 4}, {2 * 3 * 4 * 17, 3 * 4 * 17, 4 * 17, 1, 17}, 0};
  four.causal = true;
  runAndCheck(dev, four);
}

TEST(FlashAttentionOnOpenCL, BoolAndFloatMasksWithFullyMaskedRows) {
  OPEN_OR_SKIP(dev);
  for (bool isBool : {true, false}) {
    Case cs = contiguous({2}, 25, 35, 8, 11);
    cs.mask = rowMajor({2, 25, 35}, 4);
    cs.boolMask = isBool;
    runAndCheck(dev, cs, {false, {0, 7, 30}});  // rows 0 and 7 of batch 0, row 5 of batch 1
    // A mask broadcast over the batch and the rows ([1, 1, S] expanded).
    Case b = contiguous({2, 2}, 18, 20, 6, 6);
    b.mask = View{{2, 2, 18, 20}, {0, 0, 0, 1}, 0};
    b.boolMask = isBool;
    runAndCheck(dev, b);
  }
}

TEST(FlashAttentionOnOpenCL, NoKeysGiveZerosAndLargeScoresStayFinite) {
  OPEN_OR_SKIP(dev);
  runAndCheck(dev, contiguous({2}, 5, 0, 8, 8));  // S = 0: zeros, lse 0
  // Exact integer scores up to +-256, the row max rising from tile to tile: without the
  // running max exp overflows, without rescaling the earlier terms they weigh too much.
  Case big = contiguous({2}, 40, 70, 16, 16);
  big.scale = 1.0;
  runAndCheck(dev, big, {true});
}

TEST(FlashAttentionOnOpenCL, ANanKeyMakesItsRowsNan) {
  OPEN_OR_SKIP(dev);
  // k[1, 3, 2] is NaN: every row of batch 1 scores NaN against key 3, except where causal
  // masks it (rows 0-2 stay finite).
  Case cs = contiguous({2}, 10, 20, 8, 8);
  cs.causal = true;
  runAndCheck(dev, cs, {false, {}, 20 * 8 + 3 * 8 + 2});
  // k[1, 0, 5] is NaN: row 0's one unmasked score is NaN, every other -inf; the row is NaN
  // (the running max takes the NaN), not a fully masked row's zeros.
  runAndCheck(dev, cs, {false, {}, 20 * 8 + 5});
}

}  // namespace
}  // namespace plugsdk::level_zero::library
