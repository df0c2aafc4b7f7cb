// plugsdk/kernel_view.hpp -- read-only C++17 helpers over the ABI's kernel encoding
// (plugsdk_kernel_t): a validating view that walks statements with loop bodies as nested
// ranges, and an evaluator of the postfix index programs with Python floor semantics.
// Header-only; includes only plugsdk.h, status.hpp and the standard library. Part of the
// C++ layer (plugsdk.hpp) but usable on its own: it defines nothing the ABI declares.
//
//   plugsdk::sdk::KernelView k(*args->kernel);          // after KernelView::validate
//   for (const plugsdk::sdk::StmtRef s : k.body()) {
//     if (s->kind == PLUGSDK_STMT_LOOP)
//       for (const plugsdk::sdk::StmtRef t : s.body()) { ... }
//   }
//   auto off = k.evalIndex(s->index, grid, loop, symbols, [&](int32_t v) { return ints[v]; });
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "plugsdk/plugsdk.h"
#include "plugsdk/status.hpp"

namespace plugsdk::sdk {

/// Python's `a // b` (rounds toward negative infinity). b must not be 0, and
/// (INT64_MIN, -1) overflows: evalIndex checks both before calling it.
constexpr int64_t floorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// Python's `a % b` (the result has the sign of b). b must not be 0.
constexpr int64_t floorMod(int64_t a, int64_t b) {
  if (b == -1) return 0;  // a % -1 is 0, and INT64_MIN % -1 would trap
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/// The values an index program reads, besides its constants.
struct IndexEnv {
  Span<const int64_t> grid;     ///< i0, i1, ...: the grid point
  Span<const int64_t> loop;     ///< r0, r1, ...: the enclosing loop's point (empty outside loops)
  Span<const int64_t> symbols;  ///< the launch values, in the kernel's symbols order
};

namespace detail {

inline bool addOverflows(int64_t a, int64_t b, int64_t* out) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_add_overflow(a, b, out);
#else
  *out = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  return (b > 0 && a > std::numeric_limits<int64_t>::max() - b) ||
         (b < 0 && a < std::numeric_limits<int64_t>::min() - b);
#endif
}
inline bool subOverflows(int64_t a, int64_t b, int64_t* out) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_sub_overflow(a, b, out);
#else
  *out = static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  return (b < 0 && a > std::numeric_limits<int64_t>::max() + b) ||
         (b > 0 && a < std::numeric_limits<int64_t>::min() + b);
#endif
}
inline bool mulOverflows(int64_t a, int64_t b, int64_t* out) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_mul_overflow(a, b, out);
#else
  *out = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  return a != 0 && (*out / a != b || (a == -1 && b == std::numeric_limits<int64_t>::min()));
#endif
}

inline const char* indexOpName(uint32_t op) {
  static const char* const kNames[] = {"CONST", "GRID_VAR", "LOOP_VAR", "SYMBOL",   "VALUE",
                                       "ADD",   "SUB",      "MUL",      "FLOORDIV", "MOD"};
  return op < sizeof(kNames) / sizeof(kNames[0]) ? kNames[op] : "unknown";
}

}  // namespace detail

