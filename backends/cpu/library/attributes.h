// A library call's attributes ("stride = [2, 2], transposed = false, scale = none"), the
// prim's attributes in .pgraph syntax, parsed into the few kinds library ops use: none,
// bool, integer, float, and lists of integers. A size expression over symbols (a symbolic
// padding) is not a kind the CPU backend runs: it is an error naming the attribute.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plugsdk/status.hpp"

namespace plugsdk::cpu {

struct AttrValue {
  enum class Kind { kNone, kBool, kInt, kFloat, kInts } kind = Kind::kNone;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::vector<int64_t> ints;
};

class Attributes {
 public:
  static sdk::StatusOr<Attributes> parse(const std::string& text);
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  bool isNone(const std::string& name) const;
  sdk::StatusOr<bool> getBool(const std::string& name) const;
  sdk::StatusOr<int64_t> getInt(const std::string& name) const;
  /// A float attribute (an integer literal is accepted as its value).
  sdk::StatusOr<double> getFloat(const std::string& name) const;
  sdk::StatusOr<std::vector<int64_t>> getInts(const std::string& name) const;

 private:
  sdk::StatusOr<const AttrValue*> find(const std::string& name) const;
  std::map<std::string, AttrValue> values_;
};

}  // namespace plugsdk::cpu
