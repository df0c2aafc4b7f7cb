// A gather computed under a mask (inside a pad, as a convolution's padded window reads a
// max-pool's values gathered at its indices) checks its index only where the mask holds:
// masked-off loads read 0, and an index computed from that 0 is never used.
#include <gtest/gtest.h>

#include "core/sched/interpreter.h"
#include "core/sched/schedule.h"
#include "core/text/parser.h"

namespace plugsdk::sched {
namespace {

// The index i - 1 is in range for every i in [1, 6]; where the pad masks the load of i off,
// it would be -1.
const char* kPaddedGather = R"(graph @g(%x: f64[6], %i: i64[4]) {
  %one = prims.full() {dtype = i64, shape = [4], value = 1}
  %j = prims.sub(%i, %one)
  %y = prims.gather(%x, %j) {dim = 0}
  %z = prims.pad(%y) {high = [2], interior = [0], low = [1], padding_value = 0.5}
  return %z
})";

TEST(MaskedGather, ChecksItsIndexOnlyWhereTheMaskHolds) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kPaddedGather);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto p = schedule(*ctx, *g, ScheduleOptions{});
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  ASSERT_EQ(p->numLaunches(), 1) << "the gather is computed inside the pad's kernel\n" << printProgram(*p);

  exec::HostTensor x(ir::DType::kF64, {6}), i(ir::DType::kI64, {4});
  for (int64_t k = 0; k < 6; ++k) x.setDouble(k, 10.0 + static_cast<double>(k));
  const int64_t idx[4] = {6, 1, 3, 6};
  for (int64_t k = 0; k < 4; ++k) i.setDouble(k, static_cast<double>(idx[k]));
  auto out = ProgramInterpreter(ctx).run(*p, {x, i});
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  const double want[7] = {0.5, 15.0, 10.0, 12.0, 15.0, 0.5, 0.5};
  ASSERT_EQ((*out)[0].numel(), 7);
  for (int64_t k = 0; k < 7; ++k) EXPECT_EQ((*out)[0].getDouble(k), want[k]) << "element " << k;

  // An index really out of range still fails, naming the gather.
  i.setDouble(2, 0.0);
  auto bad = ProgramInterpreter(ctx).run(*p, {x, i});
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().toString().find("out of range [0, 6)"), std::string::npos) << bad.status().toString();
}

}  // namespace
}  // namespace plugsdk::sched
