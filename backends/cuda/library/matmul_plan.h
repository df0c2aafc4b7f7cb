// prims.matmul on the GPU: the call's strided descriptors (copied from compile_library),
// their values at a launch, and how cuBLASLt computes them. cuBLASLt is column-major: a
// row-major result C = A B is computed as C^T = B^T A^T, each operand passed as its storage
// (column-major as is, or the storage of its transpose) with a transpose flag. Pure logic,
// tested without a GPU (tests/matmul_plan_test.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plugsdk/plugsdk.hpp"

namespace plugsdk::cuda {

/// One operand's descriptor, owning its expressions' ranges (into MatmulCall::pool).
struct OperandDesc {
  uint32_t dtype = 0;
  std::vector<plugsdk_index_expr_t> sizes, strides;
  plugsdk_index_expr_t offset{};
};

/// A copy of a borrowed descriptor (its expressions index the call's pool).
OperandDesc copyOperand(const plugsdk_tensor_desc_t& d);

/// A copy of what compile_library borrowed: the operands a [..., M, K], b [..., K, N] and
/// the result [..., M, N], their index pool and the symbols their expressions read.
struct MatmulCall {
  std::vector<plugsdk_index_insn_t> pool;
  std::vector<std::string> symbols;
  OperandDesc a, b, out;
  /// Checks the ranks (equal, >= 2) and copies; INVALID_ARGUMENT / UNIMPLEMENTED naming the problem.
  static sdk::StatusOr<MatmulCall> from(const sdk::LibraryCall& c);
};

/// The descriptors' values at one launch.
struct MatmulShape {
  std::vector<int64_t> batch;                     ///< the result's batch sizes
  std::vector<int64_t> aBatch, bBatch, outBatch;  ///< each operand's stride per batch dim
  int64_t m = 0, n = 0, k = 0;
  int64_t aM = 0, aK = 0, bK = 0, bN = 0, outM = 0, outN = 0;  ///< strides (elements)
  int64_t aOffset = 0, bOffset = 0, outOffset = 0;
  /// Evaluates every expression over `symbols` (in MatmulCall::symbols order); an error
  /// names the operand and dim. The batch and matrix sizes of a and b must be the result's.
  static sdk::StatusOr<MatmulShape> eval(const MatmulCall& c, sdk::Span<const int64_t> symbols);
};

/// A matrix as cuBLASLt reads it: column-major storage rows x cols with leading dim `ld`,
/// used as is (op N) or transposed (op T).
struct LtMatrix {
  int32_t op = 0;  ///< lt::kOpN or lt::kOpT
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
};

/// One cuBLASLt call per point of the outer batch dims: D (m x n) = op(A) op(B), batched
/// over the innermost (flattened) batch dim with the given strides; the outer dims (which
/// do not flatten) are looped over by the host.
struct LtPlan {
  LtMatrix A, B, D;
  bool swapped = false;  ///< A is the call's b (the row-major case: D = C^T = b^T a^T)
  int32_t batchCount = 1;
  int64_t aStride = 0, bStride = 0, dStride = 0;  ///< of cuBLASLt's A, B, D
  std::vector<int64_t> outerSizes;                ///< the host's loops, outermost first
  std::vector<int64_t> outerA, outerB, outerD;    ///< their strides (elements)
  std::string describe() const;                   ///< "D = A^T B, m n k, batch ..." for logs and tests
};

/// The plan, or nullopt when cuBLASLt cannot take the layout (no unit stride in a matrix,
/// overlapping rows, a zero size, a batch or dim past 2^31): the generated kernel runs it.
std::optional<LtPlan> planCublasLt(const MatmulShape& s);

/// The leading dimension of a temporary result for `p`, or 0 to write the result in place.
/// cuBLASLt's fast kernels need 16-byte aligned columns of D; a result whose columns are not
/// (`ld * elementBytes` not a multiple of 16, or its address `alignD` below 16: GPT-2's
/// logits [2048, 50257] in bf16) gets a slow kernel (7x, measured). A large unbatched product
/// (k >= 256, at least 2^20 results) is then computed into D padded to an aligned ld and
/// copied into place (one pass over the result). Not when an operand is unaligned too (its
/// ld * `operandBytes` or the lower of the operands' addresses' alignments, `alignOperands`):
/// the kernel is then a slow one either way, and the copy only adds to it ([2048, 768] x a
/// row-major [768, 50257] on the H100: 1.421 ms padded, 1.218 in place).
int64_t paddedResultLd(const LtPlan& p, int64_t k, uint64_t elementBytes, uint32_t alignD, uint64_t operandBytes,
                       uint32_t alignOperands);

/// One of the products a padded plan is run as: its plan and where its A and D start
/// (elements past the whole plan's).
struct RowPart {
  LtPlan plan;
  int64_t aOffset = 0, dOffset = 0;
};

/// A padded plan (D.ld aligned) as the products cuBLASLt runs fast: D's rows (the result's
/// columns in the row-major case) up to a multiple of 16 bytes, then the few left (GPT-2's
/// 50257 = 50256 + 1: cuBLASLt still picks the sm75 kernel for 50257 rows with every ld
/// aligned). One part when the rows are aligned or fewer than that.
std::vector<RowPart> alignedRowParts(const LtPlan& p, uint64_t elementBytes);

}  // namespace plugsdk::cuda
