// Recognizing a cuBLASLt epilogue (epilogue_match.h).
#include "backends/cuda/library/epilogue_match.h"

#include <cmath>
#include <vector>

namespace plugsdk::cuda {

namespace {

bool isFloat(uint32_t t) {
  return t == PLUGSDK_DTYPE_F16 || t == PLUGSDK_DTYPE_BF16 || t == PLUGSDK_DTYPE_F32 || t == PLUGSDK_DTYPE_F64;
}

const char* dtypeName(uint32_t t) {
  switch (t) {
    case PLUGSDK_DTYPE_F16: return "f16";
    case PLUGSDK_DTYPE_BF16: return "bf16";
    case PLUGSDK_DTYPE_F32: return "f32";
    case PLUGSDK_DTYPE_F64: return "f64";
    default: return "?";
  }
}

/// The epilogue's statements by the value they define, and its loads' index classes.
class Epilogue {
 public:
  Epilogue(const sdk::KernelView& k, int biasDim) : k_(k), def_(k.numValues(), -1), biasDim_(biasDim) {}

  /// Indexes the statements; false (with *why) for what cuBLASLt cannot express.
  bool scan(std::string* why) {
    for (size_t i = 0; i < k_.numArgs(); ++i)
      if (k_.arg(i).access & PLUGSDK_ACCESS_ACCUMULATOR) acc_ = static_cast<int>(i);
    if (acc_ < 0) return fail(why, "no ACCUMULATOR argument");
    if (k_.numGrid() < 2) return fail(why, "a grid of rank below 2");
    if (biasDim_ >= static_cast<int>(k_.numGrid())) return fail(why, "a grid of rank below the bias's dim + 1");
    for (size_t i = 0; i < k_.numStmts(); ++i) {
      const plugsdk_stmt_t& s = k_.stmt(i);
      switch (s.kind) {
        case PLUGSDK_STMT_LOAD:
          if (s.num_operands != 0) return fail(why, "a masked load");
          if (s.arg == acc_) accIndex_ = s.index;
          break;
        case PLUGSDK_STMT_CONST:
        case PLUGSDK_STMT_SCALAR:
        case PLUGSDK_STMT_WHERE:
        case PLUGSDK_STMT_CAST: break;
        case PLUGSDK_STMT_STORE:
          if (store_ >= 0) return fail(why, "more than one store");
          if (s.op != PLUGSDK_COMBINE_NONE) return fail(why, "a combining store");
          store_ = static_cast<int>(i);
          break;
        default: return fail(why, "a statement of kind " + std::to_string(s.kind));
      }
      if (s.result >= 0 && static_cast<uint32_t>(s.result) < def_.size()) def_[static_cast<size_t>(s.result)] = int(i);
    }
    if (store_ < 0) return fail(why, "no store");
    if (accIndex_.count == 0) return fail(why, "the accumulator is not read");
    if (!sameIndex(k_.stmt(static_cast<size_t>(store_)).index, accIndex_))
      return fail(why, "the store is not at the accumulator's element");
    return true;
  }

  int acc() const { return acc_; }
  const plugsdk_stmt_t& store() const { return k_.stmt(static_cast<size_t>(store_)); }
  const plugsdk_stmt_t* defOf(int32_t v) const {
    if (v < 0 || static_cast<size_t>(v) >= def_.size() || def_[static_cast<size_t>(v)] < 0) return nullptr;
    return &k_.stmt(static_cast<size_t>(def_[static_cast<size_t>(v)]));
  }
  /// Skips floating casts between floating dtypes.
  int32_t stripCasts(int32_t v) const {
    for (const plugsdk_stmt_t* s = defOf(v); s && s->kind == PLUGSDK_STMT_CAST && isFloat(s->dtype); s = defOf(v)) {
      const plugsdk_stmt_t* from = defOf(s->operands[0]);
      if (!from || !isFloat(from->dtype)) break;
      v = s->operands[0];
    }
    return v;
  }
  /// Index expressions are compared by their values at probe points (grid points and symbol
  /// values in general position): the encoder spells i1 as 1*i1, and simplification may
  /// reorder terms.
  bool sameIndex(plugsdk_index_expr_t a, plugsdk_index_expr_t b) const {
    const std::vector<int64_t> pa = probe(a);
    return !pa.empty() && pa == probe(b);
  }
  /// The index of the bias's grid dim: i<last> (the result's column) by default.
  bool isBiasIndex(plugsdk_index_expr_t e) const {
    std::vector<int64_t> want;
    for (int t = 0; t < kProbes; ++t) {
      const std::vector<int64_t> g = gridPoint(t);
      want.push_back(biasDim_ < 0 ? g.back() : g[static_cast<size_t>(biasDim_)]);
    }
    return probe(e) == want;
  }
  const sdk::KernelView& kernel() const { return k_; }
  plugsdk_index_expr_t accIndex() const { return accIndex_; }

