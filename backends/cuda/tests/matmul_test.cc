// prims.matmul without a GPU: the cuBLASLt plans of the layouts the scheduler hands over
// (row-major, transposed views, column-major results, batches that flatten or not,
// broadcast batches) and the ones it must leave to the generated kernel; the generated
// kernel itself, run by the core's kernel interpreter against a direct product, and lowered
// to PTX.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "backends/cuda/codegen/nvptx.h"
#include "backends/cuda/library/cublaslt_api.h"
#include "backends/cuda/library/matmul_kernel.h"
#include "backends/cuda/library/matmul_plan.h"
#include "core/exec/host_tensor.h"
#include "core/kernel/interpreter.h"
#include "core/kernel/kernel_text.h"
#include "core/plugin/kernel_encoding.h"

namespace plugsdk::cuda {
namespace {

/// A matmul call whose every size, stride and offset is a constant.
struct Operand {
  uint32_t dtype;
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
};
MatmulCall callOf(const Operand& a, const Operand& b, const Operand& out) {
  MatmulCall c;
  auto expr = [&](int64_t v) {
    c.pool.push_back(plugsdk_index_insn_t{PLUGSDK_INDEX_CONST, 0, v});
    return plugsdk_index_expr_t{static_cast<uint32_t>(c.pool.size() - 1), 1};
  };
  auto desc = [&](const Operand& o) {
    OperandDesc d;
    d.dtype = o.dtype;
    for (int64_t s : o.sizes) d.sizes.push_back(expr(s));
    for (int64_t s : o.strides) d.strides.push_back(expr(s));
    d.offset = expr(o.offset);
    return d;
  };
  c.a = desc(a);
  c.b = desc(b);
  c.out = desc(out);
  return c;
}

LtPlan planOf(const Operand& a, const Operand& b, const Operand& out) {
  sdk::StatusOr<MatmulShape> s = MatmulShape::eval(callOf(a, b, out), {});
  EXPECT_TRUE(s.isOk()) << s.status().message();
  std::optional<LtPlan> p = planCublasLt(*s);
  EXPECT_TRUE(p.has_value());
  return p.value_or(LtPlan{});
}

constexpr uint32_t F32 = PLUGSDK_DTYPE_F32;

TEST(MatmulPlan, RowMajorIsTheTransposedProductInColumnMajor) {
  // [8, 5] x [5, 3] -> [8, 3], all row-major: D (3x8) = b^T a^T, both stored as is.
  LtPlan p = planOf({F32, {8, 5}, {5, 1}}, {F32, {5, 3}, {3, 1}}, {F32, {8, 3}, {3, 1}});
  EXPECT_TRUE(p.swapped);
  EXPECT_EQ(p.describe(), "D[3x8 ld 3] = A[3x5 ld 3] B[5x8 ld 5] (A = b, B = a)");
  // a as a transposed view of a [5, 8] buffer (strides 1, 8): cuBLASLt transposes it.
  p = planOf({F32, {8, 5}, {1, 8}}, {F32, {5, 3}, {3, 1}}, {F32, {8, 3}, {3, 1}});
  EXPECT_EQ(p.describe(), "D[3x8 ld 3] = A[3x5 ld 3] B^T[8x5 ld 8] (A = b, B = a)");
  // A padded leading dimension (a slice of a wider row-major buffer) is kept.
  p = planOf({F32, {8, 5}, {16, 1}}, {F32, {5, 3}, {3, 1}}, {F32, {8, 3}, {3, 1}});
  EXPECT_EQ(p.describe(), "D[3x8 ld 3] = A[3x5 ld 3] B[5x8 ld 16] (A = b, B = a)");
}

TEST(MatmulPlan, ColumnMajorResultIsTheDirectProduct) {
  LtPlan p = planOf({F32, {8, 5}, {5, 1}}, {F32, {5, 3}, {1, 5}}, {F32, {8, 3}, {1, 8}});
  EXPECT_FALSE(p.swapped);
  EXPECT_EQ(p.describe(), "D[8x3 ld 8] = A^T[5x8 ld 5] B[5x3 ld 5]");
}

TEST(MatmulPlan, BatchesFlattenWhereTheirStridesNest) {
  // [2, 3, 4, 5] x [2, 3, 5, 6], contiguous: one batch of 6.
  LtPlan p = planOf({F32, {2, 3, 4, 5}, {60, 20, 5, 1}}, {F32, {2, 3, 5, 6}, {90, 30, 6, 1}},
                    {F32, {2, 3, 4, 6}, {72, 24, 6, 1}});
  EXPECT_EQ(p.batchCount, 6);
  EXPECT_EQ(p.aStride, 30);  // cuBLASLt's A is b
  EXPECT_EQ(p.bStride, 20);
  EXPECT_EQ(p.dStride, 24);
  EXPECT_TRUE(p.outerSizes.empty());
  // b broadcast over the first batch dim (stride 0): the dims do not nest, one stays outer.
  p = planOf({F32, {2, 3, 4, 5}, {60, 20, 5, 1}}, {F32, {2, 3, 5, 6}, {0, 30, 6, 1}},
             {F32, {2, 3, 4, 6}, {72, 24, 6, 1}});
  EXPECT_EQ(p.batchCount, 3);
  ASSERT_EQ(p.outerSizes, std::vector<int64_t>{2});
  EXPECT_EQ(p.outerA, std::vector<int64_t>{0});  // b's
  EXPECT_EQ(p.outerB, std::vector<int64_t>{60});
  EXPECT_EQ(p.outerD, std::vector<int64_t>{72});
  // A broadcast b whose batch does not continue a's rows stays a batch (a's batch stride 25, not 4 * 5).
  p = planOf({F32, {3, 4, 5}, {25, 5, 1}}, {F32, {3, 5, 6}, {0, 6, 1}}, {F32, {3, 4, 6}, {24, 6, 1}});
  EXPECT_EQ(p.batchCount, 3);
  p = planOf({F32, {3, 4, 5}, {20, 5, 1}}, {F32, {3, 5, 6}, {0, 6, 1}}, {F32, {3, 4, 6}, {24, 6, 1}});
  EXPECT_EQ(p.batchCount, 1);
  EXPECT_EQ(p.describe(), "D[6x12 ld 6] = A[6x5 ld 6] B[5x12 ld 5] (A = b, B = a)");
  // Size-1 batch dims are dropped whatever their strides.
  p = planOf({F32, {1, 4, 5}, {999, 5, 1}}, {F32, {1, 5, 6}, {7, 6, 1}}, {F32, {1, 4, 6}, {24, 6, 1}});
  EXPECT_EQ(p.batchCount, 1);
  EXPECT_TRUE(p.outerSizes.empty());
}

TEST(MatmulPlan, LayoutsCublasCannotTakeGoToTheKernel) {
  auto none = [](const Operand& a, const Operand& b, const Operand& out) {
    sdk::StatusOr<MatmulShape> s = MatmulShape::eval(callOf(a, b, out), {});
    EXPECT_TRUE(s.isOk()) << s.status().message();
    return !planCublasLt(*s).has_value();
  };
  EXPECT_TRUE(none({F32, {8, 5}, {10, 2}}, {F32, {5, 3}, {3, 1}}, {F32, {8, 3}, {3, 1}}));  // no unit stride in a
  EXPECT_TRUE(none({F32, {8, 5}, {0, 1}}, {F32, {5, 3}, {3, 1}}, {F32, {8, 3}, {3, 1}}));   // a's rows broadcast
  EXPECT_TRUE(none({F32, {8, 0}, {0, 1}}, {F32, {0, 3}, {3, 1}}, {F32, {8, 3}, {3, 1}}));   // K = 0
  EXPECT_TRUE(none({F32, {8, 5}, {5, 1}}, {F32, {5, 3}, {3, 1}}, {F32, {8, 3}, {6, 2}}));   // strided result
}

TEST(MatmulPlan, UnalignedLargeResultsArePaddedToAnAlignedLeadingDimension) {
  constexpr uint32_t BF16 = PLUGSDK_DTYPE_BF16;
  // GPT-2's LM head: [2048, 768] x [768, 50257] -> [2048, 50257] bf16 (rows of 100514 bytes).
  const Operand head{BF16, {768, 50257}, {1, 768}};
  LtPlan p = planOf({BF16, {2048, 768}, {768, 1}}, head, {BF16, {2048, 50257}, {50257, 1}});
  EXPECT_EQ(p.D.rows, 50257u);
  EXPECT_EQ(paddedResultLd(p, 768, 2, 256, 2, 256), 50264);
  EXPECT_EQ(paddedResultLd(p, 768, 4, 256, 2, 256), 50260);  // f32: 4 elements to 16 bytes
  // Aligned rows: in place, unless the result's address itself is unaligned.
  LtPlan aligned =
      planOf({BF16, {2048, 768}, {768, 1}}, {BF16, {768, 50264}, {50264, 1}}, {BF16, {2048, 50264}, {50264, 1}});
  EXPECT_EQ(paddedResultLd(aligned, 768, 2, 256, 2, 256), 0);
  EXPECT_EQ(paddedResultLd(aligned, 768, 2, 2, 2, 256), 50264);
  // An unaligned operand too (the row-major [768, 50257] b of tools/bench_cuda_matmul.py, or an
  // operand's address): in place, the kernel is slow either way.
  LtPlan rowMajorB =
      planOf({BF16, {2048, 768}, {768, 1}}, {BF16, {768, 50257}, {50257, 1}}, {BF16, {2048, 50257}, {50257, 1}});
  EXPECT_EQ(paddedResultLd(rowMajorB, 768, 2, 256, 2, 256), 0);
  EXPECT_EQ(paddedResultLd(p, 768, 2, 256, 2, 8), 0);
  // Small products, short K and batched calls stay in place (the copy would not pay).
  EXPECT_EQ(paddedResultLd(p, 64, 2, 256, 2, 256), 0);
  LtPlan small = planOf({BF16, {8, 768}, {768, 1}}, {BF16, {768, 1001}, {1, 768}}, {BF16, {8, 1001}, {1001, 1}});
  EXPECT_EQ(paddedResultLd(small, 768, 2, 256, 2, 256), 0);
  // The model's form: a batch of 8 over which the weight is broadcast is one product of 2048 rows.
  LtPlan folded = planOf({BF16, {8, 256, 768}, {196608, 768, 1}}, {BF16, {8, 768, 50257}, {0, 1, 768}},
                         {BF16, {8, 256, 50257}, {12865792, 50257, 1}});
  EXPECT_EQ(folded.describe(), p.describe());
  EXPECT_EQ(paddedResultLd(folded, 768, 2, 256, 2, 256), 50264);
  // Padded, it runs as 50256 rows and 1 (cuBLASLt's A is b: its rows are the weight's rows,
  // columns of the storage b^T, so the second part starts 50256 storage columns in).
  p.D.ld = 50264;
  std::vector<RowPart> parts = alignedRowParts(p, 2);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].plan.describe(),
            "D[50256x2048 ld 50264] = A^T[768x50256 ld 768] B[768x2048 ld 768] (A = b, B = a)");
  EXPECT_EQ(parts[1].plan.describe(), "D[1x2048 ld 50264] = A^T[768x1 ld 768] B[768x2048 ld 768] (A = b, B = a)");
  EXPECT_EQ(parts[0].aOffset, 0);
  EXPECT_EQ(parts[1].aOffset, 50256 * 768);
  EXPECT_EQ(parts[1].dOffset, 50256);
  // An op-N A (a column-major weight) starts the second part 50256 rows down its storage.
  LtPlan colMajor =
      planOf({BF16, {50257, 768}, {1, 50257}}, {BF16, {768, 2048}, {1, 768}}, {BF16, {50257, 2048}, {1, 50257}});
  colMajor.D.ld = 50264;
  parts = alignedRowParts(colMajor, 2);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].plan.describe(), "D[1x2048 ld 50264] = A[1x768 ld 50257] B[768x2048 ld 768]");
  EXPECT_EQ(parts[1].aOffset, 50256);
  EXPECT_EQ(alignedRowParts(aligned, 2).size(), 1u);
  LtPlan batched = planOf({BF16, {2, 1024, 768}, {786432, 768, 1}}, {BF16, {2, 768, 1001}, {768768, 1, 768}},
                          {BF16, {2, 1024, 1001}, {1025024, 1001, 1}});
  EXPECT_EQ(paddedResultLd(batched, 768, 2, 256, 2, 256), 0);
}

