// Printer and parser of the kernel IR text form.
#include "core/kernel/kernel_text.h"

#include <cctype>
#include <cstdlib>
#include <limits>
#include <map>

#include "core/ir/attribute.h"

namespace plugsdk::kernel {

namespace {

const char* accessName(const Arg& a) {
  if (a.accumulator) return "acc";
  if (a.read && a.written) return "inout";
  return a.written ? "out" : "in";
}

std::string constText(const Stmt& s) {
  if (ir::isFloating(s.dtype)) return ir::formatDouble(s.fvalue);
  return std::to_string(s.ivalue);
}

void printBody(const Kernel& k, const std::vector<Stmt>& body, const std::string& pad, std::string& out) {
  auto v = [](int id) { return "%" + std::to_string(id); };
  for (const Stmt& s : body) {
    const std::string type = std::string(" : ") + std::string(ir::dtypeName(s.dtype));
    switch (s.kind) {
      case StmtKind::kLoad:
        out += pad + v(s.result) + " = load %" + k.args[static_cast<size_t>(s.arg)].name + "[" + printIndex(s.index) +
               "]" + (s.operands.empty() ? std::string() : " if " + v(s.operands[0])) + type + "\n";
        break;
      case StmtKind::kConst: out += pad + v(s.result) + " = const " + constText(s) + type + "\n"; break;
      case StmtKind::kIndex: out += pad + v(s.result) + " = index " + printIndex(s.index) + type + "\n"; break;
      case StmtKind::kScalar: {
        out += pad + v(s.result) + " = " + prims::scalarOpInfo(s.op).name + " " + v(s.operands[0]);
        if (s.operands.size() > 1) out += ", " + v(s.operands[1]);
        out += type + "\n";
        break;
      }
      case StmtKind::kWhere:
        out += pad + v(s.result) + " = where " + v(s.operands[0]) + ", " + v(s.operands[1]) + ", " + v(s.operands[2]) +
               type + "\n";
        break;
      case StmtKind::kCast: out += pad + v(s.result) + " = cast " + v(s.operands[0]) + type + "\n"; break;
      case StmtKind::kRand:
        out += pad + v(s.result) + " = rand " + std::to_string(s.ivalue) + ", " + printIndex(s.index) + type + "\n";
        break;
      case StmtKind::kReduce:
        out += pad + v(s.result) + " = reduce " + reduceOpName(s.reduce) + " " + v(s.operands[0]) + type + "\n";
        break;
      case StmtKind::kStore:
        out += pad + "store" +
               (s.combine == Combine::kNone ? std::string() : std::string(".") + combineName(s.combine)) + " %" +
               k.args[static_cast<size_t>(s.arg)].name + "[" + printIndex(s.index) + "], " + v(s.operands[0]) + "\n";
        break;
      case StmtKind::kCheck: {
        std::string m;
        for (char ch : s.message) {
          if (ch == '"' || ch == '\\') m += '\\';
          m += ch;
        }
        out += pad + "check " + v(s.operands[0]) + ", \"" + m + "\"\n";
        break;
      }
      case StmtKind::kLoop: {
        out += pad + "loop [";
        for (size_t i = 0; i < s.loopSizes.size(); ++i) out += (i ? ", " : "") + printIndex(s.loopSizes[i]);
        out += "] {\n";
        printBody(k, s.body, pad + "  ", out);
        out += pad + "}\n";
        break;
      }
    }
  }
}

// ---- parsing ---------------------------------------------------------------------------

struct Tok {
  enum Kind { kIdent, kValue, kNumber, kString, kPunct, kEnd } kind = kEnd;
  std::string text;
  int line = 1, col = 1;
};

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}
  Tok next() {
    skip();
    Tok t;
    t.line = line_;
    t.col = col_;
    if (i_ >= s_.size()) return t;
    char c = s_[i_];
    if (c == '"') {  // a string: backslash escapes the next character
      advance();
      t.kind = Tok::kString;
      while (i_ < s_.size() && s_[i_] != '"') {
        if (s_[i_] == '\\' && i_ + 1 < s_.size()) advance();
        t.text += take();
      }
      if (i_ < s_.size()) advance();
      return t;
    }
    if (c == '%' && i_ + 1 < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_ + 1])) || s_[i_ + 1] == '_')) {
      advance();
      t.kind = Tok::kValue;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) t.text += take();
      return t;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '-' && i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 1])) && numberAllowed_)) {
      t.kind = Tok::kNumber;
      t.text += take();
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                                ((s_[i_] == '-' || s_[i_] == '+') && (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E'))))
        t.text += take();
      return t;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '@') {
      t.kind = Tok::kIdent;
      while (i_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '.' || s_[i_] == '@'))
        t.text += take();
      return t;
    }
    t.kind = Tok::kPunct;
    t.text += take();
    if (c == '/' && i_ < s_.size() && s_[i_] == '/') t.text += take();
    return t;
  }
  /// Whether "-3" lexes as one number (true in constant positions, false in expressions).
  void setNumberAllowed(bool b) { numberAllowed_ = b; }

 private:
  void skip() {
    while (i_ < s_.size()) {
      if (s_[i_] == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') advance();
      } else if (std::isspace(static_cast<unsigned char>(s_[i_]))) {
        advance();
      } else {
        break;
      }
    }
  }
  char take() {
    char c = s_[i_];
    advance();
    return c;
  }
  void advance() {
    if (s_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }
  std::string_view s_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;
  bool numberAllowed_ = true;
};

