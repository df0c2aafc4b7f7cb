// Schema parsing, attribute normalization and the op registry.
#include "core/ir/op_registry.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace plugsdk::ir {

namespace {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Splits on top-level commas (not inside [] or ()).
std::vector<std::string> splitTopLevel(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '[' || c == '(')
      ++depth;
    else if (c == ']' || c == ')')
      --depth;
    else if (c == ',' && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  std::string last = trim(s.substr(start));
  if (!last.empty() || !out.empty()) out.push_back(last);
  return out;
}

std::optional<Attribute> parseDefault(const std::string& text, ArgType type) {
  if (text == "None" || text == "none") return Attribute::none();
  if (text == "True" || text == "true") return Attribute::fromBool(true);
  if (text == "False" || text == "false") return Attribute::fromBool(false);
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"')
    return Attribute::fromString(text.substr(1, text.size() - 2));
  if (auto dt = parseDType(text)) return Attribute::fromDType(*dt);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    auto items = splitTopLevel(std::string_view(text).substr(1, text.size() - 2));
    if (items.size() == 1 && items[0].empty()) items.clear();
    if (type == ArgType::kFloatList) {
      std::vector<double> v;
      for (auto& it : items) v.push_back(std::stod(it));
      return Attribute::fromFloats(v);
    }
    std::vector<int64_t> v;
    for (auto& it : items) {
      int64_t x = 0;
      auto r = std::from_chars(it.data(), it.data() + it.size(), x);
      if (r.ec != std::errc() || r.ptr != it.data() + it.size()) return std::nullopt;
      v.push_back(x);
    }
    return Attribute::fromInts(v);
  }
  if (text.find_first_of(".e") != std::string::npos || text == "inf" || text == "-inf") {
    if (text == "inf") return Attribute::fromFloat(INFINITY);
    if (text == "-inf") return Attribute::fromFloat(-INFINITY);
    try {
      return Attribute::fromFloat(std::stod(text));
    } catch (...) {
      return std::nullopt;
    }
  }
  int64_t x = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), x);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
  if (type == ArgType::kFloat) return Attribute::fromFloat(static_cast<double>(x));
  return Attribute::fromInt(x);
}

std::optional<ArgType> parseArgType(const std::string& base, bool list, bool& optional) {
  if (base == "Tensor") {
    if (list) return ArgType::kTensorList;
    if (optional) {
      optional = false;
      return ArgType::kOptionalTensor;
    }
    return ArgType::kTensor;
  }
  if (base == "int" || base == "SymInt")
    return list ? ArgType::kIntList : (base == "int" ? ArgType::kInt : ArgType::kSymInt);
  if (base == "float") return list ? ArgType::kFloatList : ArgType::kFloat;
  if (list) return std::nullopt;
  if (base == "bool") return ArgType::kBool;
  if (base == "str") return ArgType::kString;
  if (base == "ScalarType") return ArgType::kDType;
  if (base == "Scalar") return ArgType::kScalar;
  return std::nullopt;
}

bool kindFits(Attribute::Kind k, ArgType t) {
  using K = Attribute::Kind;
  switch (t) {
    case ArgType::kInt: return k == K::kInt;
    case ArgType::kSymInt: return k == K::kInt || k == K::kSym;
    case ArgType::kIntList: return k == K::kIntList;
    case ArgType::kFloat: return k == K::kFloat || k == K::kInt;
    case ArgType::kFloatList: return k == K::kFloatList || k == K::kIntList;
    case ArgType::kScalar: return k == K::kInt || k == K::kFloat || k == K::kBool || k == K::kSym;
    case ArgType::kBool: return k == K::kBool;
    case ArgType::kString: return k == K::kString;
    case ArgType::kDType: return k == K::kDType;
    default: return false;
  }
}

const char* argTypeName(ArgType t) {
  switch (t) {
    case ArgType::kTensor: return "Tensor";
    case ArgType::kOptionalTensor: return "Tensor?";
    case ArgType::kTensorList: return "Tensor[]";
    case ArgType::kInt: return "int";
    case ArgType::kSymInt: return "SymInt";
    case ArgType::kIntList: return "int[]";
    case ArgType::kFloat: return "float";
    case ArgType::kFloatList: return "float[]";
    case ArgType::kScalar: return "Scalar";
    case ArgType::kBool: return "bool";
    case ArgType::kString: return "str";
    case ArgType::kDType: return "ScalarType";
  }
  return "?";
}

}  // namespace

