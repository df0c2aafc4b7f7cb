// PTX generation without a GPU: kernels of every shape the scheduler emits lower to PTX
// whose entry takes the expected parameters and whose loads and stores are global; ptxas
// (when a toolkit is visible) accepts it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "backends/cuda/codegen/block_group.h"
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
  // PLUGSDK_CUDA_TEST_DUMP=DIR keeps each PTX (for ptxas outside the toolbox) and its LLVM IR.
  if (const char* dir = std::getenv("PLUGSDK_CUDA_TEST_DUMP"); dir && p.isOk()) {
    std::ofstream(std::string(dir) + "/" + std::string(view.name()) + ".ptx") << p->ptx;
    std::ofstream(std::string(dir) + "/" + std::string(view.name()) + ".ll") << p->llvmIr;
  }
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

// sin and cos call libdevice for their rare huge arguments: with it linked every function
// called is in the module (out of line: inlined per lane, Payne-Hanek made the kernel 4300
// lines); without it the kernel is UNIMPLEMENTED, naming the function. The sin and cos of
// one value share one rare block (four: two copies of the entry, each a full and a masked
// chunk), which keeps the kernel at 40 registers instead of 57.
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
  EXPECT_EQ(p->ptx.find(".extern"), std::string::npos) << "every function called is in the module:\n" << p->ptx;
  EXPECT_EQ(count(p->ptx, ".func  (.param .b32 func_retval0) __nv_sinf("), 1u) << p->ptx;
  EXPECT_EQ(count(p->ptx, ".func  (.param .b32 func_retval0) __nv_cosf("), 1u) << p->ptx;
  EXPECT_EQ(count(p->llvmIr, "\nmath.slow"), 4u) << p->llvmIr;
}

// A row softmax: three loops over a row, each thread one row (this version).
const char* kSoftmax = R"(kernel @softmax(%x: f32 in, %y: f32 out) grid [s0] {
  loop [128] {
    %0 = load %x[128*i0+r0] : f32
    %1 = reduce max %0 : f32
  }
  loop [128] {
    %2 = load %x[128*i0+r0] : f32
    %3 = sub %2, %1 : f32
    %4 = exp %3 : f32
    %5 = reduce sum %4 : f32
  }
  loop [128] {
    %6 = load %x[128*i0+r0] : f32
    %7 = sub %6, %1 : f32
    %8 = exp %7 : f32
    %9 = div %8, %5 : f32
    store %y[128*i0+r0], %9
  }
}
)";

// Every statement kind: indirect loads, combining stores (atomics), masks, rand, a CHECK,
// integer division (which reports a division by zero), f16 and bf16 storage.
const char* kEveryKind = R"(kernel @all(%a: i64 in, %b: f64 inout, %h: f16 inout, %g: bf16 out) grid [4, s1] {
  %0 = load %a[i0] : i64
  %1 = index i0*s1+i1 : i64
  %2 = const -2.5 : f64
  %3 = const 3 : i64
  %4 = div %0, %3 : i64
  %5 = load %b[3*%4+i1 % 2] : f64
  %6 = lt %5, %2 : bool
  %7 = where %6, %2, %5 : f64
  %8 = cast %1 : f64
  %9 = rand 42, i0*s1+i1 : f32
  %10 = load %h[i1] if %6 : f16
  %11 = cast %10 : f64
  %12 = add %7, %11 : f64
  store.sum %b[%0], %12
  store.max %b[%0+1], %8
  %13 = cast %9 : f16
  store.sum %h[i1], %13
  %14 = cast %12 : bf16
  store %g[i0*s1+i1], %14
  check %6, "index out of range"
}
)";

