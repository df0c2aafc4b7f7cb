// Node attributes: the non-tensor arguments of an op (ints, floats, bools, strings,
// dtypes, symbolic sizes and lists of them).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/symbolic.h"

namespace plugsdk::ir {

class Attribute {
 public:
  enum class Kind { kNone, kInt, kFloat, kBool, kString, kDType, kSym, kIntList, kFloatList };

  Attribute() = default;  ///< None
  static Attribute none() { return {}; }
  static Attribute fromInt(int64_t v) { return Attribute(Storage(v)); }
  static Attribute fromFloat(double v) { return Attribute(Storage(v)); }
  static Attribute fromBool(bool v) { return Attribute(Storage(v)); }
  static Attribute fromString(std::string v) { return Attribute(Storage(std::move(v))); }
  static Attribute fromDType(DType v) { return Attribute(Storage(v)); }
  /// A constant expression is stored as kInt, so that text round-trips.
  static Attribute fromSym(const SymExpr& v);
  static Attribute fromInts(std::vector<SymExpr> v) { return Attribute(Storage(std::move(v))); }
  static Attribute fromInts(const std::vector<int64_t>& v);
  /// An empty float list is stored as an empty int list (the text `[]` is one thing).
  static Attribute fromFloats(std::vector<double> v) {
    if (v.empty()) return Attribute(Storage(std::vector<SymExpr>{}));
    return Attribute(Storage(std::move(v)));
  }

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool isNone() const { return kind() == Kind::kNone; }
  std::optional<int64_t> asInt() const;    ///< kInt only
  std::optional<double> asDouble() const;  ///< kFloat or kInt
  std::optional<bool> asBool() const;
  std::optional<std::string> asString() const;
  std::optional<DType> asDType() const;
  std::optional<SymExpr> asSym() const;                    ///< kSym or kInt
  std::optional<std::vector<SymExpr>> asSymList() const;   ///< kIntList
  std::optional<std::vector<int64_t>> asIntList() const;   ///< kIntList with constants only
  std::optional<std::vector<double>> asFloatList() const;  ///< kFloatList (or kIntList of constants)

  /// Canonical text: 3, 1.5, 1e-05, inf, nan, true, "s", f32, s0*2, [1, s0], [0.5, 1.0], none
  std::string toString() const;
  friend bool operator==(const Attribute& a, const Attribute& b);
  friend bool operator!=(const Attribute& a, const Attribute& b) { return !(a == b); }

 private:
  using Storage = std::variant<std::monostate, int64_t, double, bool, std::string, DType, SymExpr, std::vector<SymExpr>,
                               std::vector<double>>;
  explicit Attribute(Storage v) : v_(std::move(v)) {}
  Storage v_;
};

/// Shortest text that parses back to exactly `v` (always has '.', 'e', or is inf/nan).
std::string formatDouble(double v);

using AttrMap = std::map<std::string, Attribute>;

}  // namespace plugsdk::ir