std::vector<const ArgSpec*> OpSchema::tensorArgs() const {
  std::vector<const ArgSpec*> out;
  for (const auto& a : args)
    if (a.isTensor()) out.push_back(&a);
  return out;
}

std::vector<const ArgSpec*> OpSchema::attrArgs() const {
  std::vector<const ArgSpec*> out;
  for (const auto& a : args)
    if (!a.isTensor()) out.push_back(&a);
  return out;
}

const ArgSpec* OpSchema::findArg(std::string_view name) const {
  for (const auto& a : args)
    if (a.name == name) return &a;
  return nullptr;
}

StatusOr<OpSchema> parseSchema(std::string_view text) {
  OpSchema s;
  s.text = std::string(text);
  auto bad = [&](const std::string& why) { return invalidArgument("schema '" + std::string(text) + "': " + why); };
  size_t lp = text.find('('), arrow = text.rfind("->");
  if (lp == std::string_view::npos || arrow == std::string_view::npos || arrow < lp)
    return bad("expected NAME(ARGS) -> RETURNS");
  size_t rp = text.rfind(')', arrow);
  if (rp == std::string_view::npos || rp < lp) return bad("missing ')'");
  s.name = trim(text.substr(0, lp));
  if (s.name.empty()) return bad("empty name");
  bool sawList = false;
  for (const auto& item : splitTopLevel(text.substr(lp + 1, rp - lp - 1))) {
    if (item.empty()) continue;
    if (item == "*") continue;
    ArgSpec a;
    std::string decl = item, def;
    if (auto eq = item.find('='); eq != std::string::npos) {
      decl = trim(item.substr(0, eq));
      def = trim(item.substr(eq + 1));
    }
    auto sp = decl.find_last_of(' ');
    if (sp == std::string::npos) return bad("argument '" + item + "' needs a type and a name");
    std::string type = trim(decl.substr(0, sp));
    a.name = trim(decl.substr(sp + 1));
    bool optional = false, list = false;
    if (!type.empty() && type.back() == '?') {
      optional = true;
      type.pop_back();
    }
    if (auto lb = type.find('['); lb != std::string::npos) {
      list = true;
      type = type.substr(0, lb);
    }
    auto at = parseArgType(type, list, optional);
    if (!at) return bad("unknown argument type in '" + item + "'");
    a.type = *at;
    a.optional = optional;
    a.symbolic = type == "SymInt";
    if (a.type == ArgType::kTensorList) {
      if (sawList) return bad("at most one Tensor[] argument");
      sawList = true;
    } else if (a.isTensor() && sawList) {
      return bad("Tensor[] must be the last tensor argument");
    }
    if (!def.empty()) {
      auto d = parseDefault(def, a.type);
      if (!d) return bad("cannot parse default '" + def + "'");
      if (d->isNone() && !a.optional && a.type != ArgType::kOptionalTensor)
        return bad("default None on non-optional '" + a.name + "'");
      if (!d->isNone() && !kindFits(d->kind(), a.type)) return bad("default of '" + a.name + "' has the wrong kind");
      a.defaultValue = *d;
    } else if (a.optional && !a.isTensor()) {
      a.defaultValue = Attribute::none();
    }
    s.args.push_back(std::move(a));
  }
  std::string ret = trim(text.substr(arrow + 2));
  if (ret == "Tensor[]") {
    s.variadicOutputs = true;
    s.numOutputs = 0;
  } else if (ret == "()") {
    s.numOutputs = 0;
  } else {
    if (ret.front() == '(' && ret.back() == ')') ret = ret.substr(1, ret.size() - 2);
    s.numOutputs = 0;
    for (const auto& r : splitTopLevel(ret)) {
      if (r.rfind("Tensor", 0) != 0) return bad("returns must be Tensor, (Tensor, ...) or Tensor[]");
      ++s.numOutputs;
    }
  }
  return s;
}