TEST(CudaCodegen, RowReductionAndEveryStatementKind) {
  for (const char* text : {kSoftmax, kEveryKind}) {
    sdk::StatusOr<PtxKernel> p = ptxOf(text, PtxOptions{3, findLibdevice(), false});
    ASSERT_TRUE(p.isOk()) << p.status().message();
    EXPECT_NE(p->ptx.find(".visible .entry plugsdk_test("), std::string::npos);
  }
  sdk::StatusOr<PtxKernel> p = ptxOf(kEveryKind);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  // Combining stores are compare-and-swap loops (NaN-propagating max, f16 sums), and so is
  // the status word's first-error-wins write.
  EXPECT_GE(count(p->ptx, "atom.global.cas.b64"), 2u) << p->ptx;
  EXPECT_GE(count(p->ptx, "atom.global.cas.b32") + count(p->ptx, "atom.cas.b32"), 2u) << p->ptx;
  ASSERT_EQ(p->checkMessages.size(), 1u);
  EXPECT_EQ(p->checkMessages[0], "index out of range");
  // Failures are also raised as device-side asserts where the launch sets bit 0 of the status
  // pointer (imported streams): CUDA's __assertfail with the CHECK's message, the pointer
  // masked before use.
  EXPECT_NE(p->ptx.find(".extern .func __assertfail"), std::string::npos) << p->ptx;
  EXPECT_GE(count(p->ptx, "call.uni \n\t__assertfail") + count(p->ptx, "__assertfail,"), 2u) << p->ptx;
  // PTX spells strings as byte lists (each entry copy, plain and aligned, has its own).
  auto bytes = [](const std::string& s) {
    std::string out;
    for (char c : s) out += (out.empty() ? "" : ", ") + std::to_string(static_cast<int>(c));
    return out;
  };
  EXPECT_GE(count(p->ptx, bytes("index out of range") + "}"), 1u) << p->ptx;
  EXPECT_GE(count(p->ptx, bytes("kernel @all") + "}"), 1u) << p->ptx;
  EXPECT_NE(p->ptx.find("-2;"), std::string::npos) << "the status pointer's bit 0 masked off:\n" << p->ptx;
}

// A pointwise kernel is lanes-per-thread: its aligned copy moves 4 f32 in one 128-bit access,
// its unaligned copy one element at a time.
TEST(CudaCodegen, PointwiseUsesVectorAccessesWhenAligned) {
  const char* text = R"(kernel @scale(%x: f32 in, %y: f32 out) grid [s0, 64] {
  %0 = load %x[64*i0+i1] : f32
  %1 = const 2 : f32
  %2 = mul %0, %1 : f32
  store %y[64*i0+i1], %2
}
)";
  sdk::StatusOr<PtxKernel> p = ptxOf(text);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_EQ(p->mapping.kind, ThreadMapping::Kind::kLanesPerThread);
  EXPECT_EQ(p->mapping.lanes, 4u);
  EXPECT_EQ(count(p->ptx, "ld.global.v4.f32"), 1u) << p->ptx;
  EXPECT_EQ(count(p->ptx, "st.global.v4.f32"), 1u) << p->ptx;
  EXPECT_GE(count(p->ptx, "ld.global.f32"), 4u) << p->ptx;  // the unaligned copy
}

// An embedding + layer norm (GPT-2's first kernel): each grid point gathers a 768-wide row at
// a loaded id. The gathers' loads are contiguous along the loop (the id does not vary in it),
// so they vote for loop mode like the plain loads: a group of threads per row, not a thread
// walking rows (which ran 2048 rows on 2 blocks: 1.67 ms on the H100).
TEST(CudaCodegen, GatheredRowsAreLoopedByAGroupOfThreads) {
  const char* text = R"(kernel @embed(%ids: i64 in, %pids: i64 in, %w: f32 in, %p: f32 in, %m: f32 out) grid [8, 256] {
  loop [768] {
    %0 = load %ids[256*i0+i1] : i64
    %1 = const 50257 : i64
    %2 = lt %0, %1 : bool
    check %2, "embedding index out of range"
    %3 = load %w[768*%0+r0] : f32
    %4 = load %pids[i1] : i64
    %5 = load %p[768*%4+r0] : f32
    %6 = add %3, %5 : f32
    %7 = reduce sum %6 : f32
  }
  store %m[256*i0+i1], %7
}
)";
  sdk::StatusOr<PtxKernel> p = ptxOf(text);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_EQ(p->mapping.kind, ThreadMapping::Kind::kBlockPerPoint);
  // The ids read per iteration (a gather along the loop): the rows' loads do not vote for the
  // loop, the ids' loads (contiguous along r0) do.
  const char* perIteration = R"(kernel @bag(%ids: i64 in, %w: f32 in, %m: f32 out) grid [8, 256] {
  loop [768] {
    %0 = load %ids[768*i1+r0] : i64
    %1 = load %w[4*%0+i1] : f32
    %2 = reduce sum %1 : f32
  }
  store %m[256*i0+i1], %2
}
)";
  sdk::StatusOr<PtxKernel> v = ptxOf(perIteration);
  ASSERT_TRUE(v.isOk()) << v.status().message();
  EXPECT_EQ(v->mapping.kind, ThreadMapping::Kind::kBlockPerPoint);
  // Contiguous along the grid and invariant along the loop: a thread per point stays.
  const char* gridWise = R"(kernel @rows(%x: f32 in, %m: f32 out) grid [8, 256] {
  loop [16] {
    %0 = load %x[4096*r0+256*i0+i1] : f32
    %1 = reduce sum %0 : f32
  }
  store %m[256*i0+i1], %1
}
)";
  sdk::StatusOr<PtxKernel> g = ptxOf(gridWise);
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(g->mapping.kind, ThreadMapping::Kind::kLanesPerThread);
}

