// TensorType helpers: strides, numel, printing.
#include "core/ir/tensor_type.h"

namespace plugsdk::ir {

Shape contiguousStrides(const Shape& shape) {
  Shape strides(shape.size());
  SymExpr running(1);
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = running;
    running = running * shape[i];
  }
  return strides;
}

SymExpr numelOf(const Shape& shape) {
  SymExpr n(1);
  for (const auto& d : shape) n = n * d;
  return n;
}

std::string shapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].toString();
  }
  return s + "]";
}

bool TensorType::isStatic() const {
  for (const auto& d : shape)
    if (!d.isConstant()) return false;
  return true;
}

std::optional<std::vector<int64_t>> TensorType::staticShape() const {
  std::vector<int64_t> out;
  for (const auto& d : shape) {
    auto c = d.constant();
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

std::string TensorType::toString() const {
  std::string s = std::string(dtypeName(dtype)) + shapeToString(shape);
  if (strides && *strides != contiguousStrides(shape)) s += " strides " + shapeToString(*strides);
  return s;
}

}  // namespace plugsdk::ir
