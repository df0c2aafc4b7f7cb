// Canonical polynomial arithmetic, floordiv/mod simplification and inequality proofs
// for SymExpr.
#include "core/ir/symbolic.h"

#include <algorithm>
#include <set>

namespace plugsdk::ir {

namespace {

std::string monoKey(const std::vector<SymAtomPtr>& atoms) {
  std::string k;
  for (size_t i = 0; i < atoms.size(); ++i) {
    if (i) k += '*';
    k += atoms[i]->key;
  }
  return k;
}

// Arithmetic on constants wraps (two's complement) instead of overflowing: sizes that
// large are rejected elsewhere, and malformed input must never reach undefined behaviour.
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

int64_t floorDivInt(int64_t a, int64_t b) {
  if (b == -1) return wrapMul(a, -1);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t modInt(int64_t a, int64_t b) {
  if (b == -1) return 0;
  return wrapAdd(a, wrapMul(wrapMul(b, floorDivInt(a, b)), -1));
}

SymAtomPtr makeSymbolAtom(const std::string& name) {
  auto a = std::make_shared<SymAtom>();
  a->kind = SymAtom::Kind::kSymbol;
  a->name = name;
  a->key = name;
  return a;
}

SymAtomPtr makeDivAtom(SymAtom::Kind kind, const SymExpr& l, const SymExpr& r) {
  auto a = std::make_shared<SymAtom>();
  a->kind = kind;
  a->lhs = l;
  a->rhs = r;
  a->key = std::string(kind == SymAtom::Kind::kFloorDiv ? "fd(" : "md(") + l.key() + "," + r.key() + ")";
  return a;
}

SymExpr atomExpr(const SymAtomPtr& a);

// If `d` is a single monomial with coefficient 1 (no constant) and every term of `n`
// contains d's atoms, returns n / d.
std::optional<SymExpr> exactMonomialQuotient(const SymExpr& n, const SymExpr& d) {
  if (d.terms().size() != 1 || d.terms()[0].coeff != 1 || d.terms()[0].atoms.empty()) return std::nullopt;
  const auto& datoms = d.terms()[0].atoms;
  SymExpr result(0);
  for (const auto& t : n.terms()) {
    std::vector<SymAtomPtr> rest = t.atoms;
    for (const auto& da : datoms) {
      auto it = std::find_if(rest.begin(), rest.end(), [&](const SymAtomPtr& x) { return x->key == da->key; });
      if (it == rest.end()) return std::nullopt;
      rest.erase(it);
    }
    SymExpr term(t.coeff);
    for (const auto& a : rest) term = term * atomExpr(a);
    result = result + term;
  }
  return result;
}

std::string atomText(const SymAtom& a, bool inProduct);

bool isSimpleOperand(const SymExpr& e) {
  if (auto c = e.constant()) return *c >= 0;
  return e.isSymbol();
}

std::string operandText(const SymExpr& e) { return isSimpleOperand(e) ? e.toString() : "(" + e.toString() + ")"; }

std::string atomText(const SymAtom& a, bool inProduct) {
  if (a.kind == SymAtom::Kind::kSymbol) return a.name;
  std::string s = operandText(a.lhs) + (a.kind == SymAtom::Kind::kFloorDiv ? "//" : " % ") + operandText(a.rhs);
  return inProduct ? "(" + s + ")" : s;
}

}  // namespace

namespace {
SymExpr atomExpr(const SymAtomPtr& a) { return SymExpr::fromAtom(a); }
}  // namespace

SymExpr SymExpr::fromTerms(std::vector<Term> terms) {
  for (auto& t : terms)
    std::sort(t.atoms.begin(), t.atoms.end(), [](const SymAtomPtr& x, const SymAtomPtr& y) { return x->key < y->key; });
  std::map<std::string, Term> merged;
  for (auto& t : terms) {
    auto k = monoKey(t.atoms);
    auto it = merged.find(k);
    if (it == merged.end())
      merged.emplace(k, std::move(t));
    else
      it->second.coeff = wrapAdd(it->second.coeff, t.coeff);
  }
  SymExpr e;
  for (auto& [k, t] : merged)
    if (t.coeff != 0) e.terms_.push_back(std::move(t));
  return e;
}

SymExpr SymExpr::fromAtom(const SymAtomPtr& a) {
  std::vector<Term> ts(1);
  ts[0].coeff = 1;
  ts[0].atoms = {a};
  return fromTerms(std::move(ts));
}

SymExpr::SymExpr(int64_t value) {
  if (value != 0) terms_.push_back(Term{value, {}});
}

SymExpr SymExpr::symbol(const std::string& name) { return fromAtom(makeSymbolAtom(name)); }

std::optional<int64_t> SymExpr::constant() const {
  if (terms_.empty()) return 0;
  if (terms_.size() == 1 && terms_[0].atoms.empty()) return terms_[0].coeff;
  return std::nullopt;
}

bool SymExpr::isSymbol() const {
  return terms_.size() == 1 && terms_[0].coeff == 1 && terms_[0].atoms.size() == 1 &&
         terms_[0].atoms[0]->kind == SymAtom::Kind::kSymbol;
}

const std::string& SymExpr::key() const {
  if (!key_) {
    std::string k;
    for (const auto& t : terms_) {
      k += std::to_string(t.coeff) + ":" + monoKey(t.atoms) + "|";
    }
    key_ = std::make_shared<const std::string>(std::move(k));
  }
  return *key_;
}

SymExpr operator+(const SymExpr& a, const SymExpr& b) {
  std::vector<SymExpr::Term> ts = a.terms_;
  ts.insert(ts.end(), b.terms_.begin(), b.terms_.end());
  return SymExpr::fromTerms(std::move(ts));
}

SymExpr operator-(const SymExpr& a, const SymExpr& b) {
  std::vector<SymExpr::Term> ts = a.terms_;
  for (auto t : b.terms_) {
    t.coeff = wrapMul(t.coeff, -1);
    ts.push_back(std::move(t));
  }
  return SymExpr::fromTerms(std::move(ts));
}

SymExpr operator*(const SymExpr& a, const SymExpr& b) {
  std::vector<SymExpr::Term> ts;
  for (const auto& x : a.terms_)
    for (const auto& y : b.terms_) {
      SymExpr::Term t;
      t.coeff = wrapMul(x.coeff, y.coeff);
      t.atoms = x.atoms;
      t.atoms.insert(t.atoms.end(), y.atoms.begin(), y.atoms.end());
      ts.push_back(std::move(t));
    }
  return SymExpr::fromTerms(std::move(ts));
}

SymExpr SymExpr::floorDiv(const SymExpr& a, const SymExpr& b) {
  auto ca = a.constant(), cb = b.constant();
  if (cb && *cb == 0) return fromAtom(makeDivAtom(SymAtom::Kind::kFloorDiv, a, b));  // kept, never evaluates
  if (ca && cb) return SymExpr(floorDivInt(*ca, *cb));
  if (cb && *cb == 1) return a;
  if (a == b) return SymExpr(1);
  if (cb && *cb > 0 && a.terms_.size() == 1 && a.terms_[0].coeff == 1 && a.terms_[0].atoms.size() == 1) {
    // floor(floor(x / c1) / c2) = floor(x / (c1 * c2)) for positive c1, c2 (two stride-2 pools).
    const SymAtom& inner = *a.terms_[0].atoms[0];
    if (inner.kind == SymAtom::Kind::kFloorDiv)
      if (auto c1 = inner.rhs.constant(); c1 && *c1 > 0) return floorDiv(inner.lhs, SymExpr(*c1 * *cb));
  }
  if (cb && *cb > 0) {
    // Split a = D + r where every term of D is divisible by c: floor((D + r)/c) = D/c + floor(r/c).
    std::vector<Term> divisible, rest;
    for (const auto& t : a.terms_) {
      if (t.coeff % *cb == 0)
        divisible.push_back(Term{t.coeff / *cb, t.atoms});
      else
        rest.push_back(t);
    }
    SymExpr q = fromTerms(std::move(divisible));
    SymExpr r = fromTerms(std::move(rest));
    if (r.isZero()) return q;
    if (!q.isZero()) return q + floorDiv(r, b);
  }
  if (auto q = exactMonomialQuotient(a, b)) return *q;
  return fromAtom(makeDivAtom(SymAtom::Kind::kFloorDiv, a, b));
}

SymExpr SymExpr::mod(const SymExpr& a, const SymExpr& b) {
  auto ca = a.constant(), cb = b.constant();
  if (cb && *cb == 0) return fromAtom(makeDivAtom(SymAtom::Kind::kMod, a, b));
  if (ca && cb) return SymExpr(modInt(*ca, *cb));
  if (cb && (*cb == 1 || *cb == -1)) return SymExpr(0);
  if (a == b) return SymExpr(0);
  if (cb && *cb > 0) {
    std::vector<Term> rest;
    for (const auto& t : a.terms_)
      if (t.coeff % *cb != 0) rest.push_back(t);
    SymExpr r = fromTerms(std::move(rest));
    if (r.isZero()) return SymExpr(0);
    if (r != a) return mod(r, b);
  }
  if (exactMonomialQuotient(a, b)) return SymExpr(0);
  return fromAtom(makeDivAtom(SymAtom::Kind::kMod, a, b));
}

std::string SymExpr::toString() const {
  if (terms_.empty()) return "0";
  // Print non-constant terms first (in canonical order), the constant last.
  std::vector<const Term*> order;
  const Term* constTerm = nullptr;
  for (const auto& t : terms_) {
    if (t.atoms.empty())
      constTerm = &t;
    else
      order.push_back(&t);
  }
  if (constTerm) order.push_back(constTerm);
  std::string s;
  bool first = true;
  for (const Term* t : order) {
    int64_t c = t->coeff;
    if (!first)
      s += c < 0 ? "-" : "+";
    else if (c < 0)
      s += "-";
    uint64_t mag = c < 0 ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
    if (t->atoms.empty()) {
      s += std::to_string(mag);
    } else {
      bool product = mag != 1 || t->atoms.size() > 1;
      if (mag != 1) s += std::to_string(mag) + "*";
      for (size_t i = 0; i < t->atoms.size(); ++i) {
        if (i) s += "*";
        s += atomText(*t->atoms[i], product);
      }
    }
    first = false;
  }
  return s;
}

namespace {
void collectSymbols(const SymExpr& e, std::set<std::string>& out) {
  for (const auto& t : e.terms())
    for (const auto& a : t.atoms) {
      if (a->kind == SymAtom::Kind::kSymbol)
        out.insert(a->name);
      else {
        collectSymbols(a->lhs, out);
        collectSymbols(a->rhs, out);
      }
    }
}
}  // namespace

std::vector<std::string> SymExpr::symbols() const {
  std::set<std::string> s;
  collectSymbols(*this, s);
  return {s.begin(), s.end()};
}

std::optional<int64_t> SymExpr::evaluate(const std::map<std::string, int64_t>& values) const {
  int64_t sum = 0;
  for (const auto& t : terms_) {
    int64_t prod = t.coeff;  // wrapping arithmetic below
    for (const auto& a : t.atoms) {
      int64_t v;
      if (a->kind == SymAtom::Kind::kSymbol) {
        auto it = values.find(a->name);
        if (it == values.end()) return std::nullopt;
        v = it->second;
      } else {
        auto l = a->lhs.evaluate(values), r = a->rhs.evaluate(values);
        if (!l || !r || *r == 0) return std::nullopt;
        v = a->kind == SymAtom::Kind::kFloorDiv ? floorDivInt(*l, *r) : modInt(*l, *r);
      }
      prod = wrapMul(prod, v);
    }
    sum = wrapAdd(sum, prod);
  }
  return sum;
}

SymExpr SymExpr::substitute(const std::map<std::string, SymExpr>& repl) const {
  SymExpr result(0);
  for (const auto& t : terms_) {
    SymExpr prod(t.coeff);
    for (const auto& a : t.atoms) {
      if (a->kind == SymAtom::Kind::kSymbol) {
        auto it = repl.find(a->name);
        prod = prod * (it == repl.end() ? fromAtom(a) : it->second);
      } else {
        SymExpr l = a->lhs.substitute(repl), r = a->rhs.substitute(repl);
        prod = prod * (a->kind == SymAtom::Kind::kFloorDiv ? floorDiv(l, r) : mod(l, r));
      }
    }
    result = result + prod;
  }
  return result;
}

namespace {

// Lower bound of an atom, if known: symbols from the assumptions; floordiv/mod by a positive
// constant of a provably non-negative numerator are >= 0.
std::optional<int64_t> atomLowerBound(const SymAtom& a, const SymAssumptions& as) {
  if (a.kind == SymAtom::Kind::kSymbol) return as.lowerBound(a.name);
  auto c = a.rhs.constant();
  if (!c || *c <= 0) return std::nullopt;
  auto nonneg = proveGE(a.lhs, SymExpr(0), as);
  if (nonneg && *nonneg) return 0;
  return std::nullopt;
}

// d >= 0 for all assignments? Substitutes every atom v = lb + t (t >= 0) and checks that all
// coefficients of the expanded polynomial are non-negative.
bool provablyNonNegative(const SymExpr& d, const SymAssumptions& as) {
  if (auto c = d.constant()) return *c >= 0;
  // Lower bounds of every atom; unknown bound: no proof.
  std::map<std::string, int64_t> lbs;
  for (const auto& t : d.terms())
    for (const auto& a : t.atoms) {
      if (lbs.count(a->key)) continue;
      auto lb = atomLowerBound(*a, as);
      if (!lb) return false;
      lbs[a->key] = *lb;
    }
  // Fast path: with every atom >= lb >= 0 and every non-constant coefficient >= 0, the
  // polynomial is nondecreasing in each atom, so its minimum is its value at the bounds.
  bool monotone = true;
  for (const auto& [k, lb] : lbs) monotone &= lb >= 0;
  for (const auto& t : d.terms()) monotone &= t.atoms.empty() || t.coeff >= 0;
  if (monotone) {
    long double value = 0;  // wide enough not to overflow on realistic sizes
    for (const auto& t : d.terms()) {
      long double prod = static_cast<long double>(t.coeff);
      for (const auto& a : t.atoms) prod *= static_cast<long double>(lbs[a->key]);
      value += prod;
    }
    return value >= 0;
  }
  // General path: substitute atom = lb + t (t >= 0) and expand; all coefficients of the
  // expansion non-negative proves it. The expansion doubles per shifted factor, so it is
  // only tried when small; otherwise the answer is "not proven".
  constexpr int64_t kMaxExpandedTerms = 4096;
  int64_t budget = 0;
  for (const auto& t : d.terms()) {
    int64_t n = 1;
    for (const auto& a : t.atoms) {
      if (lbs[a->key] != 0) n *= 2;
      if (n > kMaxExpandedTerms) return false;
    }
    budget += n;
    if (budget > kMaxExpandedTerms) return false;
  }
  SymExpr shifted(0);
  for (const auto& t : d.terms()) {
    SymExpr prod(t.coeff);
    for (const auto& a : t.atoms) prod = prod * (SymExpr::symbol("$" + a->key) + SymExpr(lbs[a->key]));
    shifted = shifted + prod;
  }
  for (const auto& t : shifted.terms())
    if (t.coeff < 0) return false;
  return true;
}

}  // namespace

std::optional<bool> proveGE(const SymExpr& a, const SymExpr& b, const SymAssumptions& as) {
  SymExpr d = a - b;
  if (provablyNonNegative(d, as)) return true;
  if (provablyNonNegative(b - a - SymExpr(1), as)) return false;
  return std::nullopt;
}

std::optional<bool> proveEQ(const SymExpr& a, const SymExpr& b, const SymAssumptions& as) {
  if (a == b) return true;
  SymExpr d = a - b;
  if (d.isConstant()) return false;  // differ by a non-zero constant
  if (provablyNonNegative(d - SymExpr(1), as) || provablyNonNegative(-d - SymExpr(1), as)) return false;
  return std::nullopt;
}

}  // namespace plugsdk::ir
