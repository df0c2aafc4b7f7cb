// Index expressions simplified with their variables' ranges (see index_ranges.h).
#include "core/sched/index_ranges.h"

#include <algorithm>
#include <optional>

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

SymExpr simplifyAtom(const ir::SymAtomPtr& a, const Extents& ext) {
  if (a->kind == SymAtom::Kind::kSymbol) return SymExpr::fromAtom(a);
  const SymExpr lhs = simplifyInRanges(a->lhs, ext), rhs = simplifyInRanges(a->rhs, ext);
  const std::optional<int64_t> c = rhs.constant();
  if (c && *c > 0) {
    const std::optional<Interval> r = rangeOf(lhs, ext);
    if (r && r->lo >= 0 && r->hi < *c) return a->kind == SymAtom::Kind::kFloorDiv ? SymExpr(0) : lhs;
  }
  return a->kind == SymAtom::Kind::kFloorDiv ? SymExpr::floorDiv(lhs, rhs) : SymExpr::mod(lhs, rhs);
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
  return out;
}

void simplifyKernelIndices(kernel::Kernel& k) {
  Extents ext;
  for (size_t d = 0; d < k.grid.size(); ++d)
    if (const std::optional<int64_t> n = k.grid[d].constant()) ext[kernel::gridVar(d)] = *n;
  simplifyBody(k.body, ext);
}

}  // namespace plugsdk::sched