const Attribute& AttrReader::attr(const std::string& name) const {
  static const Attribute kNone;
  auto it = attrs_.find(name);
  if (it != attrs_.end()) return it->second;
  if (const ArgSpec* a = schema_.findArg(name); a && a->defaultValue) return *a->defaultValue;
  return kNone;
}
int64_t AttrReader::getInt(const std::string& name) const { return attr(name).asInt().value_or(0); }
SymExpr AttrReader::getSym(const std::string& name) const { return attr(name).asSym().value_or(SymExpr(0)); }
double AttrReader::getFloat(const std::string& name) const {
  const Attribute& a = attr(name);
  if (auto b = a.asBool()) return *b ? 1.0 : 0.0;
  return a.asDouble().value_or(0.0);
}
bool AttrReader::getBool(const std::string& name) const { return attr(name).asBool().value_or(false); }
std::string AttrReader::getString(const std::string& name) const { return attr(name).asString().value_or(""); }
DType AttrReader::getDType(const std::string& name) const { return attr(name).asDType().value_or(kDefaultFloat); }
std::vector<int64_t> AttrReader::getInts(const std::string& name) const {
  return attr(name).asIntList().value_or(std::vector<int64_t>{});
}
std::array<int64_t, 2> AttrReader::getIntPair(const std::string& name, std::array<int64_t, 2> fallback) const {
  const std::vector<int64_t> v = getInts(name);
  if (v.empty()) return fallback;
  return {v.front(), v.back()};
}
std::vector<SymExpr> AttrReader::getSyms(const std::string& name) const {
  return attr(name).asSymList().value_or(std::vector<SymExpr>{});
}

Status OpRegistry::add(std::string_view schemaText, InferFn infer, std::string category, std::string doc) {
  ASSIGN_OR_RETURN(OpSchema schema, parseSchema(schemaText));
  if (ops_.count(schema.name)) return invalidArgument("op '" + schema.name + "' registered twice");
  auto def = std::make_unique<OpDef>();
  def->schema = std::move(schema);
  def->infer = std::move(infer);
  def->category = std::move(category);
  def->doc = std::move(doc);
  std::string name = def->schema.name;
  ops_.emplace(std::move(name), std::move(def));
  return Status::ok();
}

const OpDef* OpRegistry::find(std::string_view name) const {
  auto it = ops_.find(name);
  if (it != ops_.end()) return it->second.get();
  // FX names default overloads "aten.relu.default"; the registry's canonical name is "aten.relu".
  constexpr std::string_view kDefault = ".default";
  if (name.size() > kDefault.size() && name.substr(name.size() - kDefault.size()) == kDefault) {
    it = ops_.find(name.substr(0, name.size() - kDefault.size()));
    if (it != ops_.end()) return it->second.get();
  }
  return nullptr;
}

std::vector<const OpDef*> OpRegistry::all() const {
  std::vector<const OpDef*> out;
  for (const auto& [n, d] : ops_) out.push_back(d.get());
  return out;
}

StatusOr<AttrMap> normalizeAttrs(const OpSchema& schema, const AttrMap& attrs, const std::string& where) {
  for (const auto& [name, value] : attrs) {
    const ArgSpec* a = schema.findArg(name);
    if (!a || a->isTensor())
      return invalidArgument(where + ": unknown attribute '" + name + "' for " + schema.name +
                             " (schema: " + schema.text + ")");
    if (value.isNone()) {
      if (!a->optional)
        return invalidArgument(where + ": attribute '" + name + "' of " + schema.name + " may not be none");
    } else if (!kindFits(value.kind(), a->type)) {
      return invalidArgument(where + ": attribute '" + name + "' of " + schema.name + " must be " +
                             argTypeName(a->type) + (a->optional ? "?" : "") + ", got " + value.toString());
    } else if (a->type == ArgType::kIntList && !a->symbolic && !value.asIntList()) {
      return invalidArgument(where + ": attribute '" + name + "' of " + schema.name +
                             " must be a list of plain integers (int[], not SymInt[]), got " + value.toString());
    } else if (a->type == ArgType::kFloatList && !value.asFloatList()) {
      return invalidArgument(where + ": attribute '" + name + "' of " + schema.name + " must be float[], got " +
                             value.toString());
    }
  }
  AttrMap out = attrs;
  for (const ArgSpec* a : schema.attrArgs()) {
    if (out.count(a->name)) continue;
    if (!a->defaultValue) return invalidArgument(where + ": " + schema.name + " needs attribute '" + a->name + "'");
    out[a->name] = *a->defaultValue;
  }
  return out;
}

StatusOr<std::vector<TensorType>> inferTypes(const OpDef& def, const std::vector<const TensorType*>& inputs,
                                             const AttrMap& attrs, const SymAssumptions& assumptions) {
  InferContext ctx(def.schema, inputs, attrs, assumptions);
  return def.infer(ctx);
}

}  // namespace plugsdk::ir