class Parser {
 public:
  explicit Parser(std::string_view s) : lex_(s) { tok_ = lex_.next(); }

  StatusOr<Kernel> parse() {
    Kernel k;
    RETURN_IF_ERROR(expectIdent("kernel"));
    if (tok_.kind != Tok::kIdent || tok_.text.empty() || tok_.text[0] != '@') return error("expected @name");
    k.name = tok_.text.substr(1);
    bump();
    RETURN_IF_ERROR(expect("("));
    while (!is(")")) {
      if (tok_.kind != Tok::kValue) return error("expected an argument like %x");
      Arg a;
      a.name = tok_.text;
      bump();
      RETURN_IF_ERROR(expect(":"));
      ASSIGN_OR_RETURN(a.dtype, dtype());
      if (tok_.kind != Tok::kIdent) return error("expected in, out, inout or acc");
      const std::string acc = tok_.text;
      a.read = acc == "in" || acc == "inout" || acc == "acc";
      a.written = acc == "out" || acc == "inout";
      a.accumulator = acc == "acc";
      if (!a.read && !a.written) return error("expected in, out, inout or acc, got '" + acc + "'");
      bump();
      argIndex_[a.name] = static_cast<int>(k.args.size());
      k.args.push_back(a);
      if (!is(")")) RETURN_IF_ERROR(expect(","));
    }
    bump();
    RETURN_IF_ERROR(expectIdent("grid"));
    ASSIGN_OR_RETURN(k.grid, sizeList());
    RETURN_IF_ERROR(expect("{"));
    ASSIGN_OR_RETURN(k.body, body());
    k.numValues = maxValue_ + 1;
    if (tok_.kind != Tok::kEnd) return error("unexpected text after the kernel");
    RETURN_IF_ERROR(verifyKernel(k));
    return k;
  }

 private:
  StatusOr<std::vector<Stmt>> body() {
    std::vector<Stmt> out;
    while (!is("}")) {
      if (tok_.kind == Tok::kEnd) return error("missing '}'");
      ASSIGN_OR_RETURN(Stmt s, stmt());
      out.push_back(std::move(s));
    }
    bump();
    return out;
  }