 private:
  static constexpr int kProbes = 8;
  std::vector<int64_t> gridPoint(int t) const {
    std::vector<int64_t> g(k_.numGrid());
    for (size_t d = 0; d < g.size(); ++d) g[d] = (3 * t + 5 * static_cast<int64_t>(d) + 1) % 11 + 2 * t;
    return g;
  }
  /// The expression's values at the probes (empty when one does not evaluate).
  std::vector<int64_t> probe(plugsdk_index_expr_t e) const {
    std::vector<int64_t> out;
    std::vector<int64_t> symbols(k_.numSymbols());
    for (int t = 0; t < kProbes; ++t) {
      for (size_t j = 0; j < symbols.size(); ++j) symbols[j] = 40 + 13 * t + 7 * static_cast<int64_t>(j);
      const std::vector<int64_t> g = gridPoint(t);
      const sdk::IndexEnv env{{g.data(), g.size()}, {}, {symbols.data(), symbols.size()}};
      sdk::StatusOr<int64_t> v = k_.evalIndex(e, env);
      if (!v.isOk()) return {};
      out.push_back(*v);
    }
    return out;
  }
  static bool fail(std::string* why, const std::string& w) {
    if (why) *why = w;
    return false;
  }
  const sdk::KernelView& k_;
  std::vector<int> def_;
  int acc_ = -1, store_ = -1;
  plugsdk_index_expr_t accIndex_{0, 0};
  int biasDim_ = -1;
};

/// Value v as a function of value x alone (every load reached only through x), in double;
/// floating casts exact. nullopt: v reads a load past x, or an op this does not evaluate.
class Evaluator {
 public:
  Evaluator(const Epilogue& e, int32_t x, double xv) : e_(e), x_(x), xv_(xv) {}
  std::optional<double> eval(int32_t v, int depth = 0) {
    if (v == x_) return xv_;
    if (depth > 256) return std::nullopt;
    const plugsdk_stmt_t* s = e_.defOf(v);
    if (!s) return std::nullopt;
    auto op = [&](int i) { return eval(s->operands[i], depth + 1); };
    switch (s->kind) {
      case PLUGSDK_STMT_CONST: return isFloat(s->dtype) ? s->fvalue : static_cast<double>(s->ivalue);
      case PLUGSDK_STMT_CAST: {
        const plugsdk_stmt_t* from = e_.defOf(s->operands[0]);
        if (!from || !isFloat(from->dtype) || !isFloat(s->dtype)) return std::nullopt;
        return op(0);
      }
      case PLUGSDK_STMT_WHERE: {
        std::optional<double> c = op(0), a = op(1), b = op(2);
        if (!c || !a || !b) return std::nullopt;
        return *c != 0 ? *a : *b;
      }
      case PLUGSDK_STMT_SCALAR: {
        std::optional<double> a = op(0);
        if (!a) return std::nullopt;
        if (s->num_operands == 1) return unary(s->op, *a);
        std::optional<double> b = op(1);
        if (!b) return std::nullopt;
        return binary(s->op, *a, *b);
      }
      default: return std::nullopt;  // a load other than x: v does not depend on x alone
    }
  }

