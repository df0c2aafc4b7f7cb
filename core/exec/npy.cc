// .npy (format 1.0/2.0) reading and writing.
#include "core/exec/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "core/exec/tensor_bytes.h"

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
  const char* p = data.data() + headerStart + headerLen;
  const auto elem = static_cast<size_t>(ir::dtypeSize(type->dtype));
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  if (static_cast<size_t>(data.data() + data.size() - p) < elem * static_cast<size_t>(numel))
    return bad("truncated data");
  return decodeElements(type->dtype, shape, p);
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
  // bf16 has no NumPy dtype: written as f32 (exact).
  HostTensor data = t;
  if (t.dtype() == DType::kBF16) {
    data = HostTensor(DType::kF32, t.shape());
    for (int64_t i = 0; i < t.numel(); ++i) data.setDouble(i, t.getDouble(i));
  }
  std::string bytes(static_cast<size_t>(data.numel() * ir::dtypeSize(dt)), '\0');
  encodeElements(data, bytes.data());
  out += bytes;
  std::ofstream f(path, std::ios::binary);
  if (!f) return notFound("cannot write '" + path + "'");
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  return f ? Status::ok() : internalError("write failed for '" + path + "'");
}

}  // namespace plugsdk::exec
