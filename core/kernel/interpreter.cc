// The kernel interpreter: index expressions compiled to small trees over variable slots,
// statements evaluated per grid point, reductions accumulated per loop.
#include "core/kernel/interpreter.h"

#include <cmath>
#include <limits>
#include <memory>

namespace plugsdk::kernel {

namespace {

using prims::ScalarOp;

/// An index expression compiled for fast evaluation.
struct CExpr {
  enum class Op { kConst, kSlot, kSum, kProduct, kFloorDiv, kMod } op = Op::kConst;
  int64_t value = 0;  ///< kConst; the coefficient of kProduct
  int slot = -1;      ///< kSlot
  std::vector<CExpr> kids;

  int64_t eval(const std::vector<int64_t>& env) const {
    switch (op) {
      case Op::kConst: return value;
      case Op::kSlot: return env[static_cast<size_t>(slot)];
      case Op::kSum: {
        uint64_t s = 0;
        for (const CExpr& k : kids) s += static_cast<uint64_t>(k.eval(env));
        return static_cast<int64_t>(s);
      }
      case Op::kProduct: {
        uint64_t p = static_cast<uint64_t>(value);
        for (const CExpr& k : kids) p *= static_cast<uint64_t>(k.eval(env));
        return static_cast<int64_t>(p);
      }
      case Op::kFloorDiv:
      case Op::kMod: {
        const int64_t a = kids[0].eval(env), b = kids[1].eval(env);
        if (b == 0) return 0;  // unreachable for valid programs; bounds checks catch the result
        int64_t q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
        return op == Op::kFloorDiv ? q : a - b * q;
      }
    }
    return 0;
  }
};

/// Slots: grid vars, loop vars, then one per SSA value (integer values used in indices).
struct Slots {
  size_t gridBase = 0, loopBase = 0, valueBase = 0;
  const std::map<std::string, int64_t>* symbols = nullptr;
};

StatusOr<CExpr> compile(const SymExpr& e, const Slots& s);

StatusOr<CExpr> compileAtom(const ir::SymAtom& a, const Slots& s) {
  CExpr c;
  if (a.kind == ir::SymAtom::Kind::kSymbol) {
    const std::string& n = a.name;
    auto digits = [&](size_t from) {
      return n.size() > from && n.find_first_not_of("0123456789", from) == std::string::npos;
    };
    if (n[0] == 'i' && digits(1)) {
      c.op = CExpr::Op::kSlot;
      c.slot = static_cast<int>(s.gridBase + std::stoul(n.substr(1)));
    } else if (n[0] == 'r' && digits(1)) {
      c.op = CExpr::Op::kSlot;
      c.slot = static_cast<int>(s.loopBase + std::stoul(n.substr(1)));
    } else if (n[0] == '%' && digits(1)) {
      c.op = CExpr::Op::kSlot;
      c.slot = static_cast<int>(s.valueBase + std::stoul(n.substr(1)));
    } else {
      auto it = s.symbols->find(n);
      if (it == s.symbols->end()) return invalidArgument("size symbol " + n + " has no value");
      c.value = it->second;
    }
    return c;
  }
  c.op = a.kind == ir::SymAtom::Kind::kFloorDiv ? CExpr::Op::kFloorDiv : CExpr::Op::kMod;
  ASSIGN_OR_RETURN(CExpr l, compile(a.lhs, s));
  ASSIGN_OR_RETURN(CExpr r, compile(a.rhs, s));
  c.kids = {std::move(l), std::move(r)};
  return c;
}

StatusOr<CExpr> compile(const SymExpr& e, const Slots& s) {
  CExpr sum;
  sum.op = CExpr::Op::kSum;
  for (const auto& t : e.terms()) {
    CExpr prod;
    prod.op = CExpr::Op::kProduct;
    prod.value = t.coeff;
    for (const auto& atom : t.atoms) {
      ASSIGN_OR_RETURN(CExpr a, compileAtom(*atom, s));
      prod.kids.push_back(std::move(a));
    }
    if (prod.kids.empty()) {
      CExpr c;
      c.value = t.coeff;
      sum.kids.push_back(std::move(c));
    } else {
      sum.kids.push_back(std::move(prod));
    }
  }
  if (sum.kids.size() == 1) return std::move(sum.kids[0]);
  return sum;
}

/// A statement with its index expressions compiled.
struct CStmt {
  const Stmt* s = nullptr;
  CExpr index;
  std::vector<CExpr> sizes;
  std::vector<CStmt> body;
};

StatusOr<std::vector<CStmt>> compileBody(const std::vector<Stmt>& body, const Slots& slots) {
  std::vector<CStmt> out;
  for (const Stmt& s : body) {
    CStmt c;
    c.s = &s;
    ASSIGN_OR_RETURN(c.index, compile(s.index, slots));
    for (const SymExpr& e : s.loopSizes) {
      ASSIGN_OR_RETURN(CExpr x, compile(e, slots));
      c.sizes.push_back(std::move(x));
    }
    ASSIGN_OR_RETURN(c.body, compileBody(s.body, slots));
    out.push_back(std::move(c));
  }
  return out;
}

double castFloat(double v, bool fromFloat, int64_t iv, DType to) {
  return exec::roundToFloatType(fromFloat ? v : static_cast<double>(iv), to);
}

class Runner {
 public:
  std::vector<DType> types_;  ///< dtype per value
  std::vector<int64_t> env_;  ///< index variables, then integer values

