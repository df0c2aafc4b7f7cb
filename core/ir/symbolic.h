// Symbolic integer expressions for tensor sizes: named size symbols combined with +, -, *,
// floordiv and mod, kept in a canonical polynomial form so that equal expressions compare
// equal, plus sound (incomplete) reasoning about equality and inequality.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace plugsdk::ir {

struct SymAtom;
using SymAtomPtr = std::shared_ptr<const SymAtom>;

/// An integer expression over size symbols. Immutable; cheap to copy.
/// Canonical form: a sum of terms coeff * (product of atoms), where an atom is a symbol,
/// floordiv(a, b) or mod(a, b); terms sorted, zero terms dropped. Division follows Python
/// (floor) semantics, as PyTorch's sympy-based shapes do.
class SymExpr {
 public:
  SymExpr() = default;     ///< the constant 0
  SymExpr(int64_t value);  // NOLINT: implicit, sizes are often constants
  static SymExpr symbol(const std::string& name);
  /// floor(a / b). `b` must not be the constant 0 (callers check; see isZero()).
  static SymExpr floorDiv(const SymExpr& a, const SymExpr& b);
  /// a - b * floor(a / b). `b` must not be the constant 0.
  static SymExpr mod(const SymExpr& a, const SymExpr& b);

  bool isConstant() const { return terms_.empty() || (terms_.size() == 1 && terms_[0].atoms.empty()); }
  std::optional<int64_t> constant() const;
  bool isZero() const { return terms_.empty(); }
  /// True for a single symbol with coefficient 1.
  bool isSymbol() const;

  /// Canonical text, e.g. "2*s0+1", "(s0+1)//2", "s1 % 4" (mod has spaces: "%x" is a value
  /// name in .pgraph). Parses back to an equal expression.
  std::string toString() const;
  /// Names of all symbols that occur, sorted, unique.
  std::vector<std::string> symbols() const;
  /// Value under a full assignment; nullopt if a symbol is unassigned or a divisor is 0.
  std::optional<int64_t> evaluate(const std::map<std::string, int64_t>& values) const;
  /// Replaces symbols by expressions.
  SymExpr substitute(const std::map<std::string, SymExpr>& repl) const;

  friend SymExpr operator+(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator*(const SymExpr& a, const SymExpr& b);
  SymExpr operator-() const { return SymExpr(0) - *this; }
  friend bool operator==(const SymExpr& a, const SymExpr& b) { return a.key() == b.key(); }
  friend bool operator!=(const SymExpr& a, const SymExpr& b) { return !(a == b); }
  friend bool operator<(const SymExpr& a, const SymExpr& b) { return a.key() < b.key(); }

  struct Term {
    int64_t coeff = 0;
    std::vector<SymAtomPtr> atoms;  ///< sorted by key; repeated atoms are powers
  };
  const std::vector<Term>& terms() const { return terms_; }
  /// Stable structural key (equal iff canonical forms are equal).
  const std::string& key() const;
  /// The expression made of one atom (used by the simplifier).
  static SymExpr fromAtom(const SymAtomPtr& atom);

 private:
  static SymExpr fromTerms(std::vector<Term> terms);
  std::vector<Term> terms_;
  mutable std::shared_ptr<const std::string> key_;
};

struct SymAtom {
  enum class Kind { kSymbol, kFloorDiv, kMod } kind;
  std::string name;  ///< for kSymbol
  SymExpr lhs, rhs;  ///< for kFloorDiv and kMod
  std::string key;   ///< canonical text of this atom
};

/// What is known about symbols: each is an integer >= its lower bound.
/// Sizes default to >= 1 (a size symbol never stands for a negative or, by default, empty dim).
struct SymAssumptions {
  int64_t defaultLowerBound = 1;
  std::map<std::string, int64_t> lowerBounds;
  int64_t lowerBound(const std::string& s) const {
    auto it = lowerBounds.find(s);
    return it == lowerBounds.end() ? defaultLowerBound : it->second;
  }
};

/// true: a >= b for every assignment; false: a < b for every assignment; nullopt: unknown.
std::optional<bool> proveGE(const SymExpr& a, const SymExpr& b, const SymAssumptions& as = {});
/// true: a == b always; false: a != b always; nullopt: depends on the symbols.
std::optional<bool> proveEQ(const SymExpr& a, const SymExpr& b, const SymAssumptions& as = {});

}  // namespace plugsdk::ir
