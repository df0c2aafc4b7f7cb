// Helpers for the pointwise and reduction reference kernels: loading elements converted to a
// compute dtype as PyTorch casts them, wrapping integer arithmetic, and strided iteration.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/exec/host_tensor.h"
#include "core/exec/reference_executor.h"
#include "core/ir/attribute.h"
#include "core/ir/shape_rules.h"

namespace plugsdk::exec::pw {

/// PyTorch's CPU float -> integer cast: truncation toward zero; i64 and u8 go through int64
/// (out of range or NaN: INT64_MIN, then wrapped), i8/i16/i32 through int32 (INT32_MIN), bool is v != 0.
inline int64_t floatToInt(double v, DType to) { return doubleToIntType(v, to); }

/// Element i of `t` cast to the floating dtype `to` (rounded to its precision; values stay doubles).
inline double loadFloat(const HostTensor& t, int64_t i, DType to) {
  double v = t.getDouble(i);
  return t.dtype() == to ? v : roundToFloatType(v, to);
}

/// Element i of `t` cast to the integral dtype `to` (floats truncate, integers wrap).
inline int64_t loadInt(const HostTensor& t, int64_t i, DType to) {
  if (t.isFloating()) return floatToInt(t.doubles()[static_cast<size_t>(i)], to);
  int64_t v = t.ints()[static_cast<size_t>(i)];
  return t.dtype() == to ? v : wrapToIntType(v, to);
}

/// Two's complement arithmetic on int64 without undefined behaviour.
inline int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t wrapNeg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }

/// A Scalar attribute as an integer (bool 0/1, floats truncated).
inline int64_t scalarInt(const ir::Attribute& a) {
  if (auto b = a.asBool()) return *b ? 1 : 0;
  if (a.kind() == ir::Attribute::Kind::kInt) return *a.asInt();
  return doubleToIntType(a.asDouble().value_or(0.0), DType::kI64);
}

/// A Scalar attribute as a double (bool 0/1).
inline double scalarDouble(const ir::Attribute& a) {
  if (auto b = a.asBool()) return *b ? 1.0 : 0.0;
  return a.asDouble().value_or(0.0);
}

/// The precision PyTorch uses for scalars in arithmetic on `compute` (f32 for the 16-bit floats).
inline DType opmathType(DType compute) {
  return compute == DType::kF16 || compute == DType::kBF16 ? DType::kF32 : compute;
}

/// A Scalar attribute as a 0-dim tensor: bool, i64 or f64.
inline HostTensor scalarTensor(const ir::Attribute& a) {
  if (auto b = a.asBool()) return HostTensor::fromInts(DType::kBool, {}, {*b ? 1 : 0});
  if (a.kind() == ir::Attribute::Kind::kInt) return HostTensor::fromInts(DType::kI64, {}, {*a.asInt()});
  return HostTensor::fromDoubles(DType::kF64, {}, {a.asDouble().value_or(0.0)});
}

/// torch.result_type over concrete tensors and Scalar attributes (as inference computes it).
inline DType resultTypeOf(const std::vector<const HostTensor*>& tensors,
                          const std::vector<const ir::Attribute*>& scalars) {
  std::vector<ir::TensorType> types;
  types.reserve(tensors.size());
  for (const HostTensor* t : tensors) {
    ir::TensorType tt;
    tt.dtype = t->dtype();
    for (int64_t d : t->shape()) tt.shape.push_back(ir::SymExpr(d));
    types.push_back(std::move(tt));
  }
  std::vector<ir::PromotionOperand> ops;
  for (const auto& t : types) ops.push_back({&t, nullptr});
  for (const ir::Attribute* s : scalars) ops.push_back({nullptr, s});
  return ir::resultType(ops);
}

/// Row-major strides of `t` read as broadcast to `outShape` (0 on broadcast dims).
inline std::vector<int64_t> stridesFor(const HostTensor& t, const std::vector<int64_t>& outShape) {
  std::vector<int64_t> out(outShape.size(), 0);
  std::vector<int64_t> s = t.strides();
  size_t off = outShape.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i) out[off + i] = t.shape()[i] == 1 ? 0 : s[i];
  return out;
}

/// Calls f(linear, offsets) for every index of `shape` in row-major order, where offsets[k] is
/// the index dotted with strides[k]; offsets are updated incrementally (O(1) per element).
template <size_t N, typename F>
void forEachStrided(const std::vector<int64_t>& shape, const std::array<std::vector<int64_t>, N>& strides, F&& f) {
  int64_t n = shapeNumel(shape);
  if (n == 0) return;
  std::array<int64_t, N> off{};
  const size_t rank = shape.size();
  if (rank == 0) {
    f(int64_t{0}, static_cast<const std::array<int64_t, N>&>(off));
    return;
  }
  std::vector<int64_t> idx(shape.begin(), shape.end());
  std::fill(idx.begin(), idx.end(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    f(linear, static_cast<const std::array<int64_t, N>&>(off));
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) {
        for (size_t k = 0; k < N; ++k) off[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

/// Registers the binary pointwise kernels (kernels_pointwise_binary.cc).
void registerPointwiseBinaryKernels(RefKernelTable& t);

}  // namespace plugsdk::exec::pw
