// A dense host tensor as the reference executor holds it: floating types as float64,
// integral types and bool as int64 (wrapped to the dtype's width). Row-major, contiguous.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/dtype.h"

namespace plugsdk::exec {

using ir::DType;

class HostTensor {
 public:
  HostTensor() = default;
  /// Zero-filled tensor.
  HostTensor(DType dtype, std::vector<int64_t> shape);
  static HostTensor fromDoubles(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values);
  static HostTensor fromInts(DType dtype, std::vector<int64_t> shape, const std::vector<int64_t>& values);
  /// A zero-dim tensor.
  static HostTensor scalar(DType dtype, double value);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const { return numel_; }
  bool isFloating() const { return ir::isFloating(dtype_); }
  /// Row-major element strides.
  std::vector<int64_t> strides() const;

  /// Element i as a double (integers converted).
  double getDouble(int64_t i) const {
    return isFloating() ? f_[static_cast<size_t>(i)] : static_cast<double>(i_[static_cast<size_t>(i)]);
  }
  /// Element i as an integer (floats truncated toward zero, as a C cast).
  int64_t getInt(int64_t i) const;
  /// Stores v converted to the dtype: floating types keep the full float64 value (the
  /// reference keeps float64 precision between ops; casts round explicitly with
  /// roundToFloatType), integers are truncated and wrapped, bool is v != 0.
  void setDouble(int64_t i, double v);
  /// Stores an integer, wrapped to the dtype (or converted for floating types).
  void setInt(int64_t i, int64_t v);

  std::vector<double>& doubles() { return f_; }
  const std::vector<double>& doubles() const { return f_; }
  std::vector<int64_t>& ints() { return i_; }
  const std::vector<int64_t>& ints() const { return i_; }

  /// "f32[2, 3]"
  std::string typeString() const;

 private:
  DType dtype_ = DType::kF32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::vector<double> f_;
  std::vector<int64_t> i_;
};

/// Rounds a double to the nearest value representable in `dtype` (f16, bf16, f32: round to
/// nearest even; f16 and bf16 through f32 first, as PyTorch's CPU casts; f64: unchanged). Used
/// by casts (convert_element_type / _to_copy).
double roundToFloatType(double v, DType dtype);
/// Wraps an integer to the width of an integral dtype (two's complement), bool -> 0/1.
int64_t wrapToIntType(int64_t v, DType dtype);
/// Converts a double to an integral dtype as PyTorch does on CPU: truncation toward zero,
/// then wrapping. NaN and out-of-range values give INT32_MIN for i8/i16/i32 (PyTorch
/// converts through int32; i8/i16 then keep the low bits, 0) and INT64_MIN for i64/u8.
int64_t doubleToIntType(double v, DType dtype);

/// Number of elements of a shape.
int64_t shapeNumel(const std::vector<int64_t>& shape);
std::string shapeString(const std::vector<int64_t>& shape);

}  // namespace plugsdk::exec
