// HostTensor storage and dtype conversions.
#include "core/exec/host_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace plugsdk::exec {

int64_t shapeNumel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = shapeNumel(shape_);
  if (isFloating())
    f_.assign(static_cast<size_t>(numel_), 0.0);
  else
    i_.assign(static_cast<size_t>(numel_), 0);
}

HostTensor HostTensor::fromDoubles(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  HostTensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel_ && i < static_cast<int64_t>(values.size()); ++i)
    t.setDouble(i, values[static_cast<size_t>(i)]);
  return t;
}

HostTensor HostTensor::fromInts(DType dtype, std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  HostTensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel_ && i < static_cast<int64_t>(values.size()); ++i)
    t.setInt(i, values[static_cast<size_t>(i)]);
  return t;
}

HostTensor HostTensor::scalar(DType dtype, double value) {
  HostTensor t(dtype, {});
  t.setDouble(0, value);
  return t;
}

std::vector<int64_t> HostTensor::strides() const {
  std::vector<int64_t> s(shape_.size());
  int64_t run = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    s[i] = run;
    run *= shape_[i];
  }
  return s;
}

int64_t HostTensor::getInt(int64_t i) const {
  if (!isFloating()) return i_[static_cast<size_t>(i)];
  return doubleToIntType(f_[static_cast<size_t>(i)], DType::kI64);
}

void HostTensor::setDouble(int64_t i, double v) {
  if (isFloating())
    f_[static_cast<size_t>(i)] = v;
  else if (dtype_ == DType::kBool)
    i_[static_cast<size_t>(i)] = v != 0.0 ? 1 : 0;  // NaN != 0 -> true
  else
    i_[static_cast<size_t>(i)] = doubleToIntType(v, dtype_);
}

void HostTensor::setInt(int64_t i, int64_t v) {
  if (isFloating())
    f_[static_cast<size_t>(i)] = static_cast<double>(v);
  else
    i_[static_cast<size_t>(i)] = wrapToIntType(v, dtype_);
}

std::string HostTensor::typeString() const { return std::string(ir::dtypeName(dtype_)) + shapeString(shape_); }

namespace {

// Round to nearest even keeping `mantBits` explicit mantissa bits and exponent range
// [minExp, maxExp] (normal numbers), with subnormals below.
double roundToFormat(double v, int mantBits, int minExp, int maxExp) {
  if (std::isnan(v) || std::isinf(v) || v == 0.0) return v;
  int e;
  std::frexp(v, &e);  // v = m * 2^e, 0.5 <= |m| < 1: the unbiased exponent is e - 1
  int exp = e - 1;
  if (exp < minExp) exp = minExp;  // subnormal: fixed quantum
  double quantum = std::ldexp(1.0, exp - mantBits);
  double r = std::nearbyint(v / quantum) * quantum;  // default rounding mode: to nearest even
  double maxFinite = std::ldexp(2.0 - std::ldexp(1.0, -mantBits), maxExp);
  if (std::fabs(r) > maxFinite) return std::copysign(INFINITY, v);
  return r;
}

}  // namespace

double roundToFloatType(double v, DType dtype) {
  switch (dtype) {
    case DType::kF32: return static_cast<double>(static_cast<float>(v));
    // As PyTorch's CPU casts: a double reaches f16 / bf16 through float, rounding twice
    // (1 + 2^-11 + 2^-40 becomes 1.0 in f16, not 1.0009765625).
    case DType::kF16: return roundToFormat(static_cast<double>(static_cast<float>(v)), 10, -14, 15);
    case DType::kBF16: return roundToFormat(static_cast<double>(static_cast<float>(v)), 7, -126, 127);
    default: return v;
  }
}

int64_t wrapToIntType(int64_t v, DType dtype) {
  switch (dtype) {
    case DType::kBool: return v != 0 ? 1 : 0;
    case DType::kU8: return static_cast<uint8_t>(static_cast<uint64_t>(v));
    case DType::kI8: return static_cast<int8_t>(static_cast<uint64_t>(v));
    case DType::kI16: return static_cast<int16_t>(static_cast<uint64_t>(v));
    case DType::kI32: return static_cast<int32_t>(static_cast<uint64_t>(v));
    default: return v;
  }
}

int64_t doubleToIntType(double v, DType dtype) {
  if (dtype == DType::kBool) return v != 0.0 ? 1 : 0;
  double t = std::trunc(v);
  if (dtype == DType::kI8 || dtype == DType::kI16 || dtype == DType::kI32) {
    // PyTorch's CPU conversion goes through a 32-bit integer conversion (cvttsd2si):
    // NaN and out-of-range values become INT32_MIN, then the narrower type keeps the low bits.
    int64_t x = (std::isnan(t) || t >= 2147483648.0 || t < -2147483648.0) ? std::numeric_limits<int32_t>::min()
                                                                          : static_cast<int64_t>(t);
    return wrapToIntType(x, dtype);
  }
  int64_t x;
  if (std::isnan(t) || t >= 9223372036854775808.0 || t < -9223372036854775808.0)
    x = std::numeric_limits<int64_t>::min();
  else
    x = static_cast<int64_t>(t);
  return wrapToIntType(x, dtype);
}

}  // namespace plugsdk::exec