TEST(MatmulPlan, MismatchedSizesAreAnError) {
  sdk::StatusOr<MatmulShape> s =
      MatmulShape::eval(callOf({F32, {8, 5}, {5, 1}}, {F32, {4, 3}, {3, 1}}, {F32, {8, 3}, {3, 1}}), {});
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.status().message().find("does not give the result's"), std::string::npos) << s.status().message();
}

/// The generated kernel on a transposed a, a batch with a broadcast b and an offset result,
/// run by the core's interpreter, against the product computed here. With an f32 result
/// from f16/bf16 operands (ABI 1.2), the operands hold 1 + 2^-7, whose products bf16 cannot
/// hold: the result must be the f32 accumulator, unrounded.
void checkKernel(ir::DType dt, uint32_t dtype, ir::DType outDt, uint32_t outDtype) {
  const int64_t B = 2, M = 3, K = 4, N = 5;
  Operand a{dtype, {B, M, K}, {M * K, 1, M}};          // each batch a transposed [K, M] block
  Operand b{dtype, {B, K, N}, {0, N, 1}};              // one [K, N] for both batches
  Operand out{outDtype, {B, M, N}, {M * N, N, 1}, 7};  // 7 elements in
  std::unique_ptr<BuiltKernel> built = matmulKernel(callOf(a, b, out));
  sdk::Status valid = sdk::KernelView::validate(built->kernel);
  ASSERT_TRUE(valid.isOk()) << valid.message();
  StatusOr<kernel::Kernel> k = plugin::decodeKernel(built->kernel);
  ASSERT_TRUE(k.isOk()) << k.status().message();
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> small(-3, 3);
  std::vector<double> av(B * M * K), bv(K * N);
  const bool unrounded = outDt != dt;
  for (auto* vs : {&av, &bv})
    for (double& v : *vs) {
      v = small(rng);
      if (unrounded && v > 0) v += 1.0 / 128;
    }
  exec::HostTensor at = exec::HostTensor::fromDoubles(dt, {B * M * K}, av);
  exec::HostTensor bt = exec::HostTensor::fromDoubles(dt, {K * N}, bv);
  exec::HostTensor ot(outDt, {7 + B * M * N});
  Status st = kernel::runKernel(*k, {&at, &bt, &ot}, {});
  ASSERT_TRUE(st.isOk()) << st.message() << "\n" << kernel::printKernel(*k);
  for (int64_t bi = 0; bi < B; ++bi)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double want = 0;
        for (int64_t kk = 0; kk < K; ++kk) want += av[bi * M * K + kk * M + i] * bv[kk * N + j];
        EXPECT_EQ(ot.getDouble(7 + bi * M * N + i * N + j), want) << "batch " << bi << ", [" << i << ", " << j << "]";
      }
}