/// Evaluates the postfix program `expr` (a range of `pool`) to an int64 with Python floor
/// semantics for FLOORDIV and MOD. `value(id)` returns the integer SSA value %id for VALUE
/// operands (indirect indices). Errors (OUT_OF_RANGE or INVALID_ARGUMENT): a variable,
/// symbol or range outside what is given, a malformed program, division by zero, overflow.
template <typename ValueFn>
StatusOr<int64_t> evalIndex(Span<const plugsdk_index_insn_t> pool, plugsdk_index_expr_t expr, const IndexEnv& env,
                            ValueFn&& value) {
  if (static_cast<uint64_t>(expr.first) + expr.count > pool.size())
    return invalidArgument("index program [" + std::to_string(expr.first) + ", +" + std::to_string(expr.count) +
                           ") is outside the pool of " + std::to_string(pool.size()) + " instructions");
  // The stack never holds more values than the program has instructions.
  int64_t small[32];
  std::vector<int64_t> large;
  int64_t* stack = small;
  if (expr.count > 32) {
    large.resize(expr.count);
    stack = large.data();
  }
  size_t depth = 0;
  auto bad = [&](const std::string& why, uint32_t at) {
    return outOfRange("index program at instruction " + std::to_string(expr.first + at) + " (" +
                      detail::indexOpName(pool[expr.first + at].op) + "): " + why);
  };
  for (uint32_t i = 0; i < expr.count; ++i) {
    const plugsdk_index_insn_t& in = pool[expr.first + i];
    const int64_t operand = in.operand;
    switch (in.op) {
      case PLUGSDK_INDEX_CONST: stack[depth++] = operand; continue;
      case PLUGSDK_INDEX_GRID_VAR:
        if (operand < 0 || static_cast<uint64_t>(operand) >= env.grid.size())
          return bad("i" + std::to_string(operand) + " with a grid of rank " + std::to_string(env.grid.size()), i);
        stack[depth++] = env.grid[static_cast<size_t>(operand)];
        continue;
      case PLUGSDK_INDEX_LOOP_VAR:
        if (operand < 0 || static_cast<uint64_t>(operand) >= env.loop.size())
          return bad("r" + std::to_string(operand) + " with a loop of rank " + std::to_string(env.loop.size()), i);
        stack[depth++] = env.loop[static_cast<size_t>(operand)];
        continue;
      case PLUGSDK_INDEX_SYMBOL:
        if (operand < 0 || static_cast<uint64_t>(operand) >= env.symbols.size())
          return bad("symbol " + std::to_string(operand) + " with " + std::to_string(env.symbols.size()) + " values",
                     i);
        stack[depth++] = env.symbols[static_cast<size_t>(operand)];
        continue;
      case PLUGSDK_INDEX_VALUE:
        if (operand < 0 || operand > std::numeric_limits<int32_t>::max())
          return bad("value %" + std::to_string(operand), i);
        stack[depth++] = value(static_cast<int32_t>(operand));
        continue;
      default: break;
    }
    if (in.op > PLUGSDK_INDEX_MOD) return invalidArgument(bad("unknown op " + std::to_string(in.op), i).message());
    if (depth < 2) return invalidArgument(bad("the stack underflows", i).message());
    const int64_t b = stack[--depth];
    const int64_t a = stack[depth - 1];
    int64_t r = 0;
    bool overflow = false;
    switch (in.op) {
      case PLUGSDK_INDEX_ADD: overflow = detail::addOverflows(a, b, &r); break;
      case PLUGSDK_INDEX_SUB: overflow = detail::subOverflows(a, b, &r); break;
      case PLUGSDK_INDEX_MUL: overflow = detail::mulOverflows(a, b, &r); break;
      default:  // FLOORDIV, MOD
        if (b == 0) return bad("division by zero", i);
        overflow = in.op == PLUGSDK_INDEX_FLOORDIV && a == std::numeric_limits<int64_t>::min() && b == -1;
        if (!overflow) r = in.op == PLUGSDK_INDEX_FLOORDIV ? floorDiv(a, b) : floorMod(a, b);
    }
    if (overflow) return bad(std::to_string(a) + " and " + std::to_string(b) + " overflow int64", i);
    stack[depth - 1] = r;
  }
  if (depth != 1)
    return invalidArgument("index program [" + std::to_string(expr.first) + ", +" + std::to_string(expr.count) +
                           ") leaves " + std::to_string(depth) + " values, not 1");
  return stack[0];
}

/// evalIndex for programs without VALUE operands (a VALUE operand is then an error).
inline StatusOr<int64_t> evalIndex(Span<const plugsdk_index_insn_t> pool, plugsdk_index_expr_t expr,
                                   const IndexEnv& env) {
  bool sawValue = false;
  StatusOr<int64_t> r = evalIndex(pool, expr, env, [&](int32_t) {
    sawValue = true;
    return int64_t{0};
  });
  if (sawValue) return outOfRange("index program reads an SSA value and no value lookup was given");
  return r;
}

class KernelView;
class StmtRange;

/// One statement of a kernel in a KernelView: `->` reads its fields; body() is a LOOP's body.
class StmtRef {
 public:
  StmtRef(const KernelView& kernel, size_t position) : kernel_(&kernel), position_(position) {}
  /// Its position in the flat statement array (kernel.stmts).
  size_t position() const { return position_; }
  const plugsdk_stmt_t& stmt() const;
  const plugsdk_stmt_t* operator->() const { return &stmt(); }
  /// Whether it is a LOOP.
  bool isLoop() const { return stmt().kind == PLUGSDK_STMT_LOOP; }
  /// A LOOP's body (the body_count statements that follow it, nested loops skipped as one);
  /// an empty range for any other statement.
  StmtRange body() const;

 private:
  const KernelView* kernel_;
  size_t position_;
};

