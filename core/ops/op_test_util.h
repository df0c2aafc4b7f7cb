// Helpers shared by the nn and backward op tests (core/ops/nn_*_test.cc, backward*_test.cc):
// tensor literals, attribute shorthands, a one-op runner, symbolic inference and exact value checks.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/exec/reference_executor.h"
#include "core/ir/context.h"

namespace plugsdk::optest {

using exec::HostTensor;
using ir::Attribute;
using ir::AttrMap;
using ir::DType;
using ir::SymExpr;
using ir::TensorType;

inline const std::shared_ptr<const ir::Context>& context() {
  static const std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  return ctx;
}

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline HostTensor F(std::vector<int64_t> shape, const std::vector<double>& v, DType dt = DType::kF64) {
  return HostTensor::fromDoubles(dt, std::move(shape), v);
}
inline HostTensor I(std::vector<int64_t> shape, const std::vector<int64_t>& v, DType dt = DType::kI64) {
  return HostTensor::fromInts(dt, std::move(shape), v);
}
/// 0, 1, 2, ... as doubles.
inline HostTensor iota(std::vector<int64_t> shape, DType dt = DType::kF64) {
  std::vector<double> v(static_cast<size_t>(exec::shapeNumel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return F(std::move(shape), v, dt);
}

inline Attribute ai(int64_t v) { return Attribute::fromInt(v); }
inline Attribute af(double v) { return Attribute::fromFloat(v); }
inline Attribute ab(bool v) { return Attribute::fromBool(v); }
inline Attribute astr(const std::string& v) { return Attribute::fromString(v); }
inline Attribute al(const std::vector<int64_t>& v) { return Attribute::fromInts(v); }
inline Attribute adt(DType v) { return Attribute::fromDType(v); }
/// output_mask of the backward ops that return three gradients: all of them.
inline Attribute mask3() { return al({1, 1, 1}); }

inline StatusOr<std::vector<HostTensor>> run(const std::string& op, const std::vector<const HostTensor*>& inputs,
                                             const AttrMap& attrs = {}) {
  return exec::runOp(context(), op, inputs, attrs);
}

/// Runs and returns output `i`, failing the test on an error.
inline HostTensor run1(const std::string& op, const std::vector<const HostTensor*>& inputs, const AttrMap& attrs = {},
                       size_t i = 0) {
  auto r = run(op, inputs, attrs);
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  if (!r.isOk() || r->size() <= i) return HostTensor();
  return (*r)[i];
}

/// Shape/dtype inference only (symbolic shapes allowed); inputs may be nullptr.
inline StatusOr<std::vector<TensorType>> infer(const std::string& op, const std::vector<const TensorType*>& inputs,
                                               const AttrMap& attrs = {}) {
  const ir::OpDef* def = context()->ops.find(op);
  if (!def) return notFound("no op " + op);
  ASSIGN_OR_RETURN(AttrMap a, ir::normalizeAttrs(def->schema, attrs, op));
  return ir::inferTypes(*def, inputs, a, context()->assumptions);
}

inline SymExpr sym(const char* name) { return SymExpr::symbol(name); }
inline TensorType tt(DType dt, ir::Shape shape) { return TensorType{dt, std::move(shape), std::nullopt}; }

/// Exact comparison when tol == 0 (bitwise-equal values: -0.0 differs from 0.0; NaN equals NaN),
/// else |got - want| <= tol.
inline void expectValues(const HostTensor& t, const std::vector<int64_t>& shape, const std::vector<double>& want,
                         double tol = 0) {
  ASSERT_EQ(t.shape(), shape) << t.typeString();
  ASSERT_EQ(static_cast<size_t>(t.numel()), want.size()) << t.typeString();
  for (size_t i = 0; i < want.size(); ++i) {
    double got = t.getDouble(static_cast<int64_t>(i)), w = want[i];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i << ": got " << got << ", want NaN";
    } else if (tol == 0) {
      EXPECT_EQ(got, w) << "element " << i;
      EXPECT_EQ(std::signbit(got), std::signbit(w)) << "element " << i << ": sign of " << got;
    } else {
      EXPECT_NEAR(got, w, tol) << "element " << i;
    }
  }
}

inline void expectInts(const HostTensor& t, const std::vector<int64_t>& shape, const std::vector<int64_t>& want) {
  ASSERT_EQ(t.shape(), shape) << t.typeString();
  ASSERT_EQ(static_cast<size_t>(t.numel()), want.size()) << t.typeString();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(t.getInt(static_cast<int64_t>(i)), want[i]) << "element " << i;
}

/// The call fails and its message contains every fragment.
template <typename R>
void expectError(const R& r, const std::vector<std::string>& fragments) {
  ASSERT_FALSE(r.isOk()) << "expected an error mentioning " << (fragments.empty() ? "" : fragments[0]);
  for (const auto& f : fragments)
    EXPECT_NE(r.status().message().find(f), std::string::npos)
        << "message '" << r.status().message() << "' lacks '" << f << "'";
}

/// Runs `op` and expects it to fail with a message containing `needle`.
inline void expectError(const std::string& op, const std::vector<const HostTensor*>& inputs, const AttrMap& attrs,
                        const std::string& needle) {
  expectError(run(op, inputs, attrs), {needle});
}

}  // namespace plugsdk::optest