  Runner(const Kernel& k, const std::vector<exec::HostTensor*>& args, const Slots& slots)
      : env_(slots.valueBase + static_cast<size_t>(k.numValues), 0),
        k_(k),
        args_(args),
        slots_(slots),
        f_(static_cast<size_t>(k.numValues), 0.0),
        floating_(static_cast<size_t>(k.numValues), false) {}

  Status body(const std::vector<CStmt>& stmts) {
    for (const CStmt& c : stmts) RETURN_IF_ERROR(stmt(c));
    return Status::ok();
  }

 private:
  int64_t& iv(int id) { return env_[slots_.valueBase + static_cast<size_t>(id)]; }
  Status err(const std::string& m) const { return invalidArgument("kernel @" + k_.name + ": " + m); }

  void setF(int id, double v) {
    f_[static_cast<size_t>(id)] = v;
    floating_[static_cast<size_t>(id)] = true;
  }
  void setI(int id, int64_t v) {
    iv(id) = v;
    floating_[static_cast<size_t>(id)] = false;
  }

  StatusOr<int64_t> checkedOffset(const CStmt& c) {
    const int64_t off = c.index.eval(env_);
    const exec::HostTensor& t = *args_[static_cast<size_t>(c.s->arg)];
    if (off < 0 || off >= t.numel())
      return err(std::string(c.s->kind == StmtKind::kLoad ? "load from" : "store to") + " %" +
                 k_.args[static_cast<size_t>(c.s->arg)].name + " at element " + std::to_string(off) + ", outside its " +
                 std::to_string(t.numel()) + " elements");
    return off;
  }

