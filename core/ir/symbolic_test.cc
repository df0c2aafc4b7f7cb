// Tests for SymExpr canonical forms, simplification and reasoning.
#include "core/ir/symbolic.h"

#include <gtest/gtest.h>

namespace plugsdk::ir {
namespace {

SymExpr S(const char* n) { return SymExpr::symbol(n); }

TEST(SymExpr, CanonicalFormMakesEqualExpressionsEqual) {
  SymExpr a = S("s0") * 2 + S("s1") + 3;
  SymExpr b = SymExpr(3) + S("s1") + S("s0") + S("s0");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.toString(), "2*s0+s1+3");
  EXPECT_NE(a, b + 1);
  EXPECT_TRUE((S("s0") - S("s0")).isZero());
  EXPECT_EQ((S("s0") + 1) * (S("s0") - 1), S("s0") * S("s0") - 1);
}

TEST(SymExpr, FloorDivAndModSimplify) {
  EXPECT_EQ(SymExpr::floorDiv(S("s0") * 4, 2), S("s0") * 2);
  EXPECT_EQ(SymExpr::mod(S("s0") * 4, 2), SymExpr(0));
  EXPECT_EQ(SymExpr::floorDiv(S("s0") * 4 + 3, 2), S("s0") * 2 + 1);
  EXPECT_EQ(SymExpr::floorDiv(SymExpr(-7), 2), SymExpr(-4));  // floor, as Python
  EXPECT_EQ(SymExpr::mod(SymExpr(-7), 2), SymExpr(1));
  EXPECT_EQ(SymExpr::floorDiv(S("s0") * S("s1"), S("s1")), S("s0"));
  EXPECT_EQ(SymExpr::floorDiv(S("s0") + 1, 2).toString(), "(s0+1)//2");
  // Nested divisions by positive constants merge (two stride-2 pools over one size).
  EXPECT_EQ(SymExpr::floorDiv(SymExpr::floorDiv(S("s2") - 1, 2), 2), SymExpr::floorDiv(S("s2") - 1, 4));
  auto floorDivInt = [](int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); };
  for (int64_t x : {-9, -7, -1, 0, 1, 5, 6, 7, 8, 9})
    EXPECT_EQ(SymExpr::floorDiv(SymExpr::floorDiv(S("s0"), 3), 2).evaluate({{"s0", x}}),
              floorDivInt(floorDivInt(x, 3), 2))
        << "x = " << x;
  EXPECT_EQ((SymExpr::floorDiv(S("s0"), 2) * 3).toString(), "3*(s0//2)");
  EXPECT_EQ(SymExpr::mod(S("s0") + 4, 4), SymExpr::mod(S("s0"), 4));
}

TEST(SymExpr, EvaluateAndSubstitute) {
  SymExpr e = SymExpr::floorDiv(S("s0") + 1, 2) * S("s1") + SymExpr::mod(S("s0"), 3);
  EXPECT_EQ(e.evaluate({{"s0", 7}, {"s1", 5}}), 4 * 5 + 1);
  EXPECT_FALSE(e.evaluate({{"s0", 7}}).has_value());
  EXPECT_EQ(e.substitute({{"s0", SymExpr(7)}, {"s1", SymExpr(5)}}), SymExpr(21));
  EXPECT_EQ(e.symbols(), (std::vector<std::string>{"s0", "s1"}));
}

TEST(SymExpr, ProvesInequalitiesUnderSizeAssumptions) {
  SymAssumptions as;  // symbols >= 1
  EXPECT_EQ(proveGE(S("s0") * 2, S("s0"), as), true);
  EXPECT_EQ(proveGE(S("s0"), SymExpr(1), as), true);
  EXPECT_EQ(proveGE(S("s0"), SymExpr(2), as), std::nullopt);
  EXPECT_EQ(proveGE(S("s0"), S("s0") + 1, as), false);
  EXPECT_EQ(proveEQ(S("s0") + 1, S("s0"), as), false);
  EXPECT_EQ(proveEQ(S("s0"), S("s1"), as), std::nullopt);
  EXPECT_EQ(proveEQ(S("s0") * S("s1") + 1, S("s0"), as), false);  // s0*s1 + 1 > s0
  EXPECT_EQ(proveGE(SymExpr::floorDiv(S("s0"), 2), SymExpr(0), as), true);
}

}  // namespace
}  // namespace plugsdk::ir