// Row reductions are block-per-point: warp shuffles, then shared memory across warps (a
// 4096-wide row takes 256 threads); the softmax's three loops keep it from being split.
TEST(CudaCodegen, RowReductionsCombineAcrossTheBlock) {
  const char* text = R"(kernel @rowmax(%x: f32 in, %y: f32 out) grid [s0] {
  loop [4096] {
    %0 = load %x[4096*i0+r0] : f32
    %1 = reduce max %0 : f32
  }
  store %y[i0], %1
}
)";
  sdk::StatusOr<PtxKernel> p = ptxOf(text);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_EQ(p->mapping.kind, ThreadMapping::Kind::kBlockPerPoint);
  EXPECT_EQ(p->mapping.blockThreads, 256u);
  EXPECT_TRUE(p->mapping.splittable);
  EXPECT_GE(count(p->ptx, "shfl.sync.bfly.b32"), 5u) << p->ptx;
  EXPECT_GE(count(p->ptx, "bar.sync"), 1u) << p->ptx;
  EXPECT_GE(count(p->ptx, ".shared"), 1u) << p->ptx;
  // The slots are read as vectors: declared 16-byte aligned (4 was a misaligned address).
  EXPECT_EQ(count(p->ptx, ".shared .align 4 .b8"), 0u) << p->ptx;
  // The split's arrival count and its fence; one counter array shared by both copies, which
  // the launch finds by name and zeroes.
  EXPECT_EQ(count(p->ptx, std::string(".visible .global .align 16 .b8 ") + kSplitCountersSymbol + "["), 1u) << p->ptx;
  EXPECT_GE(count(p->ptx, "atom.global.add.u32") + count(p->ptx, "atom.add.u32"), 1u) << p->ptx;
  EXPECT_GE(count(p->ptx, "membar.gl") + count(p->ptx, "fence.sc.gpu"), 1u) << p->ptx;

  sdk::StatusOr<PtxKernel> soft = ptxOf(kSoftmax, PtxOptions{3, "", false});  // exp: the polynomial
  ASSERT_TRUE(soft.isOk()) << soft.status().message();
  EXPECT_EQ(soft->mapping.kind, ThreadMapping::Kind::kBlockPerPoint);
  // 128 wide: a warp per row, 4 rows per block; no shared memory, no block barrier, and the
  // lanes' index within their warp.
  EXPECT_EQ(soft->mapping.pointsPerBlock, 4u);
  EXPECT_EQ(soft->mapping.blockThreads, 128u);
  EXPECT_FALSE(soft->mapping.splittable);
  EXPECT_EQ(count(soft->ptx, "bar.sync"), 0u) << soft->ptx;
  EXPECT_EQ(count(soft->ptx, ".shared"), 0u) << soft->ptx;
  EXPECT_GE(count(soft->ptx, "shfl.sync.bfly"), 5u) << soft->ptx;
  EXPECT_GE(count(soft->ptx, "and.b32"), 1u) << soft->ptx;
}

