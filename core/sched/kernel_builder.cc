// KernelBuilder: statement construction with scoped CSE.
#include "core/sched/kernel_builder.h"

#include <cstring>
#include <iterator>

#include "core/ir/attribute.h"

namespace plugsdk::sched {

using kernel::Combine;
using kernel::ReduceOp;

KernelBuilder::KernelBuilder(std::string name, std::vector<SymExpr> grid) {
  kernel_.name = std::move(name);
  kernel_.grid = std::move(grid);
  scopes_.emplace_back();
}

int KernelBuilder::arg(int buffer, const std::string& name, DType dtype, bool read, bool write, bool accumulator) {
  for (size_t i = 0; i < argBuffers_.size(); ++i) {
    kernel::Arg& a = kernel_.args[i];
    if (argBuffers_[i] == buffer && a.accumulator == accumulator && (buffer >= 0 || accumulator)) {
      a.read = a.read || read;
      a.written = a.written || write;
      return static_cast<int>(i);
    }
  }
  kernel::Arg a;
  a.name = name;
  a.dtype = dtype;
  a.read = read;
  a.written = write;
  a.accumulator = accumulator;
  kernel_.args.push_back(a);
  argBuffers_.push_back(accumulator ? -1 : buffer);
  return static_cast<int>(kernel_.args.size() - 1);
}

namespace {
bool usesLoopVar(const SymExpr& e) {
  for (const std::string& n : e.symbols())
    if (n.size() > 1 && n[0] == 'r' && n.find_first_not_of("0123456789", 1) == std::string::npos) return true;
  return false;
}
}  // namespace

int KernelBuilder::add(Stmt s, const std::string& cseKey) {
  if (!cseKey.empty())
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(cseKey);
      if (f != it->end()) return f->second;
    }
  // Loop-invariant code motion: a statement that reads no loop variable and no loop-local
  // value is computed once, before the loop.
  bool hoist = loop_ != nullptr && !usesLoopVar(s.index);
  for (int o : s.operands) hoist = hoist && depth_[static_cast<size_t>(o)] == 0;
  for (const std::string& n : s.index.symbols())  // values an index expression reads (%id)
    if (n[0] == '%') hoist = hoist && depth_[static_cast<size_t>(std::stoi(n.substr(1)))] == 0;
  s.result = kernel_.numValues++;
  types_.push_back(s.dtype);
  depth_.push_back(hoist || !loop_ ? 0 : 1);
  const int id = s.result;
  if (hoist)
    kernel_.body.push_back(std::move(s));
  else
    current().push_back(std::move(s));
  if (!cseKey.empty()) (hoist ? scopes_.front() : scopes_.back())[cseKey] = id;
  return id;
}

namespace {

void renumberBody(std::vector<Stmt>& body, std::vector<int>& map, int& next,
                  std::map<std::string, ir::SymExpr>& symbols) {
  for (Stmt& s : body) {
    for (int& o : s.operands) o = map[static_cast<size_t>(o)];
    if (!s.index.isZero()) s.index = s.index.substitute(symbols);
    renumberBody(s.body, map, next, symbols);
    if (s.result >= 0) {
      const int fresh = next++;
      symbols[kernel::valueSymbol(s.result)] = kernel::valueRef(fresh);
      map[static_cast<size_t>(s.result)] = fresh;
      s.result = fresh;
    }
  }
}

}  // namespace

void KernelBuilder::renumber() {
  std::vector<int> map(static_cast<size_t>(kernel_.numValues), -1);
  std::map<std::string, ir::SymExpr> symbols;
  int next = 0;
  renumberBody(kernel_.body, map, next, symbols);
}

int KernelBuilder::addHoisted(Stmt s, const std::string& cseKey) {
  auto f = scopes_.front().find(cseKey);
  if (f != scopes_.front().end()) return f->second;
  s.result = kernel_.numValues++;
  types_.push_back(s.dtype);
  depth_.push_back(0);
  const int id = s.result;
  prelude_.push_back(std::move(s));
  scopes_.front()[cseKey] = id;
  return id;
}

namespace {
std::string ops(const std::vector<int>& v) {
  std::string k;
  for (int x : v) k += std::to_string(x) + ",";
  return k;
}
}  // namespace

int KernelBuilder::load(int arg, const SymExpr& index, int mask) {
  Stmt s;
  s.kind = StmtKind::kLoad;
  s.arg = arg;
  s.index = index;
  s.dtype = kernel_.args.at(static_cast<size_t>(arg)).dtype;
  if (mask >= 0) s.operands.push_back(mask);
  std::string key = "load " + std::to_string(arg) + "[" + index.toString() + "] " + ops(s.operands);
  return add(std::move(s), key);
}

int KernelBuilder::constant(double value, DType dtype) {
  Stmt s;
  s.kind = StmtKind::kConst;
  s.dtype = dtype;
  if (ir::isFloating(dtype))
    s.fvalue = value;
  else
    s.ivalue = static_cast<int64_t>(value);
  std::string bits(sizeof(double), '\0');
  std::memcpy(bits.data(), &value, sizeof(double));  // distinguishes -0.0 and NaN payloads
  return addHoisted(std::move(s), "const " + std::string(ir::dtypeName(dtype)) + bits);
}

