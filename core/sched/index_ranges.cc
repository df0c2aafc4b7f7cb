// Index expressions simplified with their variables' ranges (see index_ranges.h).
#include "core/sched/index_ranges.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <vector>

namespace plugsdk::sched {

namespace {

using ir::SymAtom;
using ir::SymExpr;
using Extents = std::map<std::string, int64_t>;

/// Values far below int64's limits, so products and sums of two never overflow.
constexpr int64_t kBig = int64_t{1} << 40;

struct Interval {
  int64_t lo, hi;
};

std::optional<Interval> rangeOf(const SymExpr& e, const Extents& ext);

std::optional<Interval> atomRange(const SymAtom& a, const Extents& ext) {
  if (a.kind == SymAtom::Kind::kSymbol) {
    auto it = ext.find(a.name);
    if (it == ext.end() || it->second <= 0 || it->second > kBig) return std::nullopt;
    return Interval{0, it->second - 1};
  }
  const std::optional<int64_t> c = a.rhs.constant();
  if (!c || *c <= 0) return std::nullopt;
  if (a.kind == SymAtom::Kind::kMod) return Interval{0, *c - 1};  // floor semantics: [0, c) for c > 0
  const std::optional<Interval> x = rangeOf(a.lhs, ext);
  if (!x || x->lo < 0) return std::nullopt;
  return Interval{x->lo / *c, x->hi / *c};
}

std::optional<Interval> rangeOf(const SymExpr& e, const Extents& ext) {
  int64_t lo = 0, hi = 0;
  for (const SymExpr::Term& t : e.terms()) {
    if (t.coeff > kBig || t.coeff < -kBig) return std::nullopt;
    int64_t plo = 1, phi = 1;  // the product of the atoms: every factor is >= 0
    for (const ir::SymAtomPtr& a : t.atoms) {
      const std::optional<Interval> r = atomRange(*a, ext);
      if (!r || r->lo < 0 || r->hi > kBig || phi > kBig / std::max<int64_t>(r->hi, 1)) return std::nullopt;
      plo *= r->lo;
      phi *= r->hi;
    }
    const int64_t a = t.coeff * plo, b = t.coeff * phi;
    lo += std::min(a, b);
    hi += std::max(a, b);
    if (lo < -kBig || hi > kBig) return std::nullopt;
  }
  return Interval{lo, hi};
}

/// A term of a canonical sum as an expression of its own: coeff * the product of its atoms.
SymExpr termExpr(const SymExpr::Term& t) {
  SymExpr e(t.coeff);
  for (const ir::SymAtomPtr& a : t.atoms) e = e * SymExpr::fromAtom(a);
  return e;
}

/// The dividend split as g * x + y for a g > 1 dividing the divisor c, with y in [0, g):
/// then x // (c / g) and g * (x % (c / g)) + y are the floordiv and the mod (x is an
/// integer, so y / g < 1 never carries into the quotient). A flattened index divided by a
/// row of rows: (144 * i2 + i3) // 2016 with i3 < 144 is i2 // 14. The largest such g wins.
struct Split {
  int64_t g = 0;
  SymExpr x, y;
};
std::optional<Split> splitByFactor(const SymExpr& lhs, int64_t c, const Extents& ext) {
  std::vector<int64_t> candidates;
  for (const SymExpr::Term& t : lhs.terms())
    if (!t.atoms.empty()) candidates.push_back(std::gcd(t.coeff, c));
  std::sort(candidates.rbegin(), candidates.rend());
  for (int64_t g : candidates) {
    if (g <= 1) break;
    Split s;
    s.g = g;
    for (const SymExpr::Term& t : lhs.terms()) {
      if (!t.atoms.empty() && t.coeff % g == 0)
        s.x = s.x + termExpr(SymExpr::Term{t.coeff / g, t.atoms});
      else
        s.y = s.y + termExpr(t);
    }
    const std::optional<Interval> r = rangeOf(s.y, ext);
    if (r && r->lo >= 0 && r->hi < g) return s;
  }
  return std::nullopt;
}

SymExpr simplifyAtom(const ir::SymAtomPtr& a, const Extents& ext) {
  if (a->kind == SymAtom::Kind::kSymbol) return SymExpr::fromAtom(a);
  const SymExpr lhs = simplifyInRanges(a->lhs, ext), rhs = simplifyInRanges(a->rhs, ext);
  const bool div = a->kind == SymAtom::Kind::kFloorDiv;
  const std::optional<int64_t> c = rhs.constant();
  if (c && *c > 0) {
    const std::optional<Interval> r = rangeOf(lhs, ext);
    if (r && r->lo >= 0 && r->hi < *c) return div ? SymExpr(0) : lhs;
    if (const std::optional<Split> s = splitByFactor(lhs, *c, ext)) {
      const SymExpr k(*c / s->g);
      if (div) return simplifyInRanges(SymExpr::floorDiv(s->x, k), ext);
      return SymExpr(s->g) * simplifyInRanges(SymExpr::mod(s->x, k), ext) + s->y;
    }
  }
  return div ? SymExpr::floorDiv(lhs, rhs) : SymExpr::mod(lhs, rhs);
}

/// c * (x // c) + x % c is x (floor division, any integer x): k * c * (x // c) + k * (x % c)
/// terms are folded into k * x. A delinearization read back in the same order leaves them:
/// 28 * (i3 // 28) + i3 % 28.
SymExpr foldDivModPairs(const SymExpr& e) {
  const std::vector<SymExpr::Term>& terms = e.terms();
  for (size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].atoms.size() != 1 || terms[i].atoms[0]->kind != SymAtom::Kind::kMod) continue;
    const SymAtom& m = *terms[i].atoms[0];
    const std::optional<int64_t> c = m.rhs.constant();
    if (!c || *c == 0) continue;
    const int64_t k = terms[i].coeff;
    for (size_t j = 0; j < terms.size(); ++j) {
      if (terms[j].atoms.size() != 1 || terms[j].atoms[0]->kind != SymAtom::Kind::kFloorDiv) continue;
      const SymAtom& d = *terms[j].atoms[0];
      if (d.rhs != m.rhs || d.lhs != m.lhs || terms[j].coeff != k * *c) continue;
      return foldDivModPairs(e - termExpr(terms[i]) - termExpr(terms[j]) + k * m.lhs);
    }
  }
  return e;
}

