// Test helpers for the pointwise and reduction op tests: tensor construction, running one op
// on the reference executor, exact comparisons (NaN positions and signs of zero included).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/exec/reference_executor.h"
#include "core/ir/context.h"

namespace plugsdk::testing_pw {

using exec::HostTensor;
using ir::Attribute;
using ir::AttrMap;
using ir::DType;

inline const std::shared_ptr<const ir::Context>& ctx() {
  static const auto c = ir::makeDefaultContext();
  return c;
}

inline HostTensor F(DType dt, std::vector<int64_t> shape, const std::vector<double>& v) {
  return HostTensor::fromDoubles(dt, std::move(shape), v);
}
inline HostTensor D(std::vector<int64_t> shape, const std::vector<double>& v) {
  return F(DType::kF64, std::move(shape), v);
}
inline HostTensor I(DType dt, std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  return HostTensor::fromInts(dt, std::move(shape), v);
}
inline HostTensor B(std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  return I(DType::kBool, std::move(shape), v);
}

inline Attribute aI(int64_t v) { return Attribute::fromInt(v); }
inline Attribute aF(double v) { return Attribute::fromFloat(v); }
inline Attribute aB(bool v) { return Attribute::fromBool(v); }
inline Attribute aS(const std::string& v) { return Attribute::fromString(v); }
inline Attribute aT(DType v) { return Attribute::fromDType(v); }
inline Attribute aL(const std::vector<int64_t>& v) { return Attribute::fromInts(v); }

/// Runs `op` and returns all outputs (failing the test, and returning empty, on error).
inline std::vector<HostTensor> runAll(const std::string& op, const std::vector<const HostTensor*>& ins,
                                      const AttrMap& attrs = {}) {
  auto r = exec::runOp(ctx(), op, ins, attrs);
  EXPECT_TRUE(r.isOk()) << op << ": " << r.status().toString();
  if (!r.isOk()) return {};
  return *r;
}

/// Runs `op` and returns its first output.
inline HostTensor run1(const std::string& op, const std::vector<const HostTensor*>& ins, const AttrMap& attrs = {}) {
  auto outs = runAll(op, ins, attrs);
  return outs.empty() ? HostTensor(DType::kBool, {0}) : outs[0];
}

/// The error `op` reports (an ok Status fails the test).
inline Status runErr(const std::string& op, const std::vector<const HostTensor*>& ins, const AttrMap& attrs = {}) {
  auto r = exec::runOp(ctx(), op, ins, attrs);
  EXPECT_FALSE(r.isOk()) << op << " unexpectedly succeeded";
  return r.isOk() ? Status::ok() : r.status();
}

/// Checks the status is an error whose message contains every fragment.
inline void expectError(const Status& s, const std::vector<std::string>& fragments) {
  EXPECT_FALSE(s.isOk());
  for (const auto& f : fragments)
    EXPECT_NE(s.message().find(f), std::string::npos) << "'" << f << "' not in: " << s.message();
}

inline void expectType(const HostTensor& t, DType dt, const std::vector<int64_t>& shape) {
  EXPECT_EQ(t.dtype(), dt) << t.typeString();
  EXPECT_EQ(t.shape(), shape) << t.typeString();
}

/// Exact float comparison: NaN matches NaN, zeros must have the same sign.
inline void expectDoubles(const HostTensor& t, DType dt, const std::vector<int64_t>& shape,
                          const std::vector<double>& want) {
  expectType(t, dt, shape);
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    double got = t.getDouble(static_cast<int64_t>(i));
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i << ": got " << got << ", want nan";
    } else {
      EXPECT_EQ(got, want[i]) << "element " << i;
      EXPECT_EQ(std::signbit(got), std::signbit(want[i])) << "element " << i << ": sign of " << got;
    }
  }
}

/// Float comparison within 4 ulps (for transcendental results).
inline void expectNear(const HostTensor& t, DType dt, const std::vector<int64_t>& shape,
                       const std::vector<double>& want) {
  expectType(t, dt, shape);
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    double got = t.getDouble(static_cast<int64_t>(i));
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got)) << "element " << i;
    else
      EXPECT_DOUBLE_EQ(got, want[i]) << "element " << i;
  }
}

inline void expectInts(const HostTensor& t, DType dt, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& want) {
  expectType(t, dt, shape);
  EXPECT_EQ(t.ints(), want);
}

}  // namespace plugsdk::testing_pw