// A row that fits the block's registers is read from memory once: the rounds of a 4096-wide
// row over 256 threads are a constant 4, unrolled, and the loads of the read-only %x in the
// second and third loops are the first loop's values. An argument the kernel also writes is
// read again in every loop.
TEST(CudaCodegen, RowFittingTheBlockIsReadOnce) {
  auto wide = [](std::string text, const std::string& access) {
    for (size_t at; (at = text.find("128")) != std::string::npos;) text.replace(at, 3, "4096");
    text.replace(text.find("%x: f32 in"), 10, "%x: f32 " + access);
    return text;
  };
  sdk::StatusOr<PtxKernel> p = ptxOf(wide(kSoftmax, "in").c_str(), PtxOptions{3, "", false});
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_EQ(p->mapping.blockThreads, 256u);
  // 4 vector loads in the aligned copy, 16 scalar ones in the other, none in loops 2 and 3.
  EXPECT_EQ(count(p->ptx, "ld.global.nc.v4.f32"), 4u) << p->ptx;
  EXPECT_EQ(count(p->ptx, "ld.global.nc.f32"), 16u) << p->ptx;
  EXPECT_EQ(count(p->ptx, "ld.global"), 20u) << p->ptx;

  sdk::StatusOr<PtxKernel> inout = ptxOf(wide(kSoftmax, "inout").c_str(), PtxOptions{3, "", false});
  ASSERT_TRUE(inout.isOk()) << inout.status().message();
  EXPECT_EQ(count(inout->ptx, "ld.global.nc"), 0u) << inout->ptx;
  EXPECT_GE(count(inout->ptx, "ld.global.v4.f32"), 3u * 4u) << inout->ptx;
}

// A row that ends in a partial round (vit's attention rows of 197: a warp per row, one
// unrolled round of 32 chunks, 17 threads with one more, a masked tail) is read once too:
// loops 2 and 3 take the chunks the same thread kept from loop 1 (loop_reuse.h), where the
// conditional rounds had been read again in each loop. And the exponentials of loop 2 are
// loop 3's: the softmax has as many loads as the row max alone, and its exp polynomial
// (one ex2-free fma chain per chunk) appears no more often than with one exp loop.
TEST(CudaCodegen, RowOfPartialRoundsIsReadOnce) {
  auto rows = [](std::string text, const std::string& extent) {
    for (size_t at; (at = text.find("128")) != std::string::npos;) text.replace(at, 3, extent);
    return text;
  };
  const std::string rowmax = R"(kernel @rowmax(%x: f32 in, %y: f32 out) grid [s0] {
  loop [197] {
    %0 = load %x[197*i0+r0] : f32
    %1 = reduce max %0 : f32
  }
  store %y[i0], %1
}
)";
  sdk::StatusOr<PtxKernel> one = ptxOf(rowmax, PtxOptions{3, "", false});
  ASSERT_TRUE(one.isOk()) << one.status().message();
  sdk::StatusOr<PtxKernel> soft = ptxOf(rows(kSoftmax, "197"), PtxOptions{3, "", false});
  ASSERT_TRUE(soft.isOk()) << soft.status().message();
  EXPECT_EQ(soft->mapping.pointsPerBlock, 4u);
  EXPECT_GT(count(one->ptx, "ld.global"), 0u);
  EXPECT_EQ(count(soft->ptx, "ld.global"), count(one->ptx, "ld.global")) << soft->ptx;
  // Loop 3 keeps no exp of its own: the kernel with loop 3's exp removed has as many.
  std::string twoExp = rows(kSoftmax, "197");
  twoExp.replace(twoExp.find("%8 = exp %7 : f32"), 17, "%8 = add %7, %7 : f32");
  sdk::StatusOr<PtxKernel> fewer = ptxOf(twoExp, PtxOptions{3, "", false});
  ASSERT_TRUE(fewer.isOk()) << fewer.status().message();
  EXPECT_EQ(count(soft->ptx, "fma.rn.f32"), count(fewer->ptx, "fma.rn.f32")) << soft->ptx;
}

