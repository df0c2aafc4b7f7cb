// Index expressions simplified with their variables' ranges: floordiv and mod by a constant
// vanish where the dividend provably lies in [0, c), and nowhere else.
#include "core/sched/index_ranges.h"

#include <gtest/gtest.h>

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