/// The statements [begin, end) of the flat array seen as one block: iterating yields each
/// statement of the block and steps over a LOOP's body, which its StmtRef::body() yields.
class StmtRange {
 public:
  class Iterator {
   public:
    Iterator(const KernelView& k, size_t pos) : kernel_(&k), pos_(pos) {}
    StmtRef operator*() const { return StmtRef(*kernel_, pos_); }
    Iterator& operator++();
    bool operator==(const Iterator& o) const { return pos_ == o.pos_; }
    bool operator!=(const Iterator& o) const { return pos_ != o.pos_; }

   private:
    const KernelView* kernel_;
    size_t pos_;
  };
  StmtRange(const KernelView& k, size_t begin, size_t end) : kernel_(&k), begin_(begin), end_(end) {}
  Iterator begin() const { return Iterator(*kernel_, begin_); }
  Iterator end() const { return Iterator(*kernel_, end_); }
  bool empty() const { return begin_ == end_; }
  /// Flat positions [first(), last()) that the block spans, loop bodies included.
  size_t first() const { return begin_; }
  size_t last() const { return end_; }

 private:
  const KernelView* kernel_;
  size_t begin_, end_;
};

/// A read-only view of a plugsdk_kernel_t (borrowed: the kernel must outlive the view).
/// Arrays are stepped by the kernel's own arg_size and stmt_size, never by sizeof, so a
/// kernel from a core of a newer minor version (longer elements) reads correctly.
/// Call validate() first on a kernel from outside: the accessors do not check bounds.
class KernelView {
 public:
  explicit KernelView(const plugsdk_kernel_t& k) : k_(&k) {}

  /// Checks everything the accessors and evalIndex rely on: struct and element sizes,
  /// non-NULL arrays, argument, value and symbol ids in range, every index program well
  /// formed (in the pool, balanced stack, known ops, variables in scope), and loop bodies
  /// nested inside their parents. INVALID_ARGUMENT naming the statement otherwise.
  static Status validate(const plugsdk_kernel_t& k);

  /// The raw kernel.
  const plugsdk_kernel_t& raw() const { return *k_; }
  std::string_view name() const { return k_->name ? k_->name : ""; }
  /// The kernel-IR text form of the same kernel (docs/kernel-ir.md).
  std::string_view text() const { return k_->text ? k_->text : ""; }

  size_t numArgs() const { return k_->num_args; }
  /// Argument i (stepped by arg_size).
  const plugsdk_kernel_arg_t& arg(size_t i) const {
    return *reinterpret_cast<const plugsdk_kernel_arg_t*>(reinterpret_cast<const char*>(k_->args) + i * k_->arg_size);
  }
  /// The grid rank and the size expression of grid dim d.
  size_t numGrid() const { return k_->num_grid; }
  plugsdk_index_expr_t grid(size_t d) const { return k_->grid[d]; }

  /// All statements, flat (a loop's body follows it).
  size_t numStmts() const { return k_->num_stmts; }
  /// Statement i of the flat array (stepped by stmt_size).
  const plugsdk_stmt_t& stmt(size_t i) const {
    return *reinterpret_cast<const plugsdk_stmt_t*>(reinterpret_cast<const char*>(k_->stmts) + i * k_->stmt_size);
  }
  /// The top-level statements, each LOOP with its body nested.
  StmtRange body() const { return StmtRange(*this, 0, k_->num_stmts); }

  size_t numSymbols() const { return k_->num_symbols; }
  std::string_view symbol(size_t i) const { return k_->symbols[i] ? k_->symbols[i] : ""; }
  uint32_t numValues() const { return k_->num_values; }

  /// The instruction pool that every index expression of this kernel indexes.
  Span<const plugsdk_index_insn_t> indexPool() const { return {k_->index_insns, k_->num_index_insns}; }
  /// The instructions of one expression.
  Span<const plugsdk_index_insn_t> program(plugsdk_index_expr_t e) const {
    return {k_->index_insns + e.first, e.count};
  }

  /// evalIndex over this kernel's pool.
  template <typename ValueFn>
  StatusOr<int64_t> evalIndex(plugsdk_index_expr_t e, const IndexEnv& env, ValueFn&& value) const {
    return ::plugsdk::sdk::evalIndex(indexPool(), e, env, std::forward<ValueFn>(value));
  }
  StatusOr<int64_t> evalIndex(plugsdk_index_expr_t e, const IndexEnv& env) const {
    return ::plugsdk::sdk::evalIndex(indexPool(), e, env);
  }
  /// The grid's extents for the launch values `symbols`.
  StatusOr<std::vector<int64_t>> gridSizes(Span<const int64_t> symbols) const {
    std::vector<int64_t> out;
    for (size_t d = 0; d < numGrid(); ++d) {
      StatusOr<int64_t> v = evalIndex(grid(d), IndexEnv{{}, {}, symbols});
      if (!v.isOk()) return v.status().withContext("grid dim " + std::to_string(d));
      out.push_back(*v);
    }
    return out;
  }