TEST(MatmulKernel, ComputesTheProductThroughTheCallsStrides) {
  checkKernel(ir::DType::kF32, PLUGSDK_DTYPE_F32, ir::DType::kF32, PLUGSDK_DTYPE_F32);
  checkKernel(ir::DType::kI32, PLUGSDK_DTYPE_I32, ir::DType::kI32, PLUGSDK_DTYPE_I32);
  checkKernel(ir::DType::kBF16, PLUGSDK_DTYPE_BF16, ir::DType::kBF16, PLUGSDK_DTYPE_BF16);
  checkKernel(ir::DType::kBF16, PLUGSDK_DTYPE_BF16, ir::DType::kF32, PLUGSDK_DTYPE_F32);
  checkKernel(ir::DType::kF16, PLUGSDK_DTYPE_F16, ir::DType::kF32, PLUGSDK_DTYPE_F32);
}

// The bias conversion of a native epilogue (matmul.cc): f32 to bf16, rounded to nearest even,
// over the n elements its symbol says, and lowered to PTX.
TEST(MatmulKernel, BiasCastRoundsToTheResultsDtype) {
  std::unique_ptr<BuiltKernel> built = castKernel(PLUGSDK_DTYPE_F32, PLUGSDK_DTYPE_BF16);
  sdk::Status valid = sdk::KernelView::validate(built->kernel);
  ASSERT_TRUE(valid.isOk()) << valid.message();
  StatusOr<kernel::Kernel> k = plugin::decodeKernel(built->kernel);
  ASSERT_TRUE(k.isOk()) << k.status().message();
  const std::vector<double> in = {1.0 + 1.0 / 256, 1.0 + 3.0 / 256, -2.5, 1e-3, 7.0};
  exec::HostTensor it = exec::HostTensor::fromDoubles(ir::DType::kF32, {5}, in);
  exec::HostTensor ot(ir::DType::kBF16, {5});
  ot.setDouble(4, 42.0);  // past n = 4: untouched
  Status st = kernel::runKernel(*k, {&it, &ot}, {{"n", 4}});
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(ot.getDouble(0), 1.0);              // a tie: to even
  EXPECT_EQ(ot.getDouble(1), 1.0 + 4.0 / 256);  // a tie: to even, upward
  EXPECT_EQ(ot.getDouble(2), -2.5);
  EXPECT_NEAR(ot.getDouble(3), 1e-3, 1e-3 / 128);
  EXPECT_EQ(ot.getDouble(4), 42.0);
  sdk::StatusOr<PtxKernel> p =
      compileToPtx(built->view(), GpuArch{9, 0}, "plugsdk_bias_cast", PtxOptions{3, "", false});
  ASSERT_TRUE(p.isOk()) << p.status().message();
}