// The attention softmax as the sdpa expansion writes it (keys padded from 197 to 200, the
// padded scores masked by their position): the positions, masks and scaled scores of loops
// 2 and 3 are loop 1's too, so the row is read once and each exp taken once (on the H200
// the kernel was compute-bound: reading the row once alone left it at 77 us).
TEST(CudaCodegen, PaddedAttentionRowIsReadOnce) {
  const std::string head = R"(kernel @attn(%x: f32 in, %y: bf16 out) grid [s0] {
  %0 = const 197 : i64
  %1 = const -inf : f32
  %2 = const 0.125 : f32
  %3 = const 0.0 : f32
  loop [200] {
    %4 = index r0 : i64
    %5 = ge %4, %0 : bool
    %6 = load %x[200*i0+r0] : f32
    %7 = mul %6, %2 : f32
    %8 = where %5, %1, %7 : f32
    %9 = reduce max %8 : f32
  }
)";
  const std::string rest = R"(  %10 = eq %9, %1 : bool
  %11 = where %10, %3, %9 : f32
  loop [200] {
    %12 = index r0 : i64
    %13 = ge %12, %0 : bool
    %14 = load %x[200*i0+r0] : f32
    %15 = mul %14, %2 : f32
    %16 = where %13, %1, %15 : f32
    %17 = sub %16, %11 : f32
    %18 = exp %17 : f32
    %19 = reduce sum %18 : f32
  }
  loop [200] {
    %20 = index r0 : i64
    %21 = ge %20, %0 : bool
    %22 = load %x[200*i0+r0] : f32
    %23 = mul %22, %2 : f32
    %24 = where %21, %1, %23 : f32
    %25 = sub %24, %11 : f32
    %26 = exp %25 : f32
    %27 = div %26, %19 : f32
    %28 = where %10, %3, %27 : f32
    %29 = cast %28 : bf16
    store %y[200*i0+r0], %29
  }
}
)";
  const std::string maxOnly = head + "  %10 = cast %9 : bf16\n  store %y[i0], %10\n}\n";
  sdk::StatusOr<PtxKernel> one = ptxOf(maxOnly, PtxOptions{3, "", false});
  ASSERT_TRUE(one.isOk()) << one.status().message();
  sdk::StatusOr<PtxKernel> soft = ptxOf(head + rest, PtxOptions{3, "", false});
  ASSERT_TRUE(soft.isOk()) << soft.status().message();
  EXPECT_GT(count(one->ptx, "ld.global"), 0u);
  EXPECT_EQ(count(soft->ptx, "ld.global"), count(one->ptx, "ld.global")) << soft->ptx;
  // And loop 3 takes loop 2's exponentials: as many FMAs as with loop 3's exp removed.
  std::string noExp = rest;
  noExp.replace(noExp.find("%26 = exp %25 : f32"), 19, "%26 = add %25, %25 : f32");
  sdk::StatusOr<PtxKernel> fewer = ptxOf(head + noExp, PtxOptions{3, "", false});
  ASSERT_TRUE(fewer.isOk()) << fewer.status().message();
  EXPECT_EQ(count(soft->ptx, "fma.rn.f32"), count(fewer->ptx, "fma.rn.f32")) << soft->ptx;
}

// bf16 results are rounded by the hardware's conversion (sm_80 and later), a NaN stored as
// the conversion makes it (as torch's CUDA kernels do: no 0x7fc0 select, lowering::Target::
// nativeBf16); sm_75 has no bf16 conversion and rounds on the bits, NaN made 0x7fc0.
TEST(CudaCodegen, Bf16RoundsWithTheConversionInstruction) {
  const char* text = R"(kernel @half(%x: f32 in, %y: bf16 out) grid [s0] {
  %0 = load %x[i0] : f32
  %1 = cast %0 : bf16
  store %y[i0], %1
}
)";
  sdk::StatusOr<PtxKernel> p = ptxOf(text, PtxOptions{3, "", false});
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_GE(count(p->ptx, "cvt.rn.bf16"), 1u) << p->ptx;
  EXPECT_EQ(count(p->ptx, "32704"), 0u) << p->ptx;
  EXPECT_EQ(count(p->ptx, "setp.nan"), 0u) << p->ptx;
  StatusOr<kernel::Kernel> k = kernel::parseKernel(text);
  ASSERT_TRUE(k.isOk());
  StatusOr<std::unique_ptr<plugin::EncodedKernel>> e = plugin::encodeKernel(*k);
  ASSERT_TRUE(e.isOk());
  sdk::StatusOr<PtxKernel> old = compileToPtx(sdk::KernelView((*e)->get()), GpuArch{7, 5}, "plugsdk_test", {});
  ASSERT_TRUE(old.isOk()) << old.status().message();
  EXPECT_EQ(count(old->ptx, "cvt.rn.bf16"), 0u) << old->ptx;
  EXPECT_GE(count(old->ptx, "32704"), 1u) << "the CPU's canonical NaN (0x7fc0)\n" << old->ptx;
}