 private:
  const plugsdk_kernel_t* k_;
};

inline const plugsdk_stmt_t& StmtRef::stmt() const { return kernel_->stmt(position_); }

inline StmtRange StmtRef::body() const {
  const plugsdk_stmt_t& s = stmt();
  const size_t n = s.kind == PLUGSDK_STMT_LOOP ? s.body_count : 0;
  return StmtRange(*kernel_, position_ + 1, position_ + 1 + n);
}

inline StmtRange::Iterator& StmtRange::Iterator::operator++() {
  const plugsdk_stmt_t& s = kernel_->stmt(pos_);
  pos_ += 1 + (s.kind == PLUGSDK_STMT_LOOP ? s.body_count : 0);
  return *this;
}

namespace detail {

/// What an index program may read where it appears.
struct IndexScope {
  size_t gridRank;    ///< i<n> allowed for n < gridRank
  size_t loopRank;    ///< r<n> allowed for n < loopRank
  size_t numSymbols;  ///< symbol operands allowed below this
  size_t numValues;   ///< %<n> allowed for n < numValues (0: none)
};

/// Checks one program statically: in the pool, known ops, operands in scope, a balanced stack.
inline Status checkProgram(Span<const plugsdk_index_insn_t> pool, plugsdk_index_expr_t e, const IndexScope& scope) {
  if (e.count == 0) return invalidArgument("an empty index program");
  if (static_cast<uint64_t>(e.first) + e.count > pool.size())
    return invalidArgument("index program [" + std::to_string(e.first) + ", +" + std::to_string(e.count) +
                           ") is outside the pool of " + std::to_string(pool.size()) + " instructions");
  size_t depth = 0;
  for (uint32_t i = 0; i < e.count; ++i) {
    const plugsdk_index_insn_t& in = pool[e.first + i];
    const std::string at = "index instruction " + std::to_string(e.first + i) + " (" + indexOpName(in.op) + ")";
    const int64_t x = in.operand;
    switch (in.op) {
      case PLUGSDK_INDEX_CONST: break;
      case PLUGSDK_INDEX_GRID_VAR:
        if (x < 0 || static_cast<uint64_t>(x) >= scope.gridRank)
          return invalidArgument(at + ": i" + std::to_string(x) + " is not in scope (grid rank " +
                                 std::to_string(scope.gridRank) + ")");
        break;
      case PLUGSDK_INDEX_LOOP_VAR:
        if (x < 0 || static_cast<uint64_t>(x) >= scope.loopRank)
          return invalidArgument(at + ": r" + std::to_string(x) + " is not in scope (loop rank " +
                                 std::to_string(scope.loopRank) + ")");
        break;
      case PLUGSDK_INDEX_SYMBOL:
        if (x < 0 || static_cast<uint64_t>(x) >= scope.numSymbols)
          return invalidArgument(at + ": symbol " + std::to_string(x) + " of " + std::to_string(scope.numSymbols));
        break;
      case PLUGSDK_INDEX_VALUE:
        if (x < 0 || static_cast<uint64_t>(x) >= scope.numValues)
          return invalidArgument(at + ": value %" + std::to_string(x) + " is not in scope");
        break;
      case PLUGSDK_INDEX_ADD:
      case PLUGSDK_INDEX_SUB:
      case PLUGSDK_INDEX_MUL:
      case PLUGSDK_INDEX_FLOORDIV:
      case PLUGSDK_INDEX_MOD:
        if (depth < 2) return invalidArgument(at + ": the stack underflows");
        depth -= 2;
        break;
      default: return invalidArgument(at + ": unknown op " + std::to_string(in.op));
    }
    ++depth;
  }
  if (depth != 1) return invalidArgument("an index program leaves " + std::to_string(depth) + " values, not 1");
  return Status::ok();
}

inline bool usesIndex(uint32_t kind) {
  return kind == PLUGSDK_STMT_LOAD || kind == PLUGSDK_STMT_STORE || kind == PLUGSDK_STMT_INDEX ||
         kind == PLUGSDK_STMT_RAND;
}

/// Checks statements [begin, end) as one block inside a loop of rank `loopRank` (0: top level).
inline Status checkBlock(const KernelView& v, size_t begin, size_t end, size_t loopRank) {
  const plugsdk_kernel_t& k = v.raw();
  for (size_t i = begin; i < end; ++i) {
    const plugsdk_stmt_t& s = v.stmt(i);
    auto fail = [&](const std::string& why) { return invalidArgument("statement " + std::to_string(i) + ": " + why); };
    if (s.kind > PLUGSDK_STMT_CHECK) return fail("unknown kind " + std::to_string(s.kind));
    if (s.num_operands > 3) return fail(std::to_string(s.num_operands) + " operands (at most 3)");
    for (uint32_t o = 0; o < s.num_operands; ++o)
      if (s.operands[o] < 0 || static_cast<uint32_t>(s.operands[o]) >= k.num_values)
        return fail("operand %" + std::to_string(s.operands[o]) + " of " + std::to_string(k.num_values) + " values");
    if (s.result < -1 || (s.result >= 0 && static_cast<uint32_t>(s.result) >= k.num_values))
      return fail("result %" + std::to_string(s.result) + " of " + std::to_string(k.num_values) + " values");
    if ((s.kind == PLUGSDK_STMT_LOAD || s.kind == PLUGSDK_STMT_STORE) &&
        (s.arg < 0 || static_cast<size_t>(s.arg) >= k.num_args))
      return fail("argument " + std::to_string(s.arg) + " of " + std::to_string(k.num_args));
    if (s.kind == PLUGSDK_STMT_CHECK && !s.message) return fail("a CHECK without a message");
    if (usesIndex(s.kind)) {
      Status st = checkProgram(v.indexPool(), s.index, IndexScope{k.num_grid, loopRank, k.num_symbols, k.num_values});
      if (!st.isOk()) return st.withContext("statement " + std::to_string(i));
    }
    if (s.kind != PLUGSDK_STMT_LOOP) continue;
    // Rank 0 is legal: the empty product, one iteration (a reduction over no dims).
    if (s.num_loop_sizes > 0 && !s.loop_sizes) return fail("a LOOP without sizes");
    if (s.body_count > end - i - 1)
      return fail("a LOOP body of " + std::to_string(s.body_count) + " statements past the end of its block");
    for (uint32_t d = 0; d < s.num_loop_sizes; ++d) {
      Status st = checkProgram(v.indexPool(), s.loop_sizes[d], IndexScope{0, 0, k.num_symbols, 0});
      if (!st.isOk()) return st.withContext("statement " + std::to_string(i) + ": loop size " + std::to_string(d));
    }
    Status st = checkBlock(v, i + 1, i + 1 + s.body_count, s.num_loop_sizes);
    if (!st.isOk()) return st;
    i += s.body_count;
  }
  return Status::ok();
}

}  // namespace detail