  StatusOr<Stmt> stmt() {
    Stmt s;
    if (tok_.kind == Tok::kIdent && tok_.text == "loop") {
      bump();
      s.kind = StmtKind::kLoop;
      ASSIGN_OR_RETURN(s.loopSizes, sizeList());
      RETURN_IF_ERROR(expect("{"));
      ASSIGN_OR_RETURN(s.body, body());
      return s;
    }
    if (tok_.kind == Tok::kIdent && tok_.text == "check") {
      bump();
      s.kind = StmtKind::kCheck;
      ASSIGN_OR_RETURN(s.operands, valueList(1));
      RETURN_IF_ERROR(expect(","));
      if (tok_.kind != Tok::kString) return error("expected a quoted message");
      s.message = tok_.text;
      bump();
      return s;
    }
    if (tok_.kind == Tok::kIdent && (tok_.text == "store" || tok_.text.rfind("store.", 0) == 0)) {
      s.kind = StmtKind::kStore;
      const std::string c = tok_.text.size() > 6 ? tok_.text.substr(6) : "none";
      bool found = false;
      for (Combine x : {Combine::kNone, Combine::kSum, Combine::kProd, Combine::kMax, Combine::kMin})
        if (c == combineName(x)) {
          s.combine = x;
          found = true;
        }
      if (!found) return error("unknown store combine '" + c + "'");
      bump();
      ASSIGN_OR_RETURN(s.arg, argRef());
      RETURN_IF_ERROR(expect("["));
      ASSIGN_OR_RETURN(s.index, expr());
      RETURN_IF_ERROR(expect("]"));
      RETURN_IF_ERROR(expect(","));
      ASSIGN_OR_RETURN(int v, valueRef());
      s.operands.push_back(v);
      return s;
    }
    ASSIGN_OR_RETURN(s.result, valueDef());
    RETURN_IF_ERROR(expect("="));
    if (tok_.kind != Tok::kIdent) return error("expected an operation");
    const std::string op = tok_.text;
    const Tok opTok = tok_;
    bump();
    if (op == "load") {
      s.kind = StmtKind::kLoad;
      ASSIGN_OR_RETURN(s.arg, argRef());
      RETURN_IF_ERROR(expect("["));
      ASSIGN_OR_RETURN(s.index, expr());
      RETURN_IF_ERROR(expect("]"));
      if (tok_.kind == Tok::kIdent && tok_.text == "if") {
        bump();
        ASSIGN_OR_RETURN(s.operands, valueList(1));
      }
    } else if (op == "const") {
      s.kind = StmtKind::kConst;
      const bool negative = is("-");
      if (negative) bump();
      if (tok_.kind != Tok::kNumber && tok_.kind != Tok::kIdent) return error("expected a number");
      constText_ = (negative ? "-" : "") + tok_.text;
      bump();
    } else if (op == "index") {
      s.kind = StmtKind::kIndex;
      ASSIGN_OR_RETURN(s.index, expr());
    } else if (op == "where" || op == "cast") {
      s.kind = op == "where" ? StmtKind::kWhere : StmtKind::kCast;
      ASSIGN_OR_RETURN(s.operands, valueList(op == "where" ? 3 : 1));
    } else if (op == "rand") {
      s.kind = StmtKind::kRand;
      if (tok_.kind != Tok::kNumber) return error("expected the seed");
      s.ivalue = std::strtoll(tok_.text.c_str(), nullptr, 10);
      bump();
      RETURN_IF_ERROR(expect(","));
      ASSIGN_OR_RETURN(s.index, expr());
    } else if (op == "reduce") {
      s.kind = StmtKind::kReduce;
      if (tok_.kind != Tok::kIdent) return error("expected a reduce op");
      bool found = false;
      for (ReduceOp r :
           {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kArgMax, ReduceOp::kArgMin})
        if (tok_.text == reduceOpName(r)) {
          s.reduce = r;
          found = true;
        }
      if (!found) return error("unknown reduce op '" + tok_.text + "'");
      bump();
      ASSIGN_OR_RETURN(s.operands, valueList(1));
    } else if (auto sop = prims::scalarOpByName(op)) {
      s.kind = StmtKind::kScalar;
      s.op = *sop;
      ASSIGN_OR_RETURN(s.operands, valueList(prims::scalarOpInfo(*sop).arity));
    } else {
      return errorAt(opTok, "unknown operation '" + op + "'");
    }
    RETURN_IF_ERROR(expect(":"));
    ASSIGN_OR_RETURN(s.dtype, dtype());
    if (s.kind == StmtKind::kConst) {
      if (ir::isFloating(s.dtype)) {
        if (constText_ == "inf" || constText_ == "-inf" || constText_ == "nan")
          s.fvalue = constText_ == "nan"
                         ? std::numeric_limits<double>::quiet_NaN()
                         : (constText_[0] == '-' ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
        else
          s.fvalue = std::strtod(constText_.c_str(), nullptr);
      } else {
        s.ivalue = std::strtoll(constText_.c_str(), nullptr, 10);
      }
    }
    return s;
  }

  // expr := term (('+'|'-') term)* ; term := unary (('*'|'//'|'%') unary)* ; unary := '-' unary | primary
  StatusOr<SymExpr> expr() {
    lex_.setNumberAllowed(false);
    auto r = sum();
    lex_.setNumberAllowed(true);
    return r;
  }
  StatusOr<SymExpr> sum() {
    ASSIGN_OR_RETURN(SymExpr e, term());
    while (is("+") || is("-")) {
      const bool plus = is("+");
      bump();
      ASSIGN_OR_RETURN(SymExpr t, term());
      e = plus ? e + t : e - t;
    }
    return e;
  }
  StatusOr<SymExpr> term() {
    ASSIGN_OR_RETURN(SymExpr e, unary());
    while (is("*") || is("//") || is("%")) {
      const std::string op = tok_.text;
      bump();
      ASSIGN_OR_RETURN(SymExpr f, unary());
      if (op == "*") {
        e = e * f;
      } else {
        if (f.isZero()) return error("division by zero in an index expression");
        e = op == "//" ? SymExpr::floorDiv(e, f) : SymExpr::mod(e, f);
      }
    }
    return e;
  }
  StatusOr<SymExpr> unary() {
    if (is("-")) {
      bump();
      ASSIGN_OR_RETURN(SymExpr e, unary());
      return -e;
    }
    if (is("(")) {
      bump();
      ASSIGN_OR_RETURN(SymExpr e, sum());
      RETURN_IF_ERROR(expect(")"));
      return e;
    }
    if (tok_.kind == Tok::kNumber) {
      SymExpr e(std::strtoll(tok_.text.c_str(), nullptr, 10));
      bump();
      return e;
    }
    if (tok_.kind == Tok::kIdent) {
      SymExpr e = SymExpr::symbol(tok_.text);
      bump();
      return e;
    }
    if (tok_.kind == Tok::kValue) {
      ASSIGN_OR_RETURN(int id, valueRef());
      return kernel::valueRef(id);
    }
    return error("expected an index expression");
  }

  StatusOr<std::vector<SymExpr>> sizeList() {
    RETURN_IF_ERROR(expect("["));
    std::vector<SymExpr> out;
    while (!is("]")) {
      ASSIGN_OR_RETURN(SymExpr e, expr());
      out.push_back(e);
      if (!is("]")) RETURN_IF_ERROR(expect(","));
    }
    bump();
    return out;
  }

  StatusOr<std::vector<int>> valueList(int n) {
    std::vector<int> out;
    for (int i = 0; i < n; ++i) {
      if (i) RETURN_IF_ERROR(expect(","));
      ASSIGN_OR_RETURN(int v, valueRef());
      out.push_back(v);
    }
    return out;
  }

  StatusOr<int> valueNumber() {
    if (tok_.kind != Tok::kValue || tok_.text.find_first_not_of("0123456789") != std::string::npos)
      return error("expected a value like %3");
    int id = std::atoi(tok_.text.c_str());
    bump();
    return id;
  }
  StatusOr<int> valueDef() {
    ASSIGN_OR_RETURN(int id, valueNumber());
    if (id > maxValue_) maxValue_ = id;
    return id;
  }
  StatusOr<int> valueRef() { return valueNumber(); }
  StatusOr<int> argRef() {
    if (tok_.kind != Tok::kValue) return error("expected an argument like %x");
    auto it = argIndex_.find(tok_.text);
    if (it == argIndex_.end()) return error("unknown argument %" + tok_.text);
    bump();
    return it->second;
  }
  StatusOr<DType> dtype() {
    if (tok_.kind != Tok::kIdent) return error("expected a dtype");
    auto d = ir::parseDType(tok_.text);
    if (!d) return error("unknown dtype '" + tok_.text + "'");
    bump();
    return *d;
  }

  bool is(const char* p) const { return tok_.kind == Tok::kPunct && tok_.text == p; }
  void bump() { tok_ = lex_.next(); }
  Status expect(const char* p) {
    if (!is(p)) return error(std::string("expected '") + p + "'");
    bump();
    return Status::ok();
  }
  Status expectIdent(const char* w) {
    if (tok_.kind != Tok::kIdent || tok_.text != w) return error(std::string("expected '") + w + "'");
    bump();
    return Status::ok();
  }
  Status error(const std::string& msg) const {
    return errorAt(tok_, msg + (tok_.kind == Tok::kEnd ? " (at end of input)" : ", got '" + tok_.text + "'"));
  }
  static Status errorAt(const Tok& t, const std::string& msg) {
    return invalidArgument("kernel text " + std::to_string(t.line) + ":" + std::to_string(t.col) + ": " + msg);
  }

  Lexer lex_;
  Tok tok_;
  std::map<std::string, int> argIndex_;
  int maxValue_ = -1;
  std::string constText_;
};

}  // namespace

std::string printIndex(const SymExpr& e) { return e.toString(); }

std::string printKernel(const Kernel& k) {
  std::string out = "kernel @" + k.name + "(";
  for (size_t i = 0; i < k.args.size(); ++i) {
    const Arg& a = k.args[i];
    out += (i ? ", %" : "%") + a.name + ": " + std::string(ir::dtypeName(a.dtype)) + " " + accessName(a);
  }
  out += ") grid [";
  for (size_t i = 0; i < k.grid.size(); ++i) out += (i ? ", " : "") + printIndex(k.grid[i]);
  out += "] {\n";
  printBody(k, k.body, "  ", out);
  return out + "}\n";
}

StatusOr<Kernel> parseKernel(std::string_view text) { return Parser(text).parse(); }

}  // namespace plugsdk::kernel
