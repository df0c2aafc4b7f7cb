// The ABI kernel encoding round-trips every kind of statement the scheduler emits, and a
// malformed encoding is an error, not a crash.
#include "core/plugin/kernel_encoding.h"

#include <gtest/gtest.h>

#include "core/compile/pipeline.h"
#include "core/kernel/kernel_text.h"
#include "core/text/parser.h"

namespace plugsdk::plugin {
namespace {

// Softmax (loops, reduce), pad + cat (masked loads, selects), gather (indirect index, check),
// scatter (combining store), rand, casts and a symbolic size.
const char* kGraph = R"(graph @mix(%x: f32[s0, 16], %i: i64[s0, 4], %y: f32[4, 16], %t: i64[2, 16]) {
  %sm = aten._softmax(%x) {dim = 1, half_to_float = false}
  %p = aten.constant_pad_nd(%sm) {pad = [1, 1], value = 0.5}
  %g = aten.gather(%x, %i) {dim = 1}
  %c = aten.cat(%x, %x) {dim = 1}
  %s = aten.scatter_add(%y, %t, %y) {dim = 0}
  %d, %m = aten.native_dropout(%x) {p = 0.25, train = true, seed = 3}
  %h = aten._to_copy(%g) {dtype = f16}
  return %p, %h, %c, %s, %d
})";

TEST(KernelEncoding, EveryScheduledKernelRoundTrips) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kGraph);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto c = compile::compileGraph(*ctx, *g, {});
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  ASSERT_GE(c->program.kernels.size(), 3u);
  int loops = 0, checks = 0, masked = 0;
  for (const kernel::Kernel& k : c->program.kernels) {
    auto enc = encodeKernel(k);
    ASSERT_TRUE(enc.isOk()) << enc.status().toString();
    const plugsdk_kernel_t& e = (*enc)->get();
    EXPECT_EQ(std::string(e.text), kernel::printKernel(k));
    for (size_t i = 0; i < e.num_stmts; ++i) {
      loops += e.stmts[i].kind == PLUGSDK_STMT_LOOP;
      checks += e.stmts[i].kind == PLUGSDK_STMT_CHECK;
      masked += e.stmts[i].kind == PLUGSDK_STMT_LOAD && e.stmts[i].num_operands == 1;
    }
    auto back = decodeKernel(e);
    ASSERT_TRUE(back.isOk()) << back.status().toString();
    std::string why;
    EXPECT_TRUE(kernel::kernelsEqual(k, *back, &why)) << k.name << ": " << why << "\n" << kernel::printKernel(*back);
  }
  EXPECT_GT(loops, 0);
  EXPECT_GT(checks, 0);
  EXPECT_GT(masked, 0);
}

TEST(KernelEncoding, MalformedEncodingsAreErrors) {
  auto k = kernel::parseKernel(R"(kernel @k(%x: f32 in, %y: f32 out) grid [s0] {
  %0 = load %x[2*i0+1] : f32
  store %y[i0], %0
})");
  ASSERT_TRUE(k.isOk());
  auto enc = encodeKernel(*k);
  ASSERT_TRUE(enc.isOk());
  plugsdk_kernel_t bad = (*enc)->get();
  bad.struct_size = 8;
  EXPECT_NE(decodeKernel(bad).status().message().find("too small"), std::string::npos);
  bad = (*enc)->get();
  std::vector<plugsdk_index_insn_t> insns(bad.index_insns, bad.index_insns + bad.num_index_insns);
  insns[0].op = PLUGSDK_INDEX_ADD;  // the first program now pops an empty stack
  bad.index_insns = insns.data();
  EXPECT_NE(decodeKernel(bad).status().message().find("underflows"), std::string::npos);
  bad = (*enc)->get();
  bad.num_index_insns = 1;  // expressions reach past the pool
  EXPECT_FALSE(decodeKernel(bad).isOk());
}

}  // namespace
}  // namespace plugsdk::plugin
