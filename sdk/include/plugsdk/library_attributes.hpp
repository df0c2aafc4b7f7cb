// plugsdk/library_attributes.hpp -- a library call's attributes ("stride = [2, 2], transposed
// = false, scale = none": the prim's attributes in .pgraph syntax, compile_library's
// `attributes`) parsed into the few kinds library ops use: none, bool, integer, float and
// lists of integers. Part of the header-only C++17 layer over plugsdk.h (see plugsdk.hpp);
// nothing here crosses the C boundary. A value of another kind (a size expression over
// symbols, a dtype, a string) is kept by name only, so a getter says why it refuses it.
#pragma once

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plugsdk/status.hpp"

namespace plugsdk::sdk {

struct AttrValue {
  enum class Kind { kNone, kBool, kInt, kFloat, kInts } kind = Kind::kNone;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::vector<int64_t> ints;
};

class LibraryAttributes {
 public:
  static StatusOr<LibraryAttributes> parse(const std::string& text);
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  /// True when absent or `none`.
  bool isNone(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() || it->second.kind == AttrValue::Kind::kNone;
  }
  StatusOr<bool> getBool(const std::string& name) const;
  StatusOr<int64_t> getInt(const std::string& name) const;
  /// A float attribute (an integer literal is accepted as its value).
  StatusOr<double> getFloat(const std::string& name) const;
  /// An integer list (a single integer is a list of one).
  StatusOr<std::vector<int64_t>> getInts(const std::string& name) const;

 private:
  StatusOr<const AttrValue*> find(const std::string& name) const;
  std::map<std::string, AttrValue> values_;
};

namespace detail {

inline std::string trimAttr(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

/// Splits at the commas outside brackets.
inline std::vector<std::string> splitAttrs(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t from = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || (s[i] == ',' && depth == 0)) {
      const std::string part = trimAttr(s.substr(from, i - from));
      if (!part.empty()) out.push_back(part);
      from = i + 1;
    } else if (s[i] == '[') {
      ++depth;
    } else if (s[i] == ']') {
      --depth;
    }
  }
  return out;
}

inline std::optional<int64_t> attrInt(const std::string& t) {
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (*end != '\0') return std::nullopt;
  return v;
}

inline std::optional<double> attrFloat(const std::string& t) {
  if (t == "inf") return std::numeric_limits<double>::infinity();
  if (t == "-inf") return -std::numeric_limits<double>::infinity();
  if (t == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (*end != '\0') return std::nullopt;
  return v;
}

}  // namespace detail

inline StatusOr<LibraryAttributes> LibraryAttributes::parse(const std::string& text) {
  LibraryAttributes a;
  for (const std::string& entry : detail::splitAttrs(text)) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) return invalidArgument("attribute '" + entry + "' is not name = value");
    const std::string name = detail::trimAttr(entry.substr(0, eq)), t = detail::trimAttr(entry.substr(eq + 1));
    AttrValue v;
    if (t == "none") {
      v.kind = AttrValue::Kind::kNone;
    } else if (t == "true" || t == "false") {
      v.kind = AttrValue::Kind::kBool;
      v.b = t == "true";
    } else if (auto i = detail::attrInt(t)) {
      v.kind = AttrValue::Kind::kInt;
      v.i = *i;
      v.f = static_cast<double>(*i);
    } else if (auto f = detail::attrFloat(t)) {
      v.kind = AttrValue::Kind::kFloat;
      v.f = *f;
    } else if (t.size() >= 2 && t.front() == '[' && t.back() == ']') {
      v.kind = AttrValue::Kind::kInts;
      for (const std::string& item : detail::splitAttrs(t.substr(1, t.size() - 2))) {
        auto x = detail::attrInt(item);
        if (!x)
          return unimplemented("attribute " + name + ": element '" + item +
                               "' is not an integer literal (symbolic attributes are not supported by this "
                               "plugin's library calls)");
        v.ints.push_back(*x);
      }
    } else {
      a.values_[name + "#text"] = AttrValue{};
      continue;
    }
    a.values_[name] = v;
  }
  return a;
}

inline StatusOr<const AttrValue*> LibraryAttributes::find(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) {
    if (values_.count(name + "#text"))
      return unimplemented("attribute " + name + " is not a literal (symbolic attributes are not supported)");
    return invalidArgument("attribute " + name + " is missing");
  }
  return &it->second;
}

inline StatusOr<bool> LibraryAttributes::getBool(const std::string& name) const {
  StatusOr<const AttrValue*> v = find(name);
  if (!v.isOk()) return v.status();
  if ((*v)->kind != AttrValue::Kind::kBool) return invalidArgument("attribute " + name + " is not a bool");
  return (*v)->b;
}

inline StatusOr<int64_t> LibraryAttributes::getInt(const std::string& name) const {
  StatusOr<const AttrValue*> v = find(name);
  if (!v.isOk()) return v.status();
  if ((*v)->kind != AttrValue::Kind::kInt) return invalidArgument("attribute " + name + " is not an integer");
  return (*v)->i;
}

inline StatusOr<double> LibraryAttributes::getFloat(const std::string& name) const {
  StatusOr<const AttrValue*> v = find(name);
  if (!v.isOk()) return v.status();
  if ((*v)->kind != AttrValue::Kind::kFloat && (*v)->kind != AttrValue::Kind::kInt)
    return invalidArgument("attribute " + name + " is not a float");
  return (*v)->f;
}

inline StatusOr<std::vector<int64_t>> LibraryAttributes::getInts(const std::string& name) const {
  StatusOr<const AttrValue*> v = find(name);
  if (!v.isOk()) return v.status();
  if ((*v)->kind == AttrValue::Kind::kInt) return std::vector<int64_t>{(*v)->i};
  if ((*v)->kind != AttrValue::Kind::kInts) return invalidArgument("attribute " + name + " is not an int list");
  return (*v)->ints;
}

}  // namespace plugsdk::sdk
