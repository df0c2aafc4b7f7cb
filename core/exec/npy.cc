// .npy (format 1.0/2.0) reading and writing.
#include "core/exec/npy.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace plugsdk::exec {

namespace {

struct NpyType {
  const char* descr;
  DType dtype;
};
constexpr NpyType kTypes[] = {
    {"<f8", DType::kF64}, {"<f4", DType::kF32}, {"<f2", DType::kF16}, {"<i8", DType::kI64},  {"<i4", DType::kI32},
    {"<i2", DType::kI16}, {"|i1", DType::kI8},  {"|u1", DType::kU8},  {"|b1", DType::kBool},
};

uint16_t floatToHalfBits(double v) {
  // Round to f16 first (exact in float), then encode.
  float f = static_cast<float>(roundToFloatType(v, DType::kF16));
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {  // subnormal (value already rounded to a representable f16)
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    return static_cast<uint16_t>(sign | (mant >> (14 - e)));
  }
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13));
}

double halfBitsToDouble(uint16_t h) {
  int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0)
    v = std::ldexp(static_cast<double>(mant), -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<double>(mant | 0x400), exp - 25);
  return sign ? -v : v;
}

}  // namespace

StatusOr<HostTensor> readNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return notFound("cannot open '" + path + "'");
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& why) { return invalidArgument(path + ": not a readable .npy file: " + why); };
  if (data.size() < 10 || std::memcmp(data.data(), "\x93NUMPY", 6) != 0) return bad("missing magic");
  int major = static_cast<unsigned char>(data[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(data[8]) | (static_cast<size_t>(static_cast<unsigned char>(data[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12) return bad("truncated header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i) headerLen |= static_cast<size_t>(static_cast<unsigned char>(data[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    return bad("unsupported version " + std::to_string(major));
  }
  if (headerStart + headerLen > data.size()) return bad("truncated header");
  std::string header = data.substr(headerStart, headerLen);
  auto field = [&](const std::string& key) -> std::string {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) return "";
    size_t colon = header.find(':', k);
    return colon == std::string::npos ? "" : header.substr(colon + 1);
  };
  std::string descrField = field("descr");
  const NpyType* type = nullptr;
  for (const auto& t : kTypes)
    if (descrField.find(std::string("'") + t.descr + "'") != std::string::npos) type = &t;
  if (!type) return bad("unsupported dtype in header " + header);
  if (field("fortran_order").find("True") == 0 || field("fortran_order").find(" True") == 0)
    return bad("fortran order is not supported");
  std::string shapeField = field("shape");
  size_t lp = shapeField.find('('), rp = shapeField.find(')');
  if (lp == std::string::npos || rp == std::string::npos) return bad("no shape");
  std::vector<int64_t> shape;
  std::stringstream ss(shapeField.substr(lp + 1, rp - lp - 1));
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    try {
      shape.push_back(std::stoll(item.substr(b)));
    } catch (...) {
      return bad("bad shape entry '" + item + "'");
    }
    if (shape.back() < 0) return bad("negative dim");
  }
  HostTensor t(type->dtype, shape);
  const char* p = data.data() + headerStart + headerLen;
  size_t elem = static_cast<size_t>(ir::dtypeSize(type->dtype));
  if (static_cast<size_t>(data.data() + data.size() - p) < elem * static_cast<size_t>(t.numel()))
    return bad("truncated data");
  for (int64_t i = 0; i < t.numel(); ++i, p += elem) {
    switch (type->dtype) {
      case DType::kF64: {
        double v;
        std::memcpy(&v, p, 8);
        t.setDouble(i, v);
        break;
      }
      case DType::kF32: {
        float v;
        std::memcpy(&v, p, 4);
        t.setDouble(i, v);
        break;
      }
      case DType::kF16: {
        uint16_t v;
        std::memcpy(&v, p, 2);
        t.setDouble(i, halfBitsToDouble(v));
        break;
      }
      case DType::kI64: {
        int64_t v;
        std::memcpy(&v, p, 8);
        t.setInt(i, v);
        break;
      }
      case DType::kI32: {
        int32_t v;
        std::memcpy(&v, p, 4);
        t.setInt(i, v);
        break;
      }
      case DType::kI16: {
        int16_t v;
        std::memcpy(&v, p, 2);
        t.setInt(i, v);
        break;
      }
      case DType::kI8: {
        int8_t v;
        std::memcpy(&v, p, 1);
        t.setInt(i, v);
        break;
      }
      case DType::kU8:
      case DType::kBool: {
        uint8_t v;
        std::memcpy(&v, p, 1);
        t.setInt(i, v);
        break;
      }
      default: break;
    }
  }
  return t;
}

Status writeNpy(const std::string& path, const HostTensor& t) {
  DType dt = t.dtype() == DType::kBF16 ? DType::kF32 : t.dtype();
  const char* descr = "<f8";
  for (const auto& ty : kTypes)
    if (ty.dtype == dt) descr = ty.descr;
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i)
    shape += std::to_string(t.shape()[i]) + (t.shape().size() == 1 ? "," : (i + 1 < t.shape().size() ? ", " : ""));
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  for (int64_t i = 0; i < t.numel(); ++i) {
    char buf[8];
    size_t n = static_cast<size_t>(ir::dtypeSize(dt));
    switch (dt) {
      case DType::kF64: {
        double v = t.getDouble(i);
        std::memcpy(buf, &v, 8);
        break;
      }
      case DType::kF32: {
        float v = static_cast<float>(t.getDouble(i));
        std::memcpy(buf, &v, 4);
        break;
      }
      case DType::kF16: {
        uint16_t v = floatToHalfBits(t.getDouble(i));
        std::memcpy(buf, &v, 2);
        break;
      }
      case DType::kI64: {
        int64_t v = t.getInt(i);
        std::memcpy(buf, &v, 8);
        break;
      }
      case DType::kI32: {
        int32_t v = static_cast<int32_t>(t.getInt(i));
        std::memcpy(buf, &v, 4);
        break;
      }
      case DType::kI16: {
        int16_t v = static_cast<int16_t>(t.getInt(i));
        std::memcpy(buf, &v, 2);
        break;
      }
      case DType::kI8:
      case DType::kU8:
      case DType::kBool: {
        buf[0] = static_cast<char>(t.getInt(i));
        break;
      }
      default: break;
    }
    out.append(buf, n);
  }
  std::ofstream f(path, std::ios::binary);
  if (!f) return notFound("cannot write '" + path + "'");
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  return f ? Status::ok() : internalError("write failed for '" + path + "'");
}

}  // namespace plugsdk::exec
