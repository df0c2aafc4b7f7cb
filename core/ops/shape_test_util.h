// Test helpers for the shape, indexing and creation op tests: building host tensors,
// running one op on the reference executor, and inferring types with symbolic shapes.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/exec/reference_executor.h"
#include "core/ir/context.h"
#include "core/ir/verifier.h"

namespace plugsdk::ops::testing {

using exec::HostTensor;
using ir::Attribute;
using ir::AttrMap;
using ir::DType;
using ir::SymExpr;

inline const std::shared_ptr<const ir::Context>& context() {
  static const std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  return ctx;
}

inline HostTensor D(DType t, std::vector<int64_t> shape, const std::vector<double>& v) {
  return HostTensor::fromDoubles(t, std::move(shape), v);
}
inline HostTensor I(DType t, std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  return HostTensor::fromInts(t, std::move(shape), v);
}
/// 0, 1, 2, ... in the given dtype and shape.
inline HostTensor iota(DType t, std::vector<int64_t> shape) {
  HostTensor h(t, std::move(shape));
  for (int64_t i = 0; i < h.numel(); ++i) h.setInt(i, i);
  return h;
}

inline Attribute A(int64_t v) { return Attribute::fromInt(v); }
inline Attribute Af(double v) { return Attribute::fromFloat(v); }
inline Attribute Ab(bool v) { return Attribute::fromBool(v); }
inline Attribute As(const std::string& v) { return Attribute::fromString(v); }
inline Attribute Al(const std::vector<int64_t>& v) { return Attribute::fromInts(v); }
inline Attribute Adt(DType t) { return Attribute::fromDType(t); }

inline StatusOr<std::vector<HostTensor>> run(const std::string& op, const std::vector<const HostTensor*>& ins,
                                             const AttrMap& attrs = {}) {
  return exec::runOp(context(), op, ins, attrs);
}

/// Runs an op expected to succeed with one output.
inline HostTensor run1(const std::string& op, const std::vector<const HostTensor*>& ins, const AttrMap& attrs = {}) {
  auto r = run(op, ins, attrs);
  EXPECT_TRUE(r.isOk()) << op << ": " << r.status().toString();
  if (!r.isOk() || r->empty()) return HostTensor();
  return (*r)[0];
}

/// The error message of a run expected to fail ("" and a test failure if it succeeded).
inline std::string runError(const std::string& op, const std::vector<const HostTensor*>& ins,
                            const AttrMap& attrs = {}) {
  auto r = run(op, ins, attrs);
  EXPECT_FALSE(r.isOk()) << op << " unexpectedly succeeded";
  return r.isOk() ? std::string() : r.status().message();
}

inline ir::TensorType T(DType t, std::vector<SymExpr> shape) {
  ir::TensorType ty;
  ty.dtype = t;
  ty.shape = std::move(shape);
  return ty;
}
inline SymExpr S(const char* name) { return SymExpr::symbol(name); }

/// Inference only (symbolic shapes allowed), with attributes normalized against the schema.
inline StatusOr<std::vector<ir::TensorType>> infer(const std::string& op, const std::vector<ir::TensorType>& ins,
                                                   const AttrMap& attrs = {}) {
  const ir::OpDef* def = context()->ops.find(op);
  if (!def) return notFound("no op " + op);
  ASSIGN_OR_RETURN(AttrMap a, ir::normalizeAttrs(def->schema, attrs, "test"));
  std::vector<const ir::TensorType*> ptrs;
  for (const auto& t : ins) ptrs.push_back(&t);
  return ir::inferTypes(*def, ptrs, a, context()->assumptions);
}

inline std::string inferError(const std::string& op, const std::vector<ir::TensorType>& ins,
                              const AttrMap& attrs = {}) {
  auto r = infer(op, ins, attrs);
  EXPECT_FALSE(r.isOk()) << op << " inference unexpectedly succeeded";
  return r.isOk() ? std::string() : r.status().message();
}

/// Builds a one-node graph whose inputs have the given (possibly symbolic) types, and runs
/// it on the reference executor with concrete inputs that bind the symbols.
inline StatusOr<std::vector<HostTensor>> runSymbolic(const std::string& op, const std::vector<ir::TensorType>& types,
                                                     const std::vector<HostTensor>& inputs, const AttrMap& attrs = {}) {
  const ir::OpDef* def = context()->ops.find(op);
  if (!def) return notFound("no op " + op);
  ir::Graph g("sym");
  std::vector<ir::Value*> ins;
  for (size_t i = 0; i < types.size(); ++i) ins.push_back(g.addInput("in" + std::to_string(i), types[i]));
  AttrMap a = attrs;
  ASSIGN_OR_RETURN(auto outTypes, ir::checkAndInfer(*context(), *def, ins, a, op));
  ir::Node* node = g.addNode(op, def, ins, a, outTypes);
  g.setOutputs(node->outputs());
  RETURN_IF_ERROR(ir::verifyGraph(*context(), g));
  return exec::ReferenceExecutor(context()).run(g, inputs);
}

inline std::string shapeOf(const ir::TensorType& t) { return ir::shapeToString(t.shape); }

/// Exact comparison of values (NaN equals NaN; -0.0 differs from 0.0).
inline void expectValues(const HostTensor& t, DType dtype, const std::vector<int64_t>& shape,
                         const std::vector<double>& want) {
  EXPECT_EQ(t.dtype(), dtype) << t.typeString();
  EXPECT_EQ(t.shape(), shape) << t.typeString();
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size())) << t.typeString();
  for (int64_t i = 0; i < t.numel(); ++i) {
    double got = t.getDouble(i), w = want[static_cast<size_t>(i)];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i << " is " << got;
    } else {
      EXPECT_EQ(got, w) << "element " << i;
      EXPECT_EQ(std::signbit(got), std::signbit(w)) << "sign of element " << i;
    }
  }
}

inline void expectInts(const HostTensor& t, DType dtype, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& want) {
  EXPECT_EQ(t.dtype(), dtype) << t.typeString();
  EXPECT_EQ(t.shape(), shape) << t.typeString();
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size())) << t.typeString();
  for (int64_t i = 0; i < t.numel(); ++i)
    EXPECT_EQ(t.ints()[static_cast<size_t>(i)], want[static_cast<size_t>(i)]) << "element " << i;
}

}  // namespace plugsdk::ops::testing

/// Expects `text` to contain `part`.
#define EXPECT_CONTAINS(text, part)                                                    \
  do {                                                                                 \
    const std::string plugsdk_text_ = (text);                                          \
    EXPECT_NE(plugsdk_text_.find(part), std::string::npos) << "in: " << plugsdk_text_; \
  } while (0)