  Status stmt(const CStmt& c) {
    const Stmt& s = *c.s;
    const bool fp = ir::isFloating(s.dtype);
    switch (s.kind) {
      case StmtKind::kLoad: {
        if (!s.operands.empty() && iv(s.operands[0]) == 0) {
          if (fp)
            setF(s.result, 0.0);
          else
            setI(s.result, 0);
          return Status::ok();
        }
        ASSIGN_OR_RETURN(int64_t off, checkedOffset(c));
        const exec::HostTensor& t = *args_[static_cast<size_t>(s.arg)];
        if (fp)
          setF(s.result, t.doubles()[static_cast<size_t>(off)]);
        else
          setI(s.result, t.ints()[static_cast<size_t>(off)]);
        return Status::ok();
      }
      case StmtKind::kConst:
        if (fp)
          setF(s.result, s.fvalue);
        else
          setI(s.result, s.ivalue);
        return Status::ok();
      case StmtKind::kIndex: setI(s.result, c.index.eval(env_)); return Status::ok();
      case StmtKind::kScalar: {
        const int a = s.operands[0], b = s.operands.size() > 1 ? s.operands[1] : a;
        if (floating_[static_cast<size_t>(a)]) {
          const double r = prims::evalFloat(s.op, f_[static_cast<size_t>(a)], f_[static_cast<size_t>(b)]);
          if (fp)
            setF(s.result, r);
          else
            setI(s.result, r != 0 ? 1 : 0);
        } else {
          auto r = prims::evalInt(s.op, iv(a), iv(b), operandType(a));
          if (!r) return err("integer division by zero (ZeroDivisionError)");
          setI(s.result, *r);
        }
        return Status::ok();
      }
      case StmtKind::kWhere: {
        const int pick = iv(s.operands[0]) != 0 ? s.operands[1] : s.operands[2];
        if (fp)
          setF(s.result, f_[static_cast<size_t>(pick)]);
        else
          setI(s.result, iv(pick));
        return Status::ok();
      }
      case StmtKind::kCast: {
        const int a = s.operands[0];
        const bool fromFloat = floating_[static_cast<size_t>(a)];
        const double fa = f_[static_cast<size_t>(a)];
        const int64_t ia = iv(a);
        if (fp)
          setF(s.result, castFloat(fa, fromFloat, ia, s.dtype));
        else if (s.dtype == DType::kBool)
          setI(s.result, (fromFloat ? fa != 0 : ia != 0) ? 1 : 0);
        else
          setI(s.result, fromFloat ? exec::doubleToIntType(fa, s.dtype) : exec::wrapToIntType(ia, s.dtype));
        return Status::ok();
      }
      case StmtKind::kRand:
        setF(s.result, prims::uniformAt(s.ivalue, c.index.eval(env_), prims::precisionBits(s.dtype)));
        return Status::ok();
      case StmtKind::kStore: {
        ASSIGN_OR_RETURN(int64_t off, checkedOffset(c));
        exec::HostTensor& t = *args_[static_cast<size_t>(s.arg)];
        const int v = s.operands[0];
        const auto o = static_cast<size_t>(off);
        if (t.isFloating()) {
          double x = f_[static_cast<size_t>(v)];
          if (s.combine != Combine::kNone) x = prims::evalFloat(combineOp(s.combine), t.doubles()[o], x);
          t.doubles()[o] = x;
        } else {
          int64_t x = iv(v);
          if (s.combine != Combine::kNone) x = *prims::evalInt(combineOp(s.combine), t.ints()[o], x, t.dtype());
          t.setInt(off, x);
        }
        return Status::ok();
      }
      case StmtKind::kReduce: return internalError("reduce outside a loop");
      case StmtKind::kCheck:
        if (iv(s.operands[0]) == 0) return err(s.message);
        return Status::ok();
      case StmtKind::kLoop: return loop(c);
    }
    return Status::ok();
  }

  /// Integer semantics need the operand's width.
  DType operandType(int id) const { return types_[static_cast<size_t>(id)]; }

  static ScalarOp combineOp(Combine c) {
    switch (c) {
      case Combine::kSum: return ScalarOp::kAdd;
      case Combine::kProd: return ScalarOp::kMul;
      case Combine::kMax: return ScalarOp::kMaximum;
      default: return ScalarOp::kMinimum;
    }
  }

  struct Acc {
    const Stmt* s;
    bool seen = false;
    double f = 0;
    int64_t i = 0;
    int64_t best = 0;  ///< argmax / argmin position
  };

  Status loop(const CStmt& c) {
    std::vector<int64_t> sizes;
    int64_t total = 1;
    for (const CExpr& e : c.sizes) {
      sizes.push_back(e.eval(env_));
      total *= sizes.back();
    }
    std::vector<Acc> accs;
    for (const CStmt& b : c.body)
      if (b.s->kind == StmtKind::kReduce) accs.push_back(Acc{b.s});
    for (int64_t pos = 0; pos < total; ++pos) {
      int64_t rest = pos;
      for (size_t d = sizes.size(); d-- > 0;) {
        env_[slots_.loopBase + d] = rest % sizes[d];
        rest /= sizes[d];
      }
      size_t ai = 0;
      for (const CStmt& b : c.body) {
        if (b.s->kind == StmtKind::kReduce) {
          accumulate(accs[ai++], b.s->operands[0], pos);
          continue;
        }
        RETURN_IF_ERROR(stmt(b));
      }
    }
    for (Acc& a : accs) RETURN_IF_ERROR(finish(a, total));
    return Status::ok();
  }

