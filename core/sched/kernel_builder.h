// Appends statements to a kernel under construction: value numbering, arguments bound to
// program buffers, loop scopes, and local CSE (an identical load or op in scope is reused,
// so an inlined producer read twice at one point is computed once).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/kernel/kernel_ir.h"

namespace plugsdk::sched {

using ir::DType;
using ir::SymExpr;
using kernel::Kernel;
using kernel::Stmt;
using kernel::StmtKind;

class KernelBuilder {
 public:
  KernelBuilder(std::string name, std::vector<SymExpr> grid);

  /// The argument for program buffer `buffer` (added on first use); marks read / written.
  int arg(int buffer, const std::string& name, DType dtype, bool read, bool write, bool accumulator = false);
  /// Program buffer per argument, in argument order (-1 for an accumulator).
  const std::vector<int>& argBuffers() const { return argBuffers_; }

  int load(int arg, const SymExpr& index, int mask = -1);
  int constant(double value, DType dtype);
  int constantInt(int64_t value, DType dtype);
  int index(const SymExpr& e);
  int scalar(prims::ScalarOp op, int a, int b = -1);
  int where(int c, int a, int b);
  int cast(int a, DType dtype);
  int rand(int64_t seed, const SymExpr& counter, DType dtype);
  void store(int arg, const SymExpr& index, int value, kernel::Combine combine = kernel::Combine::kNone);
  /// A run-time check: the kernel fails with `message` where `cond` is false.
  void check(int cond, std::string message);
  /// Checks 0 <= index < size for an integer value (a gather or scatter index), only where
  /// `mask` (-1: everywhere) holds.
  void checkIndex(int index, const SymExpr& size, const std::string& what, int mask = -1);

  /// Opens a reduction loop over `sizes` (variables r0, r1, ...); reduce() is only valid inside.
  void beginLoop(std::vector<SymExpr> sizes);
  int reduce(kernel::ReduceOp op, int a);
  void endLoop();
  bool inLoop() const { return scopes_.size() > 1; }

  DType type(int v) const { return types_.at(static_cast<size_t>(v)); }
  Kernel finish();
  /// Statements so far (loops included).
  int64_t size() const { return kernel_.numStmts() + (loop_ ? static_cast<int64_t>(loop_->body.size()) : 0); }

 private:
  int add(Stmt s, const std::string& cseKey);
  std::vector<Stmt>& current() { return loop_ ? loop_->body : kernel_.body; }
  /// Adds a statement with no operands (a constant) at kernel scope, before everything else.
  int addHoisted(Stmt s, const std::string& cseKey);
  /// Numbers values in text order (hoisting and CSE leave gaps and inversions).
  void renumber();

  Kernel kernel_;
  std::vector<DType> types_;
  std::vector<int> depth_;  ///< per value: 0 kernel scope, 1 inside the current loop
  std::vector<int> argBuffers_;
  std::vector<std::map<std::string, int>> scopes_;  ///< CSE keys per scope (kernel, then loop)
  Stmt* loop_ = nullptr;
  std::vector<Stmt> loopHolder_;
  std::vector<Stmt> prelude_;  ///< hoisted constants
};

}  // namespace plugsdk::sched
