// Parsing a library call's attribute text (see attributes.h).
#include "backends/cpu/library/attributes.h"

#include <cctype>
#include <cstdlib>

namespace plugsdk::cpu {

namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

/// Splits at the commas outside brackets.
std::vector<std::string> splitTop(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t from = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || (s[i] == ',' && depth == 0)) {
      const std::string part = trim(s.substr(from, i - from));
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

std::optional<int64_t> asInt(const std::string& t) {
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (*end != '\0') return std::nullopt;
  return v;
}

std::optional<double> asFloat(const std::string& t) {
  if (t == "inf") return 1.0 / 0.0;
  if (t == "-inf") return -1.0 / 0.0;
  if (t == "nan") return 0.0 / 0.0;
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (*end != '\0') return std::nullopt;
  return v;
}

}  // namespace

sdk::StatusOr<Attributes> Attributes::parse(const std::string& text) {
  Attributes a;
  for (const std::string& entry : splitTop(text)) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) return sdk::invalidArgument("attribute '" + entry + "' is not name = value");
    const std::string name = trim(entry.substr(0, eq)), t = trim(entry.substr(eq + 1));
    AttrValue v;
    if (t == "none") {
      v.kind = AttrValue::Kind::kNone;
    } else if (t == "true" || t == "false") {
      v.kind = AttrValue::Kind::kBool;
      v.b = t == "true";
    } else if (auto i = asInt(t)) {
      v.kind = AttrValue::Kind::kInt;
      v.i = *i;
      v.f = static_cast<double>(*i);
    } else if (auto f = asFloat(t)) {
      v.kind = AttrValue::Kind::kFloat;
      v.f = *f;
    } else if (t.size() >= 2 && t.front() == '[' && t.back() == ']') {
      v.kind = AttrValue::Kind::kInts;
      for (const std::string& item : splitTop(t.substr(1, t.size() - 2))) {
        auto x = asInt(item);
        if (!x)
          return sdk::unimplemented("attribute " + name + ": element '" + item +
                                    "' is not an integer literal (symbolic attributes are not supported by the cpu "
                                    "backend's library calls)");
        v.ints.push_back(*x);
      }
    } else {
      // Strings, dtypes, size expressions: kept by name only, so a getter can say why it refuses.
      a.values_[name + "#text"] = AttrValue{};
      continue;
    }
    a.values_[name] = v;
  }
  return a;
}

sdk::StatusOr<const AttrValue*> Attributes::find(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) {
    if (values_.count(name + "#text"))
      return sdk::unimplemented("attribute " + name + " is not a literal (symbolic attributes are not supported)");
    return sdk::invalidArgument("attribute " + name + " is missing");
  }
  return &it->second;
}

bool Attributes::isNone(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() || it->second.kind == AttrValue::Kind::kNone;
}

sdk::StatusOr<bool> Attributes::getBool(const std::string& name) const {
  sdk::StatusOr<const AttrValue*> v = find(name);
  if (!v.isOk()) return v.status();
  if ((*v)->kind != AttrValue::Kind::kBool) return sdk::invalidArgument("attribute " + name + " is not a bool");
  return (*v)->b;
}

sdk::StatusOr<int64_t> Attributes::getInt(const std::string& name) const {
  sdk::StatusOr<const AttrValue*> v = find(name);
  if (!v.isOk()) return v.status();
  if ((*v)->kind != AttrValue::Kind::kInt) return sdk::invalidArgument("attribute " + name + " is not an integer");
  return (*v)->i;
}

sdk::StatusOr<double> Attributes::getFloat(const std::string& name) const {
  sdk::StatusOr<const AttrValue*> v = find(name);
  if (!v.isOk()) return v.status();
  if ((*v)->kind != AttrValue::Kind::kFloat && (*v)->kind != AttrValue::Kind::kInt)
    return sdk::invalidArgument("attribute " + name + " is not a float");
  return (*v)->f;
}

sdk::StatusOr<std::vector<int64_t>> Attributes::getInts(const std::string& name) const {
  sdk::StatusOr<const AttrValue*> v = find(name);
  if (!v.isOk()) return v.status();
  if ((*v)->kind == AttrValue::Kind::kInt) return std::vector<int64_t>{(*v)->i};
  if ((*v)->kind != AttrValue::Kind::kInts) return sdk::invalidArgument("attribute " + name + " is not an int list");
  return (*v)->ints;
}

}  // namespace plugsdk::cpu