  void accumulate(Acc& a, int operand, int64_t pos) {
    const bool fp = floating_[static_cast<size_t>(operand)];
    const double f = f_[static_cast<size_t>(operand)];
    const int64_t i = iv(operand);
    const ReduceOp op = a.s->reduce;
    if (!a.seen) {
      a.seen = true;
      a.f = op == ReduceOp::kSum ? 0.0 : op == ReduceOp::kProd ? 1.0 : f;
      a.i = op == ReduceOp::kSum ? 0 : op == ReduceOp::kProd ? 1 : i;
      a.best = pos;
      if (op != ReduceOp::kSum && op != ReduceOp::kProd) return;
    }
    switch (op) {
      case ReduceOp::kSum:
        if (fp)
          a.f += f;
        else
          a.i = prims::wrapAdd(a.i, i);
        break;
      case ReduceOp::kProd:
        if (fp)
          a.f *= f;
        else
          a.i = prims::wrapMul(a.i, i);
        break;
      case ReduceOp::kMax:
      case ReduceOp::kMin: {
        const ScalarOp so = op == ReduceOp::kMax ? ScalarOp::kMaximum : ScalarOp::kMinimum;
        if (fp)
          a.f = prims::evalFloat(so, a.f, f);
        else
          a.i = op == ReduceOp::kMax ? std::max(a.i, i) : std::min(a.i, i);
        break;
      }
      case ReduceOp::kArgMax:
      case ReduceOp::kArgMin: {
        const bool isMax = op == ReduceOp::kArgMax;
        if (fp) {
          if (std::isnan(a.f)) break;  // the first NaN wins
          if (std::isnan(f) || (isMax ? f > a.f : f < a.f)) {
            a.f = f;
            a.best = pos;
          }
        } else if (isMax ? i > a.i : i < a.i) {
          a.i = i;
          a.best = pos;
        }
        break;
      }
    }
  }

  Status finish(const Acc& a, int64_t total) {
    const Stmt& s = *a.s;
    const ReduceOp op = s.reduce;
    if (total == 0 && op != ReduceOp::kSum && op != ReduceOp::kProd)
      return err(std::string("reduce ") + reduceOpName(op) + " over an empty loop (no identity)");
    if (op == ReduceOp::kArgMax || op == ReduceOp::kArgMin) {
      setI(s.result, a.best);
    } else if (ir::isFloating(s.dtype)) {
      setF(s.result, total == 0 ? (op == ReduceOp::kSum ? 0.0 : 1.0) : a.f);
    } else {
      setI(s.result, exec::wrapToIntType(total == 0 ? (op == ReduceOp::kSum ? 0 : 1) : a.i, s.dtype));
    }
    return Status::ok();
  }

 private:
  const Kernel& k_;
  const std::vector<exec::HostTensor*>& args_;
  Slots slots_;
  std::vector<double> f_;
  std::vector<bool> floating_;
};

void collectTypes(const std::vector<Stmt>& body, std::vector<DType>& types) {
  for (const Stmt& s : body) {
    if (s.result >= 0) types[static_cast<size_t>(s.result)] = s.dtype;
    collectTypes(s.body, types);
  }
}

size_t maxLoopRank(const std::vector<Stmt>& body) {
  size_t r = 0;
  for (const Stmt& s : body) r = std::max(r, s.loopSizes.size());
  return r;
}

}  // namespace

Status runKernel(const Kernel& k, const std::vector<exec::HostTensor*>& args,
                 const std::map<std::string, int64_t>& symbols) {
  if (args.size() != k.args.size())
    return invalidArgument("kernel @" + k.name + " takes " + std::to_string(k.args.size()) + " arguments, got " +
                           std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i] || args[i]->dtype() != k.args[i].dtype)
      return invalidArgument("kernel @" + k.name + ": argument %" + k.args[i].name + " needs " +
                             std::string(ir::dtypeName(k.args[i].dtype)) + " storage");
  Slots slots;
  slots.gridBase = 0;
  slots.loopBase = k.grid.size();
  slots.valueBase = slots.loopBase + maxLoopRank(k.body);
  slots.symbols = &symbols;
  ASSIGN_OR_RETURN(std::vector<CStmt> body, compileBody(k.body, slots));
  std::vector<int64_t> grid;
  int64_t points = 1;
  for (const SymExpr& g : k.grid) {
    auto v = g.evaluate(symbols);
    if (!v || *v < 0) return invalidArgument("kernel @" + k.name + ": cannot size grid dim " + g.toString());
    grid.push_back(*v);
    points *= *v;
  }
  Runner run(k, args, slots);
  run.types_.assign(static_cast<size_t>(k.numValues), DType::kI64);
  collectTypes(k.body, run.types_);
  for (int64_t p = 0; p < points; ++p) {
    int64_t rest = p;
    for (size_t d = grid.size(); d-- > 0;) {
      run.env_[d] = rest % grid[d];
      rest /= grid[d];
    }
    RETURN_IF_ERROR(run.body(body));
  }
  return Status::ok();
}

}  // namespace plugsdk::kernel