inline Status KernelView::validate(const plugsdk_kernel_t& k) {
  constexpr size_t kNeed = PLUGSDK_SIZE_THROUGH(plugsdk_kernel_t, num_values);
  if (k.struct_size < kNeed)
    return invalidArgument("kernel struct_size is " + std::to_string(k.struct_size) + "; ABI 1.0 needs at least " +
                           std::to_string(kNeed));
  constexpr size_t kArg = PLUGSDK_SIZE_THROUGH(plugsdk_kernel_arg_t, access);
  constexpr size_t kStmt = PLUGSDK_SIZE_THROUGH(plugsdk_stmt_t, message);
  if (k.arg_size < kArg || k.arg_size % alignof(plugsdk_kernel_arg_t) != 0)
    return invalidArgument("kernel arg_size is " + std::to_string(k.arg_size) + "; ABI 1.0 needs at least " +
                           std::to_string(kArg) + ", aligned");
  if (k.stmt_size < kStmt || k.stmt_size % alignof(plugsdk_stmt_t) != 0)
    return invalidArgument("kernel stmt_size is " + std::to_string(k.stmt_size) + "; ABI 1.0 needs at least " +
                           std::to_string(kStmt) + ", aligned");
  if ((k.num_args && !k.args) || (k.num_grid && !k.grid) || (k.num_stmts && !k.stmts) ||
      (k.num_index_insns && !k.index_insns) || (k.num_symbols && !k.symbols))
    return invalidArgument("kernel has a NULL array with a nonzero count");
  for (size_t i = 0; i < k.num_symbols; ++i)
    if (!k.symbols[i]) return invalidArgument("kernel symbol " + std::to_string(i) + " is NULL");
  KernelView v(k);
  for (size_t d = 0; d < k.num_grid; ++d) {
    Status st = detail::checkProgram(v.indexPool(), k.grid[d], detail::IndexScope{0, 0, k.num_symbols, 0});
    if (!st.isOk()) return st.withContext("grid dim " + std::to_string(d));
  }
  return detail::checkBlock(v, 0, k.num_stmts, 0);
}

}  // namespace plugsdk::sdk
