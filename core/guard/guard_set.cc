#include "core/guard/guard_set.h"

namespace plugsdk::guard {
namespace {

std::string dimWhere(const InputGuard& g, size_t d) { return "input %" + g.name + " dim " + std::to_string(d); }

GuardFailure fail(GuardKind kind, int input, int dim, std::string message) {
  return GuardFailure{kind, input, dim, std::move(message)};
}

}  // namespace

const char* guardKindName(GuardKind k) {
  switch (k) {
    case GuardKind::kArity: return "arity";
    case GuardKind::kDType: return "dtype";
    case GuardKind::kRank: return "rank";
    case GuardKind::kSize: return "size";
    case GuardKind::kSymbol: return "symbol";
    case GuardKind::kStrides: return "strides";
    case GuardKind::kDevice: return "device";
    case GuardKind::kRequiresGrad: return "requires_grad";
  }
  return "?";
}

GuardSet::GuardSet(std::vector<InputGuard> inputs, std::map<std::string, int64_t> lowerBounds)
    : inputs_(std::move(inputs)), lowerBounds_(std::move(lowerBounds)) {}

int64_t GuardSet::lowerBound(const std::string& s) const {
  auto it = lowerBounds_.find(s);
  return it == lowerBounds_.end() ? 1 : it->second;
}

std::optional<GuardFailure> GuardSet::check(const std::vector<TensorSignature>& ins,
                                            std::map<std::string, int64_t>* bindings) const {
  if (ins.size() != inputs_.size())
    return fail(GuardKind::kArity, -1, -1,
                std::to_string(ins.size()) + " inputs, guard wants " + std::to_string(inputs_.size()));
  std::map<std::string, int64_t> bound;
  std::map<std::string, std::string> boundBy;
  for (size_t i = 0; i < ins.size(); ++i) {
    const InputGuard& g = inputs_[i];
    const TensorSignature& t = ins[i];
    const int ii = static_cast<int>(i);
    std::string where = "input %" + g.name;
    if (t.dtype != g.dtype)
      return fail(GuardKind::kDType, ii, -1,
                  where + ": dtype " + std::string(ir::dtypeName(t.dtype)) + ", guard wants " +
                      std::string(ir::dtypeName(g.dtype)));
    if (t.shape.size() != g.dims.size())
      return fail(
          GuardKind::kRank, ii, -1,
          where + ": rank " + std::to_string(t.shape.size()) + ", guard wants " + std::to_string(g.dims.size()));
    if (t.device != g.device)
      return fail(GuardKind::kDevice, ii, -1, where + ": on " + t.device + ", guard wants " + g.device);
    if (t.requiresGrad != g.requiresGrad)
      return fail(GuardKind::kRequiresGrad, ii, -1,
                  where + ": requires_grad " + (t.requiresGrad ? "true" : "false") + ", guard wants " +
                      (g.requiresGrad ? "true" : "false"));
    for (size_t d = 0; d < g.dims.size(); ++d) {
      const ir::SymExpr& e = g.dims[d];
      const int64_t size = t.shape[d];
      if (auto c = e.constant()) {
        if (size != *c)
          return fail(GuardKind::kSize, ii, static_cast<int>(d),
                      dimWhere(g, d) + ": size " + std::to_string(size) + ", guard wants " + std::to_string(*c));
      } else if (e.isSymbol()) {
        const std::string s = e.toString();
        auto it = bound.find(s);
        if (it == bound.end()) {
          if (size < lowerBound(s))
            return fail(GuardKind::kSymbol, ii, static_cast<int>(d),
                        dimWhere(g, d) + ": size " + std::to_string(size) + " binds " + s + ", guard wants " + s +
                            " >= " + std::to_string(lowerBound(s)));
          bound[s] = size;
          boundBy[s] = dimWhere(g, d);
        } else if (it->second != size) {
          return fail(GuardKind::kSymbol, ii, static_cast<int>(d),
                      dimWhere(g, d) + ": size " + std::to_string(size) + ", guard wants " + s + " = " +
                          std::to_string(it->second) + " (bound by " + boundBy[s] + ")");
        }
      }
    }
    // The stride class last: a size mismatch is the more useful report.
    if (t.strideClass() != g.strides)
      return fail(
          GuardKind::kStrides, ii, -1,
          where + ": strides are " + strideClassName(t.strideClass()) + ", guard wants " + strideClassName(g.strides));
  }
  for (size_t i = 0; i < ins.size(); ++i) {  // expressions, once every symbol is bound
    const InputGuard& g = inputs_[i];
    for (size_t d = 0; d < g.dims.size(); ++d) {
      const ir::SymExpr& e = g.dims[d];
      if (e.isConstant() || e.isSymbol()) continue;
      std::optional<int64_t> v = e.evaluate(bound);
      if (!v)
        return fail(GuardKind::kSymbol, static_cast<int>(i), static_cast<int>(d),
                    dimWhere(g, d) + ": size " + e.toString() + " has a symbol no input dim binds");
      if (*v != ins[i].shape[d])
        return fail(GuardKind::kSize, static_cast<int>(i), static_cast<int>(d),
                    dimWhere(g, d) + ": size " + std::to_string(ins[i].shape[d]) + ", guard wants " + e.toString() +
                        " = " + std::to_string(*v));
    }
  }
  if (bindings) *bindings = std::move(bound);
  return std::nullopt;
}

std::string GuardSet::toString() const {
  std::string s;
  std::map<std::string, bool> symbols;
  for (const InputGuard& g : inputs_) {
    ir::TensorType t{g.dtype, g.dims, std::nullopt};
    s += "%" + g.name + ": " + t.toString() + " " + strideClassName(g.strides) + " " + g.device +
         (g.requiresGrad ? " requires_grad" : "") + "\n";
    for (const ir::SymExpr& e : g.dims)
      for (const std::string& sym : e.symbols()) symbols[sym] = true;
  }
  for (const auto& [sym, _] : symbols) s += sym + " >= " + std::to_string(lowerBound(sym)) + "\n";
  return s;
}

}  // namespace plugsdk::guard