TEST(CudaCodegen, F64PowNeedsLibdevice) {
  const char* text = R"(kernel @powk(%x: f64 in, %y: f64 out) grid [s0] {
  %0 = load %x[i0] : f64
  %1 = pow %0, %0 : f64
  store %y[i0], %1
}
)";
  sdk::StatusOr<PtxKernel> none = ptxOf(text, PtxOptions{3, "", false});
  ASSERT_FALSE(none.isOk());
  EXPECT_EQ(none.status().code(), sdk::Code::kUnimplemented);
  EXPECT_NE(none.status().message().find("__nv_pow"), std::string::npos) << none.status().message();
  EXPECT_NE(none.status().message().find("kernel @powk"), std::string::npos) << none.status().message();
  sdk::StatusOr<PtxKernel> bad = ptxOf(text, PtxOptions{3, "/nonexistent/libdevice.10.bc", false});
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("cannot read libdevice /nonexistent/libdevice.10.bc"), std::string::npos)
      << bad.status().message();
  const std::string libdevice = findLibdevice();
  if (libdevice.empty()) GTEST_SKIP() << "no libdevice.10.bc here: only its absence was checked";
  sdk::StatusOr<PtxKernel> p = ptxOf(text, PtxOptions{3, libdevice, false});
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_EQ(p->ptx.find(".extern"), std::string::npos) << "every function called is in the module:\n" << p->ptx;
}

// A scatter-add of f32 (an embedding's gradient) adds with one atomic instruction: a
// compare-and-swap loop serialized its retries where many rows share an index (BERT's
// token-type embedding: 2048 rows into one, 17.7 ms on the H100).
TEST(CudaCodegen, FloatScatterAddIsOneAtomicAdd) {
  const char* text = R"(kernel @scatter(%i: i64 in, %g: f32 in, %y: f32 inout) grid [2048, 768] {
  %0 = load %i[i0] : i64
  %1 = load %g[768*i0+i1] : f32
  store.sum %y[768*%0+i1], %1
}
)";
  sdk::StatusOr<PtxKernel> p = ptxOf(text);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_GE(count(p->ptx, "red.global.add.f32") + count(p->ptx, "atom.global.add.f32") + count(p->ptx, "atom.add.f32"),
            1u)
      << p->ptx;
  EXPECT_EQ(count(p->ptx, "atom.global.cas"), 0u) << p->ptx;
}

TEST(CudaCodegen, MalformedIrIsAnErrorNamingTheKernel) {
  sdk::StatusOr<PtxKernel> p = ptxOf(kSoftmax, PtxOptions{3, "", true});
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), sdk::Code::kInternal);
  EXPECT_NE(p.status().message().find("kernel @softmax: the generated LLVM IR is malformed"), std::string::npos)
      << p.status().message().substr(0, 300);
}

// NaN-propagating maximum and minimum are one instruction each from sm_80 (max.NaN.f32):
// elementwise, in a max reduction's accumulation and in its combines across lanes, warps
// and splits; no NaN test is left in either kernel. sm_75 keeps the compare and selects.
TEST(CudaCodegen, NanPropagatingMaxMinAreOneInstruction) {
  const char* text = R"(kernel @clamp(%x: f32 in, %y: f32 in, %z: f32 out) grid [s0] {
  %0 = load %x[i0] : f32
  %1 = load %y[i0] : f32
  %2 = maximum %0, %1 : f32
  %3 = minimum %2, %1 : f32
  store %z[i0], %3
}
)";
  const char* rowmax = R"(kernel @rowmax(%x: f32 in, %y: f32 out) grid [s0] {
  loop [4096] {
    %0 = load %x[4096*i0+r0] : f32
    %1 = reduce max %0 : f32
  }
  store %y[i0], %1
}
)";
  for (const char* t : {text, rowmax}) {
    sdk::StatusOr<PtxKernel> p = ptxOf(t, PtxOptions{3, "", false});
    ASSERT_TRUE(p.isOk()) << p.status().message();
    EXPECT_GE(count(p->ptx, "max.NaN.f32"), 1u) << p->ptx;
    EXPECT_EQ(count(p->ptx, "setp.nan"), 0u) << p->ptx;
    // (The split's combine selects -inf for slots no block wrote: not a NaN rule.)
    if (t == text) {
      EXPECT_EQ(count(p->ptx, "selp.f32"), 0u) << p->ptx;
    }
  }
  StatusOr<kernel::Kernel> k = kernel::parseKernel(text);
  ASSERT_TRUE(k.isOk());
  StatusOr<std::unique_ptr<plugin::EncodedKernel>> e = plugin::encodeKernel(*k);
  ASSERT_TRUE(e.isOk());
  sdk::StatusOr<PtxKernel> old = compileToPtx(sdk::KernelView((*e)->get()), GpuArch{7, 5}, "plugsdk_test", {});
  ASSERT_TRUE(old.isOk()) << old.status().message();
  EXPECT_EQ(count(old->ptx, "max.NaN"), 0u) << old->ptx;
  EXPECT_GE(count(old->ptx, "setp.nan"), 1u) << old->ptx;
}

