// Kernel IR helpers: names, symbol collection and the verifier.
#include "core/kernel/kernel_ir.h"

#include <set>

namespace plugsdk::kernel {

const char* reduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kProd: return "prod";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
    case ReduceOp::kArgMax: return "argmax";
    case ReduceOp::kArgMin: return "argmin";
  }
  return "?";
}

const char* combineName(Combine c) {
  switch (c) {
    case Combine::kNone: return "none";
    case Combine::kSum: return "sum";
    case Combine::kProd: return "prod";
    case Combine::kMax: return "max";
    case Combine::kMin: return "min";
  }
  return "?";
}

std::string gridVar(size_t d) { return "i" + std::to_string(d); }
std::string loopVar(size_t d) { return "r" + std::to_string(d); }
std::string valueSymbol(int id) { return "%" + std::to_string(id); }
SymExpr valueRef(int id) { return SymExpr::symbol(valueSymbol(id)); }

namespace {

bool isIndexVar(const std::string& s) {
  if (s.size() < 2 || (s[0] != 'i' && s[0] != 'r')) return false;
  for (size_t i = 1; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

void collectSymbols(const std::vector<Stmt>& body, std::set<std::string>& out) {
  for (const Stmt& s : body) {
    for (const auto& n : s.index.symbols())
      if (!isIndexVar(n) && n[0] != '%') out.insert(n);
    for (const SymExpr& e : s.loopSizes)
      for (const auto& n : e.symbols()) out.insert(n);
    collectSymbols(s.body, out);
  }
}

int64_t countStmts(const std::vector<Stmt>& body) {
  int64_t n = 0;
  for (const Stmt& s : body) n += 1 + countStmts(s.body);
  return n;
}

struct Verifier {
  const Kernel& k;
  std::vector<int> defined;  ///< value id -> scope depth where defined, -1 undefined
  std::vector<DType> types;
  std::set<std::string> vars;

  Status err(const std::string& msg) const { return invalidArgument("kernel @" + k.name + ": " + msg); }

  Status checkValue(int id, const std::string& where) const {
    if (id < 0 || id >= k.numValues || defined[static_cast<size_t>(id)] < 0)
      return err(where + " uses %" + std::to_string(id) + " before it is defined (or out of its loop)");
    return Status::ok();
  }

  Status checkIndex(const SymExpr& e, const std::string& where) const {
    for (const std::string& s : e.symbols()) {
      if (s[0] == '%') {
        int id = std::stoi(s.substr(1));
        RETURN_IF_ERROR(checkValue(id, where));
        if (!ir::isIntegral(types[static_cast<size_t>(id)], /*includeBool=*/false))
          return err(where + ": index expression uses %" + std::to_string(id) + ", which is not an integer");
      } else if (isIndexVar(s) && !vars.count(s)) {
        return err(where + ": index variable " + s + " is not in scope");
      }
    }
    return Status::ok();
  }

  Status define(const Stmt& s, int depth) {
    if (s.result < 0 || s.result >= k.numValues) return err("statement defines an invalid value id");
    if (defined[static_cast<size_t>(s.result)] >= 0) return err("%" + std::to_string(s.result) + " defined twice");
    defined[static_cast<size_t>(s.result)] = depth;
    types[static_cast<size_t>(s.result)] = s.dtype;
    return Status::ok();
  }

  Status body(const std::vector<Stmt>& stmts, int depth, std::vector<int>* escaping) {
    std::vector<int> local;
    for (const Stmt& s : stmts) {
      const std::string where = "statement defining %" + std::to_string(s.result);
      for (int id : s.operands) RETURN_IF_ERROR(checkValue(id, where));
      switch (s.kind) {
        case StmtKind::kLoad:
        case StmtKind::kStore: {
          if (s.arg < 0 || s.arg >= static_cast<int>(k.args.size())) return err("load/store of an unknown argument");
          const Arg& a = k.args[static_cast<size_t>(s.arg)];
          RETURN_IF_ERROR(checkIndex(s.index, s.kind == StmtKind::kLoad ? where : "store to %" + a.name));
          if (s.kind == StmtKind::kLoad) {
            if (!a.read) return err("load from %" + a.name + ", which is not readable");
            if (s.operands.size() > 1 ||
                (s.operands.size() == 1 && types[static_cast<size_t>(s.operands[0])] != DType::kBool))
              return err(where + ": a load's mask must be one bool value");
            if (s.dtype != a.dtype) return err(where + ": loads " + ir::dtypeName(s.dtype).data() + " from %" + a.name);
          } else {
            if (!a.written) return err("store to %" + a.name + ", which is not writable");
            if (s.operands.size() != 1) return err("store needs one operand");
            if (types[static_cast<size_t>(s.operands[0])] != a.dtype)
              return err("store of a " + std::string(ir::dtypeName(types[static_cast<size_t>(s.operands[0])])) +
                         " value to %" + a.name + " of " + std::string(ir::dtypeName(a.dtype)));
          }
          break;
        }
        case StmtKind::kIndex:
        case StmtKind::kRand: RETURN_IF_ERROR(checkIndex(s.index, where)); break;
        case StmtKind::kScalar: {
          const auto& info = prims::scalarOpInfo(s.op);
          if (static_cast<int>(s.operands.size()) != info.arity) return err(where + ": wrong operand count");
          DType in = types[static_cast<size_t>(s.operands[0])];
          for (int id : s.operands)
            if (types[static_cast<size_t>(id)] != in) return err(where + ": operands of different dtypes");
          if (!prims::acceptsDType(info, in)) return err(where + ": " + info.name + " does not accept its dtype");
          if (s.dtype != (info.predicate ? DType::kBool : in)) return err(where + ": wrong result dtype");
          break;
        }
        case StmtKind::kWhere:
          if (s.operands.size() != 3 || types[static_cast<size_t>(s.operands[0])] != DType::kBool ||
              types[static_cast<size_t>(s.operands[1])] != s.dtype ||
              types[static_cast<size_t>(s.operands[2])] != s.dtype)
            return err(where + ": where needs a bool and two operands of the result dtype");
          break;
        case StmtKind::kCast:
          if (s.operands.size() != 1) return err(where + ": cast needs one operand");
          break;
        case StmtKind::kReduce:
          if (depth == 0 || !escaping) return err(where + ": reduce outside a loop");
          if (s.operands.size() != 1) return err(where + ": reduce needs one operand");
          break;
        case StmtKind::kConst: break;
        case StmtKind::kCheck:
          if (s.operands.size() != 1 || types[static_cast<size_t>(s.operands[0])] != DType::kBool)
            return err("check needs one bool operand");
          continue;
        case StmtKind::kLoop: {
          if (depth > 0) return err("nested loops are not supported");
          std::vector<std::string> added;
          for (size_t d = 0; d < s.loopSizes.size(); ++d) added.push_back(loopVar(d));
          for (const auto& v : added) vars.insert(v);
          std::vector<int> escaped;
          RETURN_IF_ERROR(body(s.body, depth + 1, &escaped));
          for (const auto& v : added) vars.erase(v);
          for (int id : escaped) defined[static_cast<size_t>(id)] = depth;  // reduce results outlive the loop
          local.insert(local.end(), escaped.begin(), escaped.end());
          continue;
        }
      }
      if (s.kind != StmtKind::kStore) {
        RETURN_IF_ERROR(define(s, depth));
        if (s.kind == StmtKind::kReduce)
          escaping->push_back(s.result);
        else
          local.push_back(s.result);
      }
    }
    if (depth > 0)  // loop-local values go out of scope
      for (int id : local) defined[static_cast<size_t>(id)] = -1;
    return Status::ok();
  }
};

}  // namespace

std::vector<std::string> Kernel::sizeSymbols() const {
  std::set<std::string> out;
  for (const SymExpr& g : grid)
    for (const auto& n : g.symbols()) out.insert(n);
  collectSymbols(body, out);
  return {out.begin(), out.end()};
}

int64_t Kernel::numStmts() const { return countStmts(body); }

namespace {
bool anyMayFail(const std::vector<Stmt>& body) {
  for (const Stmt& s : body) {
    if (s.kind == StmtKind::kCheck) return true;
    if (s.kind == StmtKind::kScalar && !ir::isFloating(s.dtype) && s.dtype != DType::kBool &&
        (s.op == prims::ScalarOp::kDiv || s.op == prims::ScalarOp::kRemainder || s.op == prims::ScalarOp::kFmod))
      return true;
    if (s.kind == StmtKind::kLoop && anyMayFail(s.body)) return true;
  }
  return false;
}
}  // namespace

bool Kernel::mayFail() const { return anyMayFail(body); }

Status verifyKernel(const Kernel& k) {
  Verifier v{k,
             std::vector<int>(static_cast<size_t>(k.numValues), -1),
             std::vector<DType>(static_cast<size_t>(k.numValues), DType::kF32),
             {}};
  for (size_t d = 0; d < k.grid.size(); ++d) v.vars.insert(gridVar(d));
  return v.body(k.body, 0, nullptr);
}

namespace {

bool stmtsEqual(const std::vector<Stmt>& a, const std::vector<Stmt>& b, std::string* why) {
  if (a.size() != b.size()) {
    if (why) *why = "statement counts differ";
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const Stmt &x = a[i], &y = b[i];
    bool same = x.kind == y.kind && x.result == y.result && x.dtype == y.dtype && x.operands == y.operands &&
                x.arg == y.arg && x.index == y.index && x.op == y.op && x.reduce == y.reduce &&
                x.combine == y.combine && x.loopSizes == y.loopSizes && x.ivalue == y.ivalue &&
                x.message == y.message && (x.fvalue == y.fvalue || (x.fvalue != x.fvalue && y.fvalue != y.fvalue));
    if (!same) {
      if (why) *why = "statement " + std::to_string(i) + " differs";
      return false;
    }
    if (!stmtsEqual(x.body, y.body, why)) return false;
  }
  return true;
}

}  // namespace

bool kernelsEqual(const Kernel& a, const Kernel& b, std::string* whyNot) {
  if (a.name != b.name || a.grid != b.grid || a.numValues != b.numValues || a.args.size() != b.args.size()) {
    if (whyNot) *whyNot = "name, grid, value count or argument count differ";
    return false;
  }
  for (size_t i = 0; i < a.args.size(); ++i) {
    const Arg &x = a.args[i], &y = b.args[i];
    if (x.name != y.name || x.dtype != y.dtype || x.read != y.read || x.written != y.written ||
        x.accumulator != y.accumulator) {
      if (whyNot) *whyNot = "argument " + std::to_string(i) + " differs";
      return false;
    }
  }
  return stmtsEqual(a.body, b.body, whyNot);
}

}  // namespace plugsdk::kernel
