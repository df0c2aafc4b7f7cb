// Recursive-descent parser for .pgraph files.
//
//   graph @NAME(%in: TYPE, ...) {
//     %a, %b = OP(%x, none, ...) {attr = VALUE, ...} : TYPE, TYPE
//     return %a, ...
//   }
//   TYPE  := DTYPE '[' [DIM, ...] ']' ['strides' '[' DIM, ... ']']
//   DIM   := size expression over symbols: + - * // % and parentheses
//   VALUE := INT | FLOAT | inf | nan | -VALUE | true | false | none | "str" | DTYPE | DIM | '[' VALUE, ... ']'
#include "core/text/parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "core/ir/verifier.h"
#include "core/text/lexer.h"

namespace plugsdk::text {

using ir::Attribute;
using ir::SymExpr;

namespace {

constexpr int kMaxDepth = 64;
// Products of sums expand multiplicatively ((s0+1)*(s1+1)*... doubles per factor): cap the
// size of any size expression so that short input cannot demand exponential work.
constexpr size_t kMaxExprTerms = 256;

bool isKeyword(const std::string& s) {
  return s == "graph" || s == "return" || s == "none" || s == "true" || s == "false" || s == "inf" || s == "nan" ||
         s == "strides" || ir::parseDType(s).has_value();
}

class Parser {
 public:
  Parser(const ir::Context& ctx, std::vector<Token> toks) : ctx_(ctx), toks_(std::move(toks)) {}

  StatusOr<ir::Graph> parseFile() {
    RETURN_IF_ERROR(expectIdent("graph"));
    if (peek().kind != Tok::kGlobal) return expected("'@name' after 'graph'");
    ir::Graph g(next().text);
    RETURN_IF_ERROR(expectPunct("("));
    if (!isPunct(")")) {
      for (;;) {
        if (peek().kind != Tok::kValue) return expected("an input like '%x: f32[2, 3]'");
        Token name = next();
        if (values_.count(name.text)) return errorAt(name.loc, "input %" + name.text + " is declared twice");
        RETURN_IF_ERROR(expectPunct(":"));
        ASSIGN_OR_RETURN(ir::TensorType t, parseType());
        for (const auto& d : t.shape)
          if (auto c = d.constant(); c && *c < 0)
            return errorAt(name.loc, "input %" + name.text + " has a negative size");
        values_[name.text] = g.addInput(name.text, std::move(t));
        if (isPunct(",")) {
          next();
          continue;
        }
        break;
      }
    }
    RETURN_IF_ERROR(expectPunct(")"));
    RETURN_IF_ERROR(expectPunct("{"));
    while (!(peek().kind == Tok::kIdent && peek().text == "return")) {
      if (peek().kind == Tok::kEnd) return expected("'return' before the end of the graph");
      RETURN_IF_ERROR(parseStatement(g));
    }
    next();  // return
    std::vector<ir::Value*> outs;
    for (;;) {
      if (peek().kind != Tok::kValue) return expected("a value like '%3' after 'return'");
      Token v = next();
      auto it = values_.find(v.text);
      if (it == values_.end()) return errorAt(v.loc, "use of undefined value %" + v.text);
      outs.push_back(it->second);
      if (isPunct(",")) {
        next();
        continue;
      }
      break;
    }
    g.setOutputs(std::move(outs));
    RETURN_IF_ERROR(expectPunct("}"));
    if (peek().kind != Tok::kEnd) return expected("end of file after the graph's closing '}'");
    RETURN_IF_ERROR(ir::verifyGraph(ctx_, g));
    return g;
  }

  StatusOr<SymExpr> parseExprOnly() {
    ASSIGN_OR_RETURN(SymExpr e, parseExpr(0));
    if (peek().kind != Tok::kEnd) return expected("end of expression");
    return e;
  }

 private:
  const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  Token next() {
    Token t = peek();
    if (pos_ < toks_.size() - 1) ++pos_;
    return t;
  }
  bool isPunct(const char* p) const { return peek().kind == Tok::kPunct && peek().text == p; }
  Status errorAt(const ir::SourceLoc& loc, const std::string& msg) const {
    return invalidArgument(loc.toString() + ": " + msg);
  }
  Status expected(const std::string& what) const {
    return errorAt(peek().loc, "expected " + what + ", got " + describeToken(peek()));
  }
  Status expectPunct(const char* p) {
    if (!isPunct(p)) return expected(std::string("'") + p + "'");
    next();
    return Status::ok();
  }
  Status expectIdent(const char* s) {
    if (peek().kind != Tok::kIdent || peek().text != s) return expected(std::string("'") + s + "'");
    next();
    return Status::ok();
  }

