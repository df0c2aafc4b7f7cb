// The epilogue kernel after a library op (epilogue_kernel.h).
#include "backends/cuda/library/epilogue_kernel.h"

#include <vector>

namespace plugsdk::cuda {

namespace {

bool sameExpr(const sdk::KernelView& k, plugsdk_index_expr_t a, plugsdk_index_expr_t b) {
  if (a.count != b.count) return false;
  const plugsdk_index_insn_t* pool = k.raw().index_insns;
  for (uint32_t i = 0; i < a.count; ++i) {
    const plugsdk_index_insn_t &x = pool[a.first + i], &y = pool[b.first + i];
    if (x.op != y.op || x.operand != y.operand) return false;
  }
  return true;
}

/// The top-level statement that stores the accumulator's value unchanged, at the element it
/// was read from, into an argument of its dtype; -1 if none.
int resultStore(const sdk::KernelView& k, size_t acc) {
  std::vector<int> accLoad(k.numValues(), -1);  // value -> its top-level load of acc
  size_t i = 0;
  while (i < k.numStmts()) {
    const plugsdk_stmt_t& s = k.stmt(i);
    if (s.kind == PLUGSDK_STMT_LOAD && static_cast<size_t>(s.arg) == acc && s.num_operands == 0 && s.result >= 0)
      accLoad[static_cast<size_t>(s.result)] = static_cast<int>(i);
    if (s.kind == PLUGSDK_STMT_STORE && s.op == PLUGSDK_COMBINE_NONE && s.num_operands == 1 && s.operands[0] >= 0 &&
        static_cast<size_t>(s.arg) != acc && k.arg(static_cast<size_t>(s.arg)).dtype == k.arg(acc).dtype) {
      const int load = accLoad[static_cast<size_t>(s.operands[0])];
      if (load >= 0 && sameExpr(k, k.stmt(static_cast<size_t>(load)).index, s.index)) return static_cast<int>(i);
    }
    i += s.kind == PLUGSDK_STMT_LOOP ? 1 + s.body_count : 1;  // loop bodies are not top level
  }
  return -1;
}

}  // namespace

sdk::StatusOr<std::unique_ptr<EpilogueKernel>> EpilogueKernel::create(const sdk::KernelView& k, size_t numCallSymbols,
                                                                      const CompileKernel& compile) {
  auto e = std::make_unique<EpilogueKernel>();
  bool found = false;
  for (size_t i = 0; i < k.numArgs(); ++i)
    if (k.arg(i).access & PLUGSDK_ACCESS_ACCUMULATOR) {
      if (found)
        return sdk::invalidArgument("the epilogue kernel " + std::string(k.name()) + " has two ACCUMULATOR arguments");
      e->accumulator_ = i;
      e->accDtype_ = k.arg(i).dtype;
      found = true;
    }
  if (!found)
    return sdk::invalidArgument("the epilogue kernel " + std::string(k.name()) + " has no ACCUMULATOR argument");
  e->numArgs_ = k.numArgs();
  e->numCallSymbols_ = numCallSymbols;
  // A store of the result itself is taken out: the op computes into that buffer instead.
  const int store = resultStore(k, e->accumulator_);
  std::vector<plugsdk_stmt_t> stmts;
  plugsdk_kernel_t without = k.raw();
  if (store >= 0) {
    e->resultArg_ = static_cast<int>(k.stmt(static_cast<size_t>(store)).arg);
    stmts.assign(k.raw().stmts, k.raw().stmts + k.numStmts());
    stmts.erase(stmts.begin() + store);
    without.stmts = stmts.data();
    without.num_stmts = stmts.size();
    sdk::Status valid = sdk::KernelView::validate(without);
    if (!valid.isOk()) return sdk::internalError("the epilogue without its result store: " + valid.message());
  }
  sdk::StatusOr<std::unique_ptr<LoadedKernel>> loaded = compile(sdk::KernelView(without));
  if (!loaded.isOk()) return loaded.status().withContext("the epilogue kernel");
  e->kernel_ = std::move(*loaded);
  return e;
}

sdk::Status EpilogueKernel::launch(CUdeviceptr temp, const CUdeviceptr* extra, const std::vector<int64_t>& symbols,
                                   CUstream stream) const {
  args_.resize(numArgs_);
  for (size_t a = 0, next = 0; a < numArgs_; ++a) args_[a] = a == accumulator_ ? temp : extra[next++];
  symbols_.assign(symbols.begin() + static_cast<std::ptrdiff_t>(std::min(numCallSymbols_, symbols.size())),
                  symbols.end());
  return launchKernel(*kernel_, args_, symbols_, kernel_->status->address(kernel_->statusSlot), stream);
}

CUdeviceptr EpilogueKernel::bufferOf(const CUdeviceptr* extra, int arg) const {
  size_t i = 0;
  for (int a = 0; a < arg; ++a)
    if (static_cast<size_t>(a) != accumulator_) ++i;
  return extra[i];
}

void makeRowMajor(OperandDesc& d, std::vector<plugsdk_index_insn_t>& pool) {
  auto append = [&](plugsdk_index_expr_t e) {
    for (uint32_t i = 0; i < e.count; ++i) pool.push_back(pool[e.first + i]);
  };
  std::vector<plugsdk_index_expr_t> strides(d.sizes.size());
  for (size_t i = d.sizes.size(); i-- > 0;) {
    const auto first = static_cast<uint32_t>(pool.size());
    if (i + 1 == d.sizes.size()) {
      pool.push_back({PLUGSDK_INDEX_CONST, 0, 1});
    } else {
      append(strides[i + 1]);
      append(d.sizes[i + 1]);
      pool.push_back({PLUGSDK_INDEX_MUL, 0, 0});
    }
    strides[i] = {first, static_cast<uint32_t>(pool.size()) - first};
  }
  d.strides = std::move(strides);
  d.offset = {static_cast<uint32_t>(pool.size()), 1};
  pool.push_back({PLUGSDK_INDEX_CONST, 0, 0});
}

}  // namespace plugsdk::cuda
