// prims.sdpa's call as the cuda plugin takes it, without a GPU: the forms it claims through
// ABI 1.7 (f16/bf16, no mask, no dropout) are accepted with their attributes, and a call of
// another form -- which the core never sends it -- is refused naming what it does not take.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/cuda/library/sdpa.h"

namespace plugsdk::cuda {
namespace {

struct Operand {
  uint32_t dtype;  ///< UINT32_MAX: an absent optional input
  std::vector<int64_t> sizes;
};

/// compile_library's call: q, k, v, mask (inputs), result and logsumexp (outputs), row-major.
struct Call {
  std::vector<plugsdk_index_insn_t> pool;
  std::vector<plugsdk_tensor_desc_t> descs;
  std::vector<std::vector<plugsdk_index_expr_t>> exprs;
  std::string attrs;
  plugsdk_library_op_t op = PLUGSDK_LIBRARY_SDPA;
  size_t numInputs = 4;
  sdk::StatusOr<SdpaCall> make(const std::vector<Operand>& ops) {
    exprs.reserve(ops.size());
    for (const Operand& o : ops) {
      std::vector<plugsdk_index_expr_t> e;
      auto expr = [&](int64_t v) {
        pool.push_back(plugsdk_index_insn_t{PLUGSDK_INDEX_CONST, 0, v});
        return plugsdk_index_expr_t{static_cast<uint32_t>(pool.size() - 1), 1};
      };
      int64_t stride = 1;
      std::vector<int64_t> strides(o.sizes.size());
      for (size_t i = o.sizes.size(); i-- > 0;) strides[i] = stride, stride *= o.sizes[i];
      for (int64_t s : o.sizes) e.push_back(expr(s));
      for (int64_t s : strides) e.push_back(expr(s));
      e.push_back(expr(0));
      exprs.push_back(e);
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      plugsdk_tensor_desc_t d{};
      d.dtype = ops[i].dtype;
      d.rank = static_cast<uint32_t>(ops[i].sizes.size());
      d.sizes = exprs[i].data();
      d.strides = exprs[i].data() + d.rank;
      d.offset = exprs[i][2 * d.rank];
      descs.push_back(d);
    }
    sdk::LibraryCall c{};
    c.op = op;
    c.attributes = attrs;
    c.inputs = sdk::Span<const plugsdk_tensor_desc_t>(descs.data(), numInputs);
    c.outputs = sdk::Span<const plugsdk_tensor_desc_t>(descs.data() + numInputs, descs.size() - numInputs);
    c.indexPool = sdk::Span<const plugsdk_index_insn_t>(pool.data(), pool.size());
    return SdpaCall::from(c);
  }
};

constexpr uint32_t BF16 = PLUGSDK_DTYPE_BF16, F32 = PLUGSDK_DTYPE_F32, BOOL = PLUGSDK_DTYPE_BOOL, NONE = UINT32_MAX;

std::vector<Operand> attention(uint32_t t, uint32_t mask = NONE) {
  return {{t, {2, 4, 16, 64}}, {t, {2, 4, 24, 64}},
          {t, {2, 4, 24, 32}}, {mask, mask == NONE ? std::vector<int64_t>{} : std::vector<int64_t>{2, 4, 16, 24}},
          {t, {2, 4, 16, 32}}, {F32, {2, 4, 16}}};
}

TEST(SdpaCall, TheClaimedFormKeepsItsAttributes) {
  Call c;
  c.attrs = "dropout_p = 0.0, is_causal = true, scale = 0.125, seed = 0";
  sdk::StatusOr<SdpaCall> a = c.make(attention(BF16));
  ASSERT_TRUE(a.isOk()) << a.status().message();
  EXPECT_TRUE(a->causal);
  ASSERT_TRUE(a->scale.has_value());
  EXPECT_EQ(*a->scale, 0.125);
  ASSERT_EQ(a->operands.size(), 5u);
  EXPECT_EQ(a->operands[2].sizes.size(), 4u);  // the value's
  EXPECT_FALSE(a->backward);
  Call d;
  d.attrs = "dropout_p = 0.0, is_causal = false, scale = none, seed = 0";
  sdk::StatusOr<SdpaCall> b = d.make(attention(PLUGSDK_DTYPE_F16));
  ASSERT_TRUE(b.isOk()) << b.status().message();
  EXPECT_FALSE(b->causal);
  EXPECT_FALSE(b->scale.has_value());  // 1 / sqrt(E) at the launch
}

/// prims.sdpa_backward's call (ABI 1.8): grad_out, q, k, v, out, logsumexp, mask; dq, dk, dv.
std::vector<Operand> attentionBackward(uint32_t t, uint32_t lse = F32, uint32_t mask = NONE) {
  return {{t, {2, 4, 16, 32}},
          {t, {2, 4, 16, 64}},
          {t, {2, 4, 24, 64}},
          {t, {2, 4, 24, 32}},
          {t, {2, 4, 16, 32}},
          {lse, {2, 4, 16}},
          {mask, mask == NONE ? std::vector<int64_t>{} : std::vector<int64_t>{2, 4, 16, 24}},
          {t, {2, 4, 16, 64}},
          {t, {2, 4, 24, 64}},
          {t, {2, 4, 24, 32}}};
}

TEST(SdpaCall, TheBackwardTakesItsNineOperandsInSlotOrder) {
  Call c;
  c.op = PLUGSDK_LIBRARY_SDPA_BACKWARD;
  c.numInputs = 7;
  c.attrs = "dropout_p = 0.0, is_causal = true, scale = none, seed = 0";
  sdk::StatusOr<SdpaCall> a = c.make(attentionBackward(BF16));
  ASSERT_TRUE(a.isOk()) << a.status().message();
  EXPECT_TRUE(a->backward);
  EXPECT_TRUE(a->causal);
  ASSERT_EQ(a->operands.size(), 9u);
  ASSERT_EQ(a->slots().size(), 9u);
  // The slots name their launch buffers: the mask's (6) is skipped, dq is buffer 7.
  EXPECT_STREQ(a->slots()[5].name, "logsumexp");
  EXPECT_EQ(a->slots()[6].buffer, 7u);
  EXPECT_EQ(a->operands[5].dtype, F32);
  EXPECT_EQ(a->operands[5].sizes.size(), 3u);
  for (const auto& [ops, says] :
       std::vector<std::pair<std::vector<Operand>, std::string>>{{attentionBackward(BF16, F32, BOOL), "attn_mask"},
                                                                 {attentionBackward(BF16, BF16), "logsumexp has dtype"},
                                                                 {attentionBackward(F32), "f16 and bf16"}}) {
    Call d;
    d.op = PLUGSDK_LIBRARY_SDPA_BACKWARD;
    d.numInputs = 7;
    d.attrs = c.attrs;
    sdk::StatusOr<SdpaCall> b = d.make(ops);
    ASSERT_FALSE(b.isOk()) << says;
    EXPECT_EQ(b.status().code(), sdk::Code::kUnimplemented) << b.status().message();
    EXPECT_NE(b.status().message().find(says), std::string::npos) << b.status().message();
  }
}

TEST(SdpaCall, OtherFormsAreRefusedNamingWhatIsNotTaken) {
  struct Bad {
    std::vector<Operand> ops;
    std::string attrs, says;
    sdk::Code code;
  };
  const std::string plain = "dropout_p = 0.0, is_causal = false, scale = none, seed = 0";
  const std::vector<Bad> bad = {
      {attention(BF16, BOOL), plain, "attn_mask", sdk::Code::kUnimplemented},
      {attention(BF16, BF16), plain, "attn_mask", sdk::Code::kUnimplemented},
      {attention(BF16), "dropout_p = 0.25, is_causal = false, scale = none, seed = 7", "dropout",
       sdk::Code::kUnimplemented},
      {attention(F32), plain, "f16 and bf16", sdk::Code::kUnimplemented},
      {{{BF16, {2, 16, 64}},
        {BF16, {2, 4, 24, 64}},
        {BF16, {2, 4, 24, 32}},
        {NONE, {}},
        {BF16, {2, 4, 16, 32}},
        {F32, {2, 4, 16}}},
       plain,
       "rank",
       sdk::Code::kInvalidArgument},
  };
  for (const Bad& b : bad) {
    Call c;
    c.attrs = b.attrs;
    sdk::StatusOr<SdpaCall> a = c.make(b.ops);
    ASSERT_FALSE(a.isOk()) << b.says;
    EXPECT_EQ(a.status().code(), b.code) << a.status().message();
    EXPECT_NE(a.status().message().find(b.says), std::string::npos) << a.status().message();
  }
}

}  // namespace
}  // namespace plugsdk::cuda