  StatusOr<int64_t> parseIntToken(const Token& t) {
    int64_t v = 0;
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size())
      return errorAt(t.loc, "integer literal " + t.text + " is out of range");
    return v;
  }

  // expr := term (('+'|'-') term)* ; term := unary (('*'|'//'|'%') unary)* ; unary := '-' unary | atom
  StatusOr<SymExpr> parseExpr(int depth) {
    if (depth > kMaxDepth) return errorAt(peek().loc, "expression nested too deeply");
    ASSIGN_OR_RETURN(SymExpr lhs, parseTerm(depth));
    while (isPunct("+") || isPunct("-")) {
      Token op = next();
      ASSIGN_OR_RETURN(SymExpr rhs, parseTerm(depth));
      if (lhs.terms().size() + rhs.terms().size() > kMaxExprTerms)
        return errorAt(op.loc, "size expression too large (over " + std::to_string(kMaxExprTerms) + " terms)");
      lhs = op.text == "+" ? lhs + rhs : lhs - rhs;
    }
    return lhs;
  }
  StatusOr<SymExpr> parseTerm(int depth) {
    ASSIGN_OR_RETURN(SymExpr lhs, parseUnary(depth));
    while (isPunct("*") || isPunct("//") || isPunct("%")) {
      Token op = next();
      ASSIGN_OR_RETURN(SymExpr rhs, parseUnary(depth));
      if (op.text == "*") {
        if (lhs.terms().size() * rhs.terms().size() > kMaxExprTerms)
          return errorAt(op.loc, "size expression too large (over " + std::to_string(kMaxExprTerms) + " terms)");
        lhs = lhs * rhs;
      } else {
        if (rhs.isZero()) return errorAt(op.loc, "division by zero in size expression");
        lhs = op.text == "//" ? SymExpr::floorDiv(lhs, rhs) : SymExpr::mod(lhs, rhs);
      }
    }
    return lhs;
  }
  StatusOr<SymExpr> parseUnary(int depth) {
    if (depth > kMaxDepth) return errorAt(peek().loc, "expression nested too deeply");
    if (isPunct("-")) {
      next();
      ASSIGN_OR_RETURN(SymExpr e, parseUnary(depth + 1));
      return -e;
    }
    const Token& t = peek();
    if (t.kind == Tok::kInt) {
      next();
      ASSIGN_OR_RETURN(int64_t v, parseIntToken(t));
      return SymExpr(v);
    }
    if (t.kind == Tok::kIdent && !isKeyword(t.text) && t.text.find('.') == std::string::npos) {
      next();
      return SymExpr::symbol(t.text);
    }
    if (isPunct("(")) {
      next();
      ASSIGN_OR_RETURN(SymExpr e, parseExpr(depth + 1));
      RETURN_IF_ERROR(expectPunct(")"));
      return e;
    }
    return expected("a size (integer, symbol like s0, or parenthesized expression)");
  }

  StatusOr<std::vector<SymExpr>> parseDimList() {
    RETURN_IF_ERROR(expectPunct("["));
    std::vector<SymExpr> dims;
    if (!isPunct("]")) {
      for (;;) {
        ASSIGN_OR_RETURN(SymExpr d, parseExpr(0));
        dims.push_back(std::move(d));
        if (isPunct(",")) {
          next();
          continue;
        }
        break;
      }
    }
    RETURN_IF_ERROR(expectPunct("]"));
    return dims;
  }

