#include "core/guard/signature.h"

#include <algorithm>
#include <numeric>

namespace plugsdk::guard {
namespace {

/// True when every dim of size > 1 has the row-major stride of `order` (outermost first).
bool denseInOrder(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                  const std::vector<size_t>& order) {
  int64_t expected = 1;
  for (size_t k = order.size(); k-- > 0;) {
    size_t d = order[k];
    if (shape[d] > 1 && strides[d] != expected) return false;
    expected *= std::max<int64_t>(shape[d], 1);
  }
  return true;
}

std::vector<size_t> channelsLastOrder(size_t rank) {
  std::vector<size_t> order = {0};
  for (size_t d = 2; d < rank; ++d) order.push_back(d);
  order.push_back(1);
  return order;
}

}  // namespace

const char* strideClassName(StrideClass c) {
  switch (c) {
    case StrideClass::kContiguous: return "contiguous";
    case StrideClass::kChannelsLast: return "channels_last";
    case StrideClass::kStrided: return "strided";
  }
  return "?";
}

StrideClass classifyStrides(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  if (strides.empty()) return StrideClass::kContiguous;
  if (strides.size() != shape.size()) return StrideClass::kStrided;
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return StrideClass::kContiguous;
  std::vector<size_t> rowMajor(shape.size());
  std::iota(rowMajor.begin(), rowMajor.end(), size_t{0});
  if (denseInOrder(shape, strides, rowMajor)) return StrideClass::kContiguous;
  if ((shape.size() == 4 || shape.size() == 5) && denseInOrder(shape, strides, channelsLastOrder(shape.size())))
    return StrideClass::kChannelsLast;
  return StrideClass::kStrided;
}

ir::Shape channelsLastStrides(const ir::Shape& shape) {
  ir::Shape strides(shape.size(), ir::SymExpr(1));
  ir::SymExpr step(1);
  std::vector<size_t> order = channelsLastOrder(shape.size());
  for (size_t k = order.size(); k-- > 0;) {
    strides[order[k]] = step;
    step = step * shape[order[k]];
  }
  return strides;
}

std::string TensorSignature::toString() const {
  std::string s = std::string(ir::dtypeName(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  s += "] " + std::string(strideClassName(strideClass())) + " " + device;
  if (requiresGrad) s += " requires_grad";
  return s;
}

}  // namespace plugsdk::guard
