// Attribute accessors, canonical printing and equality.
#include "core/ir/attribute.h"

#include <charconv>
#include <cmath>

namespace plugsdk::ir {

Attribute Attribute::fromSym(const SymExpr& v) {
  if (auto c = v.constant()) return fromInt(*c);
  return Attribute(Storage(v));
}

Attribute Attribute::fromInts(const std::vector<int64_t>& v) {
  std::vector<SymExpr> s(v.begin(), v.end());
  return fromInts(std::move(s));
}

std::optional<int64_t> Attribute::asInt() const {
  if (auto* p = std::get_if<int64_t>(&v_)) return *p;
  return std::nullopt;
}
std::optional<double> Attribute::asDouble() const {
  if (auto* p = std::get_if<double>(&v_)) return *p;
  if (auto* p = std::get_if<int64_t>(&v_)) return static_cast<double>(*p);
  return std::nullopt;
}
std::optional<bool> Attribute::asBool() const {
  if (auto* p = std::get_if<bool>(&v_)) return *p;
  return std::nullopt;
}
std::optional<std::string> Attribute::asString() const {
  if (auto* p = std::get_if<std::string>(&v_)) return *p;
  return std::nullopt;
}
std::optional<DType> Attribute::asDType() const {
  if (auto* p = std::get_if<DType>(&v_)) return *p;
  return std::nullopt;
}
std::optional<SymExpr> Attribute::asSym() const {
  if (auto* p = std::get_if<SymExpr>(&v_)) return *p;
  if (auto* p = std::get_if<int64_t>(&v_)) return SymExpr(*p);
  return std::nullopt;
}
std::optional<std::vector<SymExpr>> Attribute::asSymList() const {
  if (auto* p = std::get_if<std::vector<SymExpr>>(&v_)) return *p;
  return std::nullopt;
}
std::optional<std::vector<int64_t>> Attribute::asIntList() const {
  auto* p = std::get_if<std::vector<SymExpr>>(&v_);
  if (!p) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& e : *p) {
    auto c = e.constant();
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}
std::optional<std::vector<double>> Attribute::asFloatList() const {
  if (auto* p = std::get_if<std::vector<double>>(&v_)) return *p;
  if (auto ints = asIntList()) return std::vector<double>(ints->begin(), ints->end());
  return std::nullopt;
}

std::string formatDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string Attribute::toString() const {
  switch (kind()) {
    case Kind::kNone: return "none";
    case Kind::kInt: return std::to_string(std::get<int64_t>(v_));
    case Kind::kFloat: return formatDouble(std::get<double>(v_));
    case Kind::kBool: return std::get<bool>(v_) ? "true" : "false";
    case Kind::kString: {
      std::string out = "\"";
      for (char c : std::get<std::string>(v_)) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') {
          out += "\\n";
          continue;
        }
        out += c;
      }
      return out + "\"";
    }
    case Kind::kDType: return std::string(dtypeName(std::get<DType>(v_)));
    case Kind::kSym: return std::get<SymExpr>(v_).toString();
    case Kind::kIntList: {
      std::string s = "[";
      const auto& l = std::get<std::vector<SymExpr>>(v_);
      for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + l[i].toString();
      return s + "]";
    }
    case Kind::kFloatList: {
      std::string s = "[";
      const auto& l = std::get<std::vector<double>>(v_);
      for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + formatDouble(l[i]);
      return s + "]";
    }
  }
  return "?";
}

bool operator==(const Attribute& a, const Attribute& b) {
  if (a.kind() != b.kind()) return false;
  if (a.kind() == Attribute::Kind::kFloat) {
    double x = std::get<double>(a.v_), y = std::get<double>(b.v_);
    return (std::isnan(x) && std::isnan(y)) || (x == y && std::signbit(x) == std::signbit(y));
  }
  if (a.kind() == Attribute::Kind::kFloatList) {
    const auto& x = std::get<std::vector<double>>(a.v_);
    const auto& y = std::get<std::vector<double>>(b.v_);
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (Attribute::fromFloat(x[i]) != Attribute::fromFloat(y[i])) return false;
    return true;
  }
  return a.v_ == b.v_;
}

}  // namespace plugsdk::ir