  StatusOr<ir::TensorType> parseType() {
    const Token& t = peek();
    auto dt = t.kind == Tok::kIdent ? ir::parseDType(t.text) : std::nullopt;
    if (!dt) return expected("a dtype (bool u8 i8 i16 i32 i64 f16 bf16 f32 f64)");
    next();
    ir::TensorType type;
    type.dtype = *dt;
    ir::SourceLoc shapeLoc = peek().loc;
    ASSIGN_OR_RETURN(type.shape, parseDimList());
    // The element count multiplies the dims: keep its expansion bounded too.
    size_t numelTerms = 1;
    for (const auto& d : type.shape) {
      numelTerms *= std::max<size_t>(1, d.terms().size());
      if (numelTerms > kMaxExprTerms)
        return errorAt(shapeLoc, "shape too complex: the product of its sizes has over " +
                                     std::to_string(kMaxExprTerms) + " terms");
    }
    if (peek().kind == Tok::kIdent && peek().text == "strides") {
      Token s = next();
      ASSIGN_OR_RETURN(auto strides, parseDimList());
      if (strides.size() != type.shape.size())
        return errorAt(s.loc, "strides has " + std::to_string(strides.size()) + " entries for a rank-" +
                                  std::to_string(type.shape.size()) + " shape");
      type.strides = std::move(strides);
    }
    return type;
  }

  StatusOr<Attribute> parseAttrValue(int depth) {
    if (depth > kMaxDepth) return errorAt(peek().loc, "attribute value nested too deeply");
    const Token& t = peek();
    if (isPunct("[")) {
      next();
      std::vector<Attribute> items;
      if (!isPunct("]")) {
        for (;;) {
          ASSIGN_OR_RETURN(Attribute a, parseAttrValue(depth + 1));
          items.push_back(std::move(a));
          if (isPunct(",")) {
            next();
            continue;
          }
          break;
        }
      }
      Token close = peek();
      RETURN_IF_ERROR(expectPunct("]"));
      bool anyFloat = false;
      for (const auto& a : items) {
        if (a.kind() == Attribute::Kind::kFloat)
          anyFloat = true;
        else if (a.kind() != Attribute::Kind::kInt && a.kind() != Attribute::Kind::kSym)
          return errorAt(close.loc, "lists may hold only integers, sizes or floats");
      }
      if (anyFloat) {
        std::vector<double> v;
        for (const auto& a : items) {
          if (a.kind() == Attribute::Kind::kSym) return errorAt(close.loc, "a list mixes floats and size symbols");
          v.push_back(*a.asDouble());
        }
        return Attribute::fromFloats(std::move(v));
      }
      std::vector<SymExpr> v;
      for (const auto& a : items) v.push_back(*a.asSym());
      return Attribute::fromInts(std::move(v));
    }
    if (t.kind == Tok::kString) return Attribute::fromString(next().text);
    if (t.kind == Tok::kIdent) {
      if (t.text == "true" || t.text == "false") return Attribute::fromBool(next().text == "true");
      if (t.text == "none") {
        next();
        return Attribute::none();
      }
      if (t.text == "inf") {
        next();
        return Attribute::fromFloat(INFINITY);
      }
      if (t.text == "nan") {
        next();
        return Attribute::fromFloat(NAN);
      }
      if (auto dt = ir::parseDType(t.text)) {
        next();
        return Attribute::fromDType(*dt);
      }
    }
    if (t.kind == Tok::kFloat) return parseFloatToken(next(), false);
    if (isPunct("-") && (peek(1).kind == Tok::kFloat ||
                         (peek(1).kind == Tok::kIdent && (peek(1).text == "inf" || peek(1).text == "nan")))) {
      next();
      Token f = next();
      if (f.kind == Tok::kIdent) return Attribute::fromFloat(f.text == "inf" ? -INFINITY : -NAN);
      return parseFloatToken(f, true);
    }
    ASSIGN_OR_RETURN(SymExpr e, parseExpr(depth + 1));
    return Attribute::fromSym(e);
  }