// f32 exp is 2^n 2^t with 2^t from ex2.approx.ftz.f32 (lowering::Target::exp2Intrinsic),
// the NaN carried through the NaN-propagating clamps (no NaN test left); the option off
// (PtxOptions::fastExp, the default; $PLUGSDK_CUDA_FAST_EXP=1 turns it on) gives the inline polynomial (its
// first coefficient, 1.9875691500E-4, is 0f39506967).
TEST(CudaCodegen, ExpTakesTheHardwareExp2) {
  const char* text = R"(kernel @expk(%x: f32 in, %y: f32 out) grid [s0] {
  %0 = load %x[i0] : f32
  %1 = exp %0 : f32
  store %y[i0], %1
}
)";
  PtxOptions fast{3, "", false};
  fast.fastExp = true;
  sdk::StatusOr<PtxKernel> p = ptxOf(text, fast);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_GE(count(p->ptx, "ex2.approx.ftz.f32"), 4u) << p->ptx;
  EXPECT_EQ(count(p->ptx, "0f39506967"), 0u) << p->ptx;
  EXPECT_EQ(count(p->ptx, "setp.nan"), 0u) << p->ptx;
  EXPECT_GE(count(p->ptx, "max.NaN.f32"), 4u) << p->ptx;
  PtxOptions poly = fast;
  poly.fastExp = false;
  sdk::StatusOr<PtxKernel> q = ptxOf(text, poly);
  ASSERT_TRUE(q.isOk()) << q.status().message();
  EXPECT_EQ(count(q->ptx, "ex2.approx"), 0u) << q->ptx;
  EXPECT_GE(count(q->ptx, "0f39506967"), 1u) << q->ptx;
}

// vit_b_16's GELU (bias add in bf16, erf's argument scaled, bf16 out), with exp standing in
// for erf (which takes libdevice): a memory-bound kernel whose instructions per element
// decide its time (docs/cuda-backend.md, "Tenth session"; tools/ptx_count.py counts them in
// a dump). Its aligned copy reads and writes bf16 4 at a time, 64-bit accesses.
const char* kGelu = R"(kernel @gelu(%x: bf16 in, %b: f32 in, %y: bf16 out) grid [32, 197, 3072] {
  %0 = const 0.5 : f32
  %1 = const 1.0 : f32
  %2 = const 0.7071067690849304 : f32
  %3 = load %x[605184*i0+3072*i1+i2] : bf16
  %4 = load %b[i2] : f32
  %5 = cast %4 : bf16
  %6 = add %3, %5 : bf16
  %7 = cast %6 : f32
  %8 = mul %7, %0 : f32
  %9 = mul %7, %2 : f32
  %10 = exp %9 : f32
  %11 = add %1, %10 : f32
  %12 = mul %8, %11 : f32
  %13 = cast %12 : bf16
  store %y[605184*i0+3072*i1+i2], %13
}
)";

TEST(CudaCodegen, GeluKernel) {
  // exp stands in for erf here; with the fast exp its NaN rides the max.NaN clamps, so any
  // NaN test left would be the bf16 roundings'.
  PtxOptions fast{3, "", false};
  fast.fastExp = true;
  sdk::StatusOr<PtxKernel> p = ptxOf(kGelu, fast);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_EQ(p->mapping.kind, ThreadMapping::Kind::kLanesPerThread);
  EXPECT_EQ(count(p->ptx, "ld.global.v2.u32") + count(p->ptx, "ld.global.v2.b32") + count(p->ptx, "ld.global.v4.u16"),
            1u)
      << p->ptx;
  EXPECT_EQ(count(p->ptx, "ld.global.v4.f32"), 1u) << p->ptx;
  EXPECT_EQ(count(p->ptx, "st.global.v4.b16"), 1u) << p->ptx;
  // Its three bf16 roundings (the bias cast, the bf16 add, the result) are conversions in
  // f32 registers: no NaN select, no unpacking through 16-bit integers.
  EXPECT_GE(count(p->ptx, "cvt.rn.bf16"), 3u) << p->ptx;
  EXPECT_EQ(count(p->ptx, "setp.nan"), 0u) << p->ptx;
  EXPECT_EQ(count(p->ptx, "cvt.u32.u16"), 0u) << p->ptx;
  // sm_80 has cvt.rn.bf16.f32 and max.NaN.f32, not cvt.f32.bf16 (sm_90): LLVM widens by a shift there.
  StatusOr<kernel::Kernel> k = kernel::parseKernel(kGelu);
  ASSERT_TRUE(k.isOk());
  StatusOr<std::unique_ptr<plugin::EncodedKernel>> e = plugin::encodeKernel(*k);
  ASSERT_TRUE(e.isOk());
  sdk::StatusOr<PtxKernel> a100 = compileToPtx(sdk::KernelView((*e)->get()), GpuArch{8, 0}, "plugsdk_test", fast);
  ASSERT_TRUE(a100.isOk()) << a100.status().message();
  EXPECT_NE(a100->ptx.find(".target sm_80"), std::string::npos) << a100->ptx;
  EXPECT_GE(count(a100->ptx, "cvt.rn.bf16.f32"), 3u) << a100->ptx;
  EXPECT_EQ(count(a100->ptx, "cvt.f32.bf16"), 0u) << a100->ptx;
  EXPECT_GE(count(a100->ptx, "max.NaN.f32"), 1u) << a100->ptx;
}

