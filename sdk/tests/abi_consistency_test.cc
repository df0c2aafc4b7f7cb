// The C ABI numbers dtypes, status codes and elementwise ops exactly as the core does, so
// the loader converts by value. A reordering on either side fails here.
#include <gtest/gtest.h>

#include "core/ir/dtype.h"
#include "core/kernel/kernel_ir.h"
#include "core/prims/scalar_ops.h"
#include "core/support/status.h"
#include "plugsdk/plugsdk.h"

namespace {

using plugsdk::ir::DType;

TEST(AbiConsistency, DTypes) {
  EXPECT_EQ(PLUGSDK_DTYPE_BOOL, static_cast<int>(DType::kBool));
  EXPECT_EQ(PLUGSDK_DTYPE_U8, static_cast<int>(DType::kU8));
  EXPECT_EQ(PLUGSDK_DTYPE_I8, static_cast<int>(DType::kI8));
  EXPECT_EQ(PLUGSDK_DTYPE_I16, static_cast<int>(DType::kI16));
  EXPECT_EQ(PLUGSDK_DTYPE_I32, static_cast<int>(DType::kI32));
  EXPECT_EQ(PLUGSDK_DTYPE_I64, static_cast<int>(DType::kI64));
  EXPECT_EQ(PLUGSDK_DTYPE_F16, static_cast<int>(DType::kF16));
  EXPECT_EQ(PLUGSDK_DTYPE_BF16, static_cast<int>(DType::kBF16));
  EXPECT_EQ(PLUGSDK_DTYPE_F32, static_cast<int>(DType::kF32));
  EXPECT_EQ(PLUGSDK_DTYPE_F64, static_cast<int>(DType::kF64));
  EXPECT_EQ(plugsdk::ir::kNumDTypes, 10);
}

TEST(AbiConsistency, StatusCodes) {
  using plugsdk::StatusCode;
  EXPECT_EQ(PLUGSDK_CODE_OK, static_cast<int>(StatusCode::kOk));
  EXPECT_EQ(PLUGSDK_CODE_INVALID_ARGUMENT, static_cast<int>(StatusCode::kInvalidArgument));
  EXPECT_EQ(PLUGSDK_CODE_NOT_FOUND, static_cast<int>(StatusCode::kNotFound));
  EXPECT_EQ(PLUGSDK_CODE_UNIMPLEMENTED, static_cast<int>(StatusCode::kUnimplemented));
  EXPECT_EQ(PLUGSDK_CODE_FAILED_PRECONDITION, static_cast<int>(StatusCode::kFailedPrecondition));
  EXPECT_EQ(PLUGSDK_CODE_OUT_OF_RANGE, static_cast<int>(StatusCode::kOutOfRange));
  EXPECT_EQ(PLUGSDK_CODE_INTERNAL, static_cast<int>(StatusCode::kInternal));
  EXPECT_EQ(PLUGSDK_CODE_UNAVAILABLE, static_cast<int>(StatusCode::kUnavailable));
  EXPECT_EQ(PLUGSDK_CODE_RESOURCE_EXHAUSTED, static_cast<int>(StatusCode::kResourceExhausted));
}

TEST(AbiConsistency, ElementwiseOpsInTheCoreOrder) {
  const auto& ops = plugsdk::prims::allScalarOps();
  ASSERT_EQ(ops.size(), static_cast<size_t>(PLUGSDK_OP_COUNT_V1_0));
  for (size_t i = 0; i < ops.size(); ++i) EXPECT_EQ(static_cast<size_t>(ops[i].op), i) << ops[i].name;
  EXPECT_STREQ(ops[PLUGSDK_OP_ADD].name, "add");
  EXPECT_STREQ(ops[PLUGSDK_OP_ERF].name, "erf");
  EXPECT_STREQ(ops[PLUGSDK_OP_MINIMUM].name, "minimum");
  EXPECT_STREQ(ops[PLUGSDK_OP_GE].name, "ge");
  EXPECT_STREQ(ops[PLUGSDK_OP_BITWISE_NOT].name, "bitwise_not");
}

TEST(AbiConsistency, ReduceAndCombineOps) {
  using plugsdk::kernel::Combine;
  using plugsdk::kernel::ReduceOp;
  EXPECT_EQ(PLUGSDK_REDUCE_SUM, static_cast<int>(ReduceOp::kSum));
  EXPECT_EQ(PLUGSDK_REDUCE_PROD, static_cast<int>(ReduceOp::kProd));
  EXPECT_EQ(PLUGSDK_REDUCE_MAX, static_cast<int>(ReduceOp::kMax));
  EXPECT_EQ(PLUGSDK_REDUCE_MIN, static_cast<int>(ReduceOp::kMin));
  EXPECT_EQ(PLUGSDK_REDUCE_ARGMAX, static_cast<int>(ReduceOp::kArgMax));
  EXPECT_EQ(PLUGSDK_REDUCE_ARGMIN, static_cast<int>(ReduceOp::kArgMin));
  EXPECT_EQ(PLUGSDK_COMBINE_NONE, static_cast<int>(Combine::kNone));
  EXPECT_EQ(PLUGSDK_COMBINE_SUM, static_cast<int>(Combine::kSum));
  EXPECT_EQ(PLUGSDK_COMBINE_PROD, static_cast<int>(Combine::kProd));
  EXPECT_EQ(PLUGSDK_COMBINE_MAX, static_cast<int>(Combine::kMax));
  EXPECT_EQ(PLUGSDK_COMBINE_MIN, static_cast<int>(Combine::kMin));
}

}  // namespace