void simplifyBody(std::vector<kernel::Stmt>& body, Extents& ext) {
  for (kernel::Stmt& s : body) {
    switch (s.kind) {
      case kernel::StmtKind::kLoad:
      case kernel::StmtKind::kStore:
      case kernel::StmtKind::kIndex:
      case kernel::StmtKind::kRand: s.index = simplifyInRanges(s.index, ext); break;
      case kernel::StmtKind::kLoop: {
        Extents inner = ext;
        for (size_t d = 0; d < s.loopSizes.size(); ++d) {
          const std::optional<int64_t> n = s.loopSizes[d].constant();
          if (n)
            inner[kernel::loopVar(d)] = *n;
          else
            inner.erase(kernel::loopVar(d));
        }
        simplifyBody(s.body, inner);
        break;
      }
      default: break;
    }
  }
}

}  // namespace

SymExpr simplifyInRanges(const SymExpr& e, const Extents& extents) {
  bool any = false;
  for (const SymExpr::Term& t : e.terms())
    for (const ir::SymAtomPtr& a : t.atoms) any = any || a->kind != SymAtom::Kind::kSymbol;
  if (!any) return e;
  SymExpr out(0);
  for (const SymExpr::Term& t : e.terms()) {
    SymExpr term(t.coeff);
    for (const ir::SymAtomPtr& a : t.atoms) term = term * simplifyAtom(a, extents);
    out = out + term;
  }
  return foldDivModPairs(out);
}

void simplifyKernelIndices(kernel::Kernel& k) {
  Extents ext;
  for (size_t d = 0; d < k.grid.size(); ++d)
    if (const std::optional<int64_t> n = k.grid[d].constant()) ext[kernel::gridVar(d)] = *n;
  simplifyBody(k.body, ext);
}

}  // namespace plugsdk::sched