int KernelBuilder::constantInt(int64_t value, DType dtype) {
  Stmt s;
  s.kind = StmtKind::kConst;
  s.dtype = dtype;
  s.ivalue = value;
  return addHoisted(std::move(s), "iconst " + std::string(ir::dtypeName(dtype)) + std::to_string(value));
}

int KernelBuilder::index(const SymExpr& e) {
  Stmt s;
  s.kind = StmtKind::kIndex;
  s.dtype = DType::kI64;
  s.index = e;
  return add(std::move(s), "index " + e.toString());
}

int KernelBuilder::scalar(prims::ScalarOp op, int a, int b) {
  Stmt s;
  s.kind = StmtKind::kScalar;
  s.op = op;
  s.operands.push_back(a);
  if (b >= 0) s.operands.push_back(b);
  s.dtype = prims::scalarOpInfo(op).predicate ? DType::kBool : type(a);
  std::string key = std::string("op ") + prims::scalarOpInfo(op).name + " " + ops(s.operands);
  return add(std::move(s), key);
}

int KernelBuilder::where(int c, int a, int b) {
  Stmt s;
  s.kind = StmtKind::kWhere;
  s.operands = {c, a, b};
  s.dtype = type(a);
  std::string key = "where " + ops(s.operands);
  return add(std::move(s), key);
}

int KernelBuilder::cast(int a, DType dtype) {
  if (type(a) == dtype) return a;
  Stmt s;
  s.kind = StmtKind::kCast;
  s.operands = {a};
  s.dtype = dtype;
  std::string key = "cast " + std::string(ir::dtypeName(dtype)) + " " + ops(s.operands);
  return add(std::move(s), key);
}

int KernelBuilder::rand(int64_t seed, const SymExpr& counter, DType dtype) {
  Stmt s;
  s.kind = StmtKind::kRand;
  s.ivalue = seed;
  s.index = counter;
  s.dtype = dtype;
  return add(std::move(s),
             "rand " + std::to_string(seed) + " " + counter.toString() + std::string(ir::dtypeName(dtype)));
}

void KernelBuilder::store(int arg, const SymExpr& index, int value, Combine combine) {
  Stmt s;
  s.kind = StmtKind::kStore;
  s.arg = arg;
  s.index = index;
  s.operands = {value};
  s.combine = combine;
  current().push_back(std::move(s));
}

void KernelBuilder::check(int cond, std::string message) {
  Stmt s;
  s.kind = StmtKind::kCheck;
  s.operands = {cond};
  s.message = std::move(message);
  current().push_back(std::move(s));
}

void KernelBuilder::checkIndex(int index, const SymExpr& size, const std::string& what, int mask) {
  const int zero = constantInt(0, DType::kI64);
  int ok = scalar(prims::ScalarOp::kBitwiseAnd, scalar(prims::ScalarOp::kGe, index, zero),
                  scalar(prims::ScalarOp::kLt, index, this->index(size)));
  // Where the mask is off the index was computed from masked loads (value 0), not read.
  if (mask >= 0)
    ok = scalar(prims::ScalarOp::kBitwiseOr, ok,
                scalar(prims::ScalarOp::kBitwiseXor, mask, constantInt(1, DType::kBool)));
  check(ok, what + " is out of range [0, " + size.toString() + ")");
}

void KernelBuilder::beginLoop(std::vector<SymExpr> sizes) {
  loopHolder_.clear();
  Stmt s;
  s.kind = StmtKind::kLoop;
  s.loopSizes = std::move(sizes);
  loopHolder_.push_back(std::move(s));
  loop_ = &loopHolder_.back();
  scopes_.emplace_back();
}

int KernelBuilder::reduce(ReduceOp op, int a) {
  Stmt s;
  s.kind = StmtKind::kReduce;
  s.reduce = op;
  s.operands = {a};
  s.dtype = op == ReduceOp::kArgMax || op == ReduceOp::kArgMin ? DType::kI64 : type(a);
  s.result = kernel_.numValues++;
  types_.push_back(s.dtype);
  depth_.push_back(0);  // a reduce result lives after its loop
  const int id = s.result;
  current().push_back(std::move(s));
  return id;
}

void KernelBuilder::endLoop() {
  kernel_.body.push_back(std::move(loopHolder_.back()));
  loopHolder_.clear();
  loop_ = nullptr;
  scopes_.pop_back();
}

Kernel KernelBuilder::finish() {
  if (loop_) endLoop();
  kernel_.body.insert(kernel_.body.begin(), std::make_move_iterator(prelude_.begin()),
                      std::make_move_iterator(prelude_.end()));
  prelude_.clear();
  renumber();
  return std::move(kernel_);
}

}  // namespace plugsdk::sched