  StatusOr<Attribute> parseFloatToken(const Token& t, bool negate) {
    double v = 0;
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec == std::errc::result_out_of_range) {
      v = std::strtod(t.text.c_str(), nullptr);  // overflow to inf / underflow to 0 as C does
    } else if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size()) {
      return errorAt(t.loc, "malformed float literal " + t.text);
    }
    return Attribute::fromFloat(negate ? -v : v);
  }

  Status parseStatement(ir::Graph& g) {
    std::vector<Token> results;
    for (;;) {
      if (peek().kind != Tok::kValue) return expected("a statement like '%3 = aten.relu(%2)' or 'return'");
      Token v = next();
      if (values_.count(v.text)) return errorAt(v.loc, "value %" + v.text + " is defined twice");
      for (const auto& r : results)
        if (r.text == v.text) return errorAt(v.loc, "value %" + v.text + " is defined twice");
      results.push_back(v);
      if (isPunct(",")) {
        next();
        continue;
      }
      break;
    }
    RETURN_IF_ERROR(expectPunct("="));
    if (peek().kind != Tok::kIdent) return expected("an op name like aten.add.Tensor");
    Token opTok = next();
    const ir::OpDef* def = ctx_.ops.find(opTok.text);
    if (!def) return errorAt(opTok.loc, "unknown op '" + opTok.text + "'");
    RETURN_IF_ERROR(expectPunct("("));
    std::vector<ir::Value*> inputs;
    if (!isPunct(")")) {
      for (;;) {
        const Token& a = peek();
        if (a.kind == Tok::kIdent && a.text == "none") {
          next();
          inputs.push_back(nullptr);
        } else if (a.kind == Tok::kValue) {
          Token v = next();
          auto it = values_.find(v.text);
          if (it == values_.end()) return errorAt(v.loc, "use of undefined value %" + v.text);
          inputs.push_back(it->second);
        } else {
          return expected("an input value like %x or 'none' (attributes go in {...})");
        }
        if (isPunct(",")) {
          next();
          continue;
        }
        break;
      }
    }
    RETURN_IF_ERROR(expectPunct(")"));
    ir::AttrMap attrs;
    if (isPunct("{")) {
      next();
      if (!isPunct("}")) {
        for (;;) {
          if (peek().kind != Tok::kIdent) return expected("an attribute name");
          Token name = next();
          if (attrs.count(name.text)) return errorAt(name.loc, "attribute '" + name.text + "' given twice");
          RETURN_IF_ERROR(expectPunct("="));
          ASSIGN_OR_RETURN(Attribute value, parseAttrValue(0));
          attrs[name.text] = std::move(value);
          if (isPunct(",")) {
            next();
            continue;
          }
          break;
        }
      }
      RETURN_IF_ERROR(expectPunct("}"));
    }
    std::vector<ir::TensorType> declared;
    if (isPunct(":")) {
      next();
      for (;;) {
        ASSIGN_OR_RETURN(ir::TensorType t, parseType());
        declared.push_back(std::move(t));
        if (isPunct(",")) {
          next();
          continue;
        }
        break;
      }
    }
    std::string where = opTok.text + " at line " + opTok.loc.toString();
    ASSIGN_OR_RETURN(auto inferred, ir::checkAndInfer(ctx_, *def, inputs, attrs, where));
    if (inferred.size() != results.size())
      return errorAt(results[0].loc, opTok.text + " produces " + std::to_string(inferred.size()) + " output" +
                                         (inferred.size() == 1 ? "" : "s") + ", but " + std::to_string(results.size()) +
                                         " name" + (results.size() == 1 ? " is" : "s are") + " bound");
    if (!declared.empty() && declared.size() != inferred.size())
      return errorAt(opTok.loc, std::to_string(declared.size()) + " output types given for " +
                                    std::to_string(inferred.size()) + " outputs");
    std::vector<ir::TensorType> types = declared.empty() ? inferred : declared;
    std::vector<std::string> names;
    for (const auto& r : results) names.push_back(r.text);
    ir::Node* n = g.addNode(def->schema.name, def, inputs, attrs, types, names, opTok.loc);
    for (size_t i = 0; i < results.size(); ++i) values_[results[i].text] = n->outputs()[i];
    return Status::ok();
  }

  const ir::Context& ctx_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::unordered_map<std::string, ir::Value*> values_;
};

}  // namespace

StatusOr<ir::Graph> parseGraph(const ir::Context& ctx, std::string_view src) {
  ASSIGN_OR_RETURN(auto toks, tokenize(src));
  Parser p(ctx, std::move(toks));
  return p.parseFile();
}

StatusOr<ir::Graph> parseGraphFile(const ir::Context& ctx, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return notFound("cannot open '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  auto g = parseGraph(ctx, ss.str());
  if (!g.isOk()) return g.status().withContext(path);
  return g;
}

StatusOr<SymExpr> parseSymExpr(std::string_view src) {
  ASSIGN_OR_RETURN(auto toks, tokenize(src));
  ir::Context empty;
  Parser p(empty, std::move(toks));
  return p.parseExprOnly();
}

}  // namespace plugsdk::text