 private:
  static std::optional<double> unary(uint32_t op, double a) {
    switch (op) {
      case PLUGSDK_OP_ABS: return std::fabs(a);
      case PLUGSDK_OP_NEG: return -a;
      case PLUGSDK_OP_EXP: return std::exp(a);
      case PLUGSDK_OP_EXPM1: return std::expm1(a);
      case PLUGSDK_OP_LOG: return std::log(a);
      case PLUGSDK_OP_LOG1P: return std::log1p(a);
      case PLUGSDK_OP_SQRT: return std::sqrt(a);
      case PLUGSDK_OP_RSQRT: return 1 / std::sqrt(a);
      case PLUGSDK_OP_TANH: return std::tanh(a);
      case PLUGSDK_OP_ERF: return std::erf(a);
      default: return std::nullopt;
    }
  }
  static std::optional<double> binary(uint32_t op, double a, double b) {
    switch (op) {
      case PLUGSDK_OP_ADD: return a + b;
      case PLUGSDK_OP_SUB: return a - b;
      case PLUGSDK_OP_MUL: return a * b;
      case PLUGSDK_OP_DIV: return a / b;
      case PLUGSDK_OP_POW: return std::pow(a, b);
      case PLUGSDK_OP_MAXIMUM: return std::isnan(a) || std::isnan(b) ? NAN : std::fmax(a, b);
      case PLUGSDK_OP_MINIMUM: return std::isnan(a) || std::isnan(b) ? NAN : std::fmin(a, b);
      case PLUGSDK_OP_EQ: return a == b;
      case PLUGSDK_OP_NE: return a != b;
      case PLUGSDK_OP_LT: return a < b;
      case PLUGSDK_OP_LE: return a <= b;
      case PLUGSDK_OP_GT: return a > b;
      case PLUGSDK_OP_GE: return a >= b;
      default: return std::nullopt;
    }
  }
  const Epilogue& e_;
  int32_t x_;
  double xv_;
};

double geluTanh(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

/// Which activation v is of x, by its values at probe points; nullopt: none of them.
std::optional<Activation> activationOf(const Epilogue& e, int32_t v, int32_t x) {
  static const double kProbes[] = {-20, -8, -3, -1.5, -1, -0.5, -0.1, -1e-3, 0, 1e-3, 0.1, 0.5, 1, 1.5, 3, 8, 20};
  bool none = true, relu = true, gelu = true;
  for (double p : kProbes) {
    std::optional<double> y = Evaluator(e, x, p).eval(v);
    if (!y) return std::nullopt;
    auto near = [&](double want) { return std::fabs(*y - want) <= 1e-5 * std::fmax(1.0, std::fabs(want)); };
    none = none && near(p);
    relu = relu && near(p > 0 ? p : 0);
    gelu = gelu && near(geluTanh(p));
  }
  if (none) return Activation::kNone;
  if (relu) return Activation::kRelu;
  if (gelu) return Activation::kGeluTanh;
  return std::nullopt;
}

/// Splits value v into the terms of a sum: the accumulator, a bias read by its grid dim and a
/// residual read at the result's element. False for anything else.
bool sumTerms(const Epilogue& e, int32_t v, NativeEpilogue* n, bool* sawAcc) {
  v = e.stripCasts(v);
  const plugsdk_stmt_t* s = e.defOf(v);
  if (!s) return false;
  if (s->kind == PLUGSDK_STMT_SCALAR && s->op == PLUGSDK_OP_ADD && s->num_operands == 2)
    return sumTerms(e, s->operands[0], n, sawAcc) && sumTerms(e, s->operands[1], n, sawAcc);
  if (s->kind != PLUGSDK_STMT_LOAD) return false;
  const uint32_t dtype = e.kernel().arg(static_cast<size_t>(s->arg)).dtype;
  if (s->arg == e.acc()) {
    if (*sawAcc) return false;
    *sawAcc = true;
    return true;
  }
  if (e.isBiasIndex(s->index) && n->bias < 0) {
    n->bias = s->arg;
    n->biasDtype = dtype;
    return true;
  }
  if (e.sameIndex(s->index, e.accIndex()) && n->residual < 0) {
    n->residual = s->arg;
    n->residualDtype = dtype;
    return true;
  }
  return false;
}

}  // namespace

std::string NativeEpilogue::describe() const {
  std::string s = act == Activation::kRelu ? "relu(" : act == Activation::kGeluTanh ? "gelu_tanh(" : "(";
  s += "acc";
  if (bias >= 0) s += " + bias #" + std::to_string(bias);
  if (residual >= 0) s += " + residual #" + std::to_string(residual);
  return s + ") -> " + dtypeName(outDtype) + " #" + std::to_string(out);
}

std::optional<NativeEpilogue> matchNativeEpilogue(const sdk::KernelView& k, std::string* why, int biasDim) {
  Epilogue e(k, biasDim);
  if (!e.scan(why)) return std::nullopt;
  const plugsdk_stmt_t& store = e.store();
  NativeEpilogue n;
  n.out = store.arg;
  n.outDtype = k.arg(static_cast<size_t>(store.arg)).dtype;
  if (!isFloat(n.outDtype)) {
    if (why) *why = "an integer result";
    return std::nullopt;
  }
  const int32_t v = store.operands[0];
  // The sum is the value closest to the store that every load is reached through.
  for (int32_t x = static_cast<int32_t>(k.numValues()); x-- > 0;) {
    const plugsdk_stmt_t* s = e.defOf(x);
    if (!s || !isFloat(s->dtype)) continue;
    std::optional<Activation> act = activationOf(e, v, x);
    if (!act) continue;
    NativeEpilogue m = n;
    bool sawAcc = false;
    if (!sumTerms(e, x, &m, &sawAcc) || !sawAcc) continue;
    m.act = *act;
    return m;
  }
  if (why) *why = "not act(acc + bias + residual) with act none, relu or the tanh GELU";
  return std::nullopt;
}

}  // namespace plugsdk::cuda
