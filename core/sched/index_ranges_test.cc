// Index expressions simplified with their variables' ranges: floordiv and mod by a constant
// vanish where the dividend provably lies in [0, c), and nowhere else.
#include "core/sched/index_ranges.h"

#include <gtest/gtest.h>

#include <vector>

namespace plugsdk::sched {
namespace {

using ir::SymExpr;

SymExpr var(const char* n) { return SymExpr::symbol(n); }

TEST(IndexRanges, DivisionsByTheExtentVanish) {
  const std::map<std::string, int64_t> ext{{"r0", 768}, {"i0", 8}, {"i1", 256}};
  const SymExpr r0 = var("r0"), i0 = var("i0"), i1 = var("i1");
  // A reshape's delinearization of (256 i0 + i1) * 768 + r0 in rows of 768.
  const SymExpr linear = (SymExpr(256) * i0 + i1) * SymExpr(768) + r0;
  EXPECT_EQ(simplifyInRanges(SymExpr::floorDiv(linear, SymExpr(768)), ext), SymExpr(256) * i0 + i1);
  EXPECT_EQ(simplifyInRanges(SymExpr::mod(linear, SymExpr(768)), ext), r0);
  EXPECT_EQ(simplifyInRanges(SymExpr::mod(r0, SymExpr(768)) + SymExpr(768) * var("%4"), ext),
            r0 + SymExpr(768) * var("%4"));
  // Nested: (r0 % 768) // 1024 is 0 too.
  EXPECT_EQ(simplifyInRanges(SymExpr::floorDiv(SymExpr::mod(r0, SymExpr(768)), SymExpr(1024)), ext), SymExpr(0));
}

TEST(IndexRanges, WhatIsNotProvedStays) {
  const std::map<std::string, int64_t> ext{{"r0", 768}, {"i1", 256}};
  for (const SymExpr& e : {SymExpr::mod(var("r0"), SymExpr(512)),                    // r0 reaches 767
                           SymExpr::floorDiv(var("r0") + SymExpr(1), SymExpr(768)),  // reaches 768
                           SymExpr::mod(var("r0") - SymExpr(1), SymExpr(768)),       // -1 at r0 = 0
                           SymExpr::mod(var("s0"), SymExpr(4)),                      // a size: unbounded
                           SymExpr::mod(var("r0"), var("s0")),                       // symbolic divisor
                           SymExpr::floorDiv(var("%3"), SymExpr(2))})                // a loaded value
    EXPECT_EQ(simplifyInRanges(e, ext), e) << e.toString();
}

// im2col's gathers: a flattened index divided by a row of rows, and a delinearization read
// back in order.
TEST(IndexRanges, DivisionsOfAFlattenedIndexByARowOfRows) {
  const std::map<std::string, int64_t> ext{{"i2", 196}, {"i3", 144}};
  const SymExpr i2 = var("i2"), i3 = var("i3");
  const SymExpr flat = SymExpr(144) * i2 + i3;
  EXPECT_EQ(simplifyInRanges(SymExpr::floorDiv(flat, SymExpr(2016)), ext), SymExpr::floorDiv(i2, SymExpr(14)));
  EXPECT_EQ(simplifyInRanges(SymExpr::mod(flat, SymExpr(2016)), ext),
            SymExpr(144) * SymExpr::mod(i2, SymExpr(14)) + i3);
  EXPECT_EQ(
      simplifyInRanges(
          SymExpr(28) * SymExpr::floorDiv(i3, SymExpr(28)) + SymExpr::mod(i3, SymExpr(28)) + SymExpr(5) * i2, ext),
      i3 + SymExpr(5) * i2);
  // 3 * (3 * (x // 3)) + 3 * (x % 3) is 3x, for any x (a loaded value too).
  const SymExpr x = var("%7");
  EXPECT_EQ(
      simplifyInRanges(SymExpr(9) * SymExpr::floorDiv(x, SymExpr(3)) + SymExpr(3) * SymExpr::mod(x, SymExpr(3)), ext),
      SymExpr(3) * x);
  // A remainder that can reach the factor stays: (144 i2 + i3 + 1) // 2016.
  const SymExpr over = SymExpr::floorDiv(flat + SymExpr(1), SymExpr(2016));
  EXPECT_EQ(simplifyInRanges(over, ext), over);
}

// Every rewrite is an identity: random expressions of the shapes reshapes and windows make,
// evaluated at random points of their variables' ranges, before and after.
TEST(IndexRanges, RewritesKeepTheValueEverywhere) {
  const std::map<std::string, int64_t> ext{{"i0", 5}, {"i1", 12}, {"i2", 196}, {"r0", 9}};
  const std::vector<std::string> vars{"i0", "i1", "i2", "r0"};
  uint64_t state = 12345;
  auto next = [&](int64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(n));
  };
  auto randomLinear = [&] {
    SymExpr e(next(5) - 2);
    for (const std::string& v : vars)
      if (next(2)) e = e + SymExpr(next(3) == 0 ? next(300) + 1 : (next(4) + 1) * 12) * var(v.c_str());
    return e;
  };
  const int64_t divisors[] = {2, 3, 7, 12, 14, 28, 144, 196, 2016, 2352};
  int changed = 0;
  for (int round = 0; round < 3000; ++round) {
    const SymExpr inner = randomLinear();
    const int64_t c = divisors[next(10)], d = divisors[next(10)];
    SymExpr e = next(2) ? SymExpr::floorDiv(inner, SymExpr(c)) : SymExpr::mod(inner, SymExpr(c));
    if (next(2)) e = SymExpr(next(50) + 1) * SymExpr::mod(SymExpr::floorDiv(inner, SymExpr(d)), SymExpr(c)) + e;
    if (next(3) == 0) e = e + SymExpr(c) * SymExpr::floorDiv(inner, SymExpr(c)) + SymExpr::mod(inner, SymExpr(c));
    const SymExpr s = simplifyInRanges(e, ext);
    changed += s != e;
    for (int p = 0; p < 20; ++p) {
      std::map<std::string, int64_t> at;
      for (const auto& [v, n] : ext) at[v] = next(n);
      ASSERT_EQ(s.evaluate(at), e.evaluate(at)) << e.toString() << " -> " << s.toString();
    }
  }
  EXPECT_GT(changed, 300) << "the rules should fire on many of these";
}

TEST(IndexRanges, AKernelsLoopVariablesTakeTheirLoopsExtents) {
  kernel::Kernel k;
  k.grid = {SymExpr(4)};
  kernel::Stmt load;
  load.kind = kernel::StmtKind::kLoad;
  load.index = SymExpr(768) * var("i0") + SymExpr::mod(var("r0"), SymExpr(768));
  kernel::Stmt loop;
  loop.kind = kernel::StmtKind::kLoop;
  loop.loopSizes = {SymExpr(768)};
  loop.body = {load};
  kernel::Stmt outside = load;  // r0 outside any loop: no range, left alone
  k.body = {loop, outside};
  simplifyKernelIndices(k);
  EXPECT_EQ(k.body[0].body[0].index, SymExpr(768) * var("i0") + var("r0"));
  EXPECT_EQ(k.body[1].index, outside.index);
  // A symbolic loop extent proves nothing.
  k.body = {loop};
  k.body[0].loopSizes = {var("s0")};
  simplifyKernelIndices(k);
  EXPECT_EQ(k.body[0].body[0].index, load.index);
}

}  // namespace
}  // namespace plugsdk::sched