// Grid extents that are constants are constants in the kernel, and nested dims are walked as
// one (lowering::Target::collapseGrid). The GELU's [32, 197, 3072], read at
// 605184*i0+3072*i1+i2 and its bias at i2: i0 and i1 nest (one index o of 6304 rows), i2
// does not (the bias), so a thread's row and chunk are t / 768 and t % 768: constants, in
// 32 bits (18.9M points), no division instruction and no 64-bit multiply-high (there were
// 64-bit divisions by the extents passed as parameters, with a 32-bit fast path, and by 197).
// Without the bias all three dims are one range: no multiply-high either. A transposed
// access keeps the dims apart. A rank-1 grid of a symbolic size has one outer point: no
// division either (the softmax's rows).
TEST(CudaCodegen, GridIndicesDivideByConstantsOrNotAtAll) {
  auto divisions = [](const std::string& ptx) {
    return count(ptx, "div.u") + count(ptx, "div.s") + count(ptx, "rem.u") + count(ptx, "rem.s");
  };
  sdk::StatusOr<PtxKernel> gelu = ptxOf(kGelu, PtxOptions{3, "", false});
  ASSERT_TRUE(gelu.isOk()) << gelu.status().message();
  EXPECT_EQ(divisions(gelu->ptx), 0u) << gelu->ptx;
  EXPECT_EQ(count(gelu->ptx, "mul.hi.u64"), 0u) << gelu->ptx;
  std::string noBias = kGelu;
  noBias.replace(noBias.find("load %b[i2]"), 11, "load %b[605184*i0+3072*i1+i2]");
  noBias.replace(noBias.find("@gelu("), 6, "@gelu_flat(");
  sdk::StatusOr<PtxKernel> flat = ptxOf(noBias, PtxOptions{3, "", false});
  ASSERT_TRUE(flat.isOk()) << flat.status().message();
  EXPECT_EQ(divisions(flat->ptx), 0u) << flat->ptx;
  EXPECT_EQ(count(flat->ptx, "mul.hi"), 0u) << flat->ptx;
  const char* transposed = R"(kernel @tr(%x: f32 in, %y: f32 out) grid [96, 3072] {
  %0 = load %x[i0+96*i1] : f32
  store %y[3072*i0+i1], %0
}
)";
  sdk::StatusOr<PtxKernel> tr = ptxOf(transposed, PtxOptions{3, "", false});
  ASSERT_TRUE(tr.isOk()) << tr.status().message();
  EXPECT_EQ(divisions(tr->ptx), 0u) << tr->ptx;
  EXPECT_GE(count(tr->ptx, "mul.hi"), 1u) << tr->ptx;
  const char* rows = R"(kernel @rowsum(%x: f32 in, %y: f32 out) grid [s0] {
  loop [200] {
    %0 = load %x[200*i0+r0] : f32
    %1 = reduce sum %0 : f32
  }
  store %y[i0], %1
}
)";
  sdk::StatusOr<PtxKernel> rs = ptxOf(rows, PtxOptions{3, "", false});
  ASSERT_TRUE(rs.isOk()) << rs.status().message();
  EXPECT_EQ(divisions(rs->ptx), 0u) << rs->ptx;
}

}  // namespace
}  // namespace plugsdk::cuda