TEST(MatmulKernel, LowersToPtx) {
  for (uint32_t dtype : {PLUGSDK_DTYPE_F16, PLUGSDK_DTYPE_I64, PLUGSDK_DTYPE_F64}) {
    std::unique_ptr<BuiltKernel> built =
        matmulKernel(callOf({dtype, {64, 32}, {32, 1}}, {dtype, {32, 16}, {16, 1}}, {dtype, {64, 16}, {16, 1}}));
    sdk::StatusOr<PtxKernel> p = compileToPtx(built->view(), GpuArch{9, 0}, "plugsdk_matmul", PtxOptions{3, "", false});
    ASSERT_TRUE(p.isOk()) << p.status().message();
    // Consecutive threads take consecutive result columns (b's and the result's unit stride).
    EXPECT_EQ(p->mapping.kind, ThreadMapping::Kind::kLanesPerThread);
    EXPECT_NE(p->ptx.find("ld.global"), std::string::npos);
  }
}

// Without cuBLASLt (an explicit library that does not exist) the error names what was tried.
TEST(CublasLt, AMissingLibraryNamesWhatWasTried) {
  sdk::StatusOr<std::shared_ptr<const lt::Api>> l = lt::load("/nonexistent/libcublasLt.so.13");
  ASSERT_FALSE(l.isOk());
  EXPECT_EQ(l.status().code(), sdk::Code::kNotFound);
  EXPECT_NE(l.status().message().find("/nonexistent/libcublasLt.so.13"), std::string::npos) << l.status().message();
}

}  // namespace
}  // namespace plugsdk::cuda
