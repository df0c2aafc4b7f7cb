// KernelLowering's frame: the entry function, the walk over the grid (outer points, inner
// chunks of lanes), statements, and the choice of vectorization mode (see lowering.h).
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include "backends/llvm_lowering/failure_raiser.h"
#include "backends/llvm_lowering/frame.h"
#include "backends/llvm_lowering/lowering.h"
#include "backends/llvm_lowering/thread_group.h"

namespace plugsdk::lowering {

namespace {

/// The compile-time coefficient of one variable in an index program, if it is affine in it
/// (constants multiply it; anything else that could multiply it makes it non-affine). A
/// loaded value is non-affine unless `invariant` marks it as not varying with the variable
/// (coefficient 0): a gather's row `768 * %id + r0` is contiguous along the loop's r0.
std::optional<int64_t> staticStride(sdk::Span<const plugsdk_index_insn_t> pool, plugsdk_index_expr_t e,
                                    uint32_t varKind, int64_t var, const std::vector<bool>* invariant = nullptr) {
  struct Abs {
    bool affine = true, isConst = false;
    int64_t c = 0, coeff = 0;
  };
  std::vector<Abs> st;
  for (uint32_t i = 0; i < e.count; ++i) {
    const plugsdk_index_insn_t& in = pool[e.first + i];
    Abs x;
    switch (in.op) {
      case PLUGSDK_INDEX_CONST:
        x.isConst = true;
        x.c = in.operand;
        break;
      case PLUGSDK_INDEX_GRID_VAR:
      case PLUGSDK_INDEX_LOOP_VAR: x.coeff = (in.op == varKind && in.operand == var) ? 1 : 0; break;
      case PLUGSDK_INDEX_SYMBOL: break;
      case PLUGSDK_INDEX_VALUE:
        x.affine = invariant && in.operand >= 0 && static_cast<size_t>(in.operand) < invariant->size() &&
                   (*invariant)[static_cast<size_t>(in.operand)];
        break;
      default: {
        if (st.size() < 2) return std::nullopt;
        Abs bb = st.back();
        st.pop_back();
        Abs a = st.back();
        st.pop_back();
        x.affine = a.affine && bb.affine;
        if (in.op == PLUGSDK_INDEX_ADD || in.op == PLUGSDK_INDEX_SUB) {
          x.coeff = in.op == PLUGSDK_INDEX_ADD ? a.coeff + bb.coeff : a.coeff - bb.coeff;
          x.isConst = a.isConst && bb.isConst;
          x.c = in.op == PLUGSDK_INDEX_ADD ? a.c + bb.c : a.c - bb.c;
        } else if (in.op == PLUGSDK_INDEX_MUL) {
          if (a.isConst && bb.isConst) {
            x.isConst = true;
            x.c = a.c * bb.c;
          } else if (a.isConst) {
            x.coeff = a.c * bb.coeff;
          } else if (bb.isConst) {
            x.coeff = bb.c * a.coeff;
          } else if (a.coeff != 0 || bb.coeff != 0) {
            x.affine = false;
          }
        } else {  // FLOORDIV, MOD
          if (a.coeff != 0 || bb.coeff != 0) x.affine = false;
          x.isConst = a.isConst && bb.isConst && bb.c != 0;
          if (x.isConst) x.c = in.op == PLUGSDK_INDEX_FLOORDIV ? sdk::floorDiv(a.c, bb.c) : sdk::floorMod(a.c, bb.c);
        }
      }
    }
    st.push_back(x);
  }
  if (st.size() != 1 || !st[0].affine) return std::nullopt;
  return st[0].coeff;
}

/// The values that do not vary with the variables of the loop at `loop`: every value
/// defined outside its body, and in it the loads, index values and scalar ops whose
/// operands (and index) do not read a loop variable or a varying value.
std::vector<bool> loopInvariantValues(const sdk::KernelView& k, size_t loop) {
  const plugsdk_stmt_t& l = k.stmt(loop);
  std::vector<bool> inv(k.numValues(), true);
  auto indexInvariant = [&](plugsdk_index_expr_t e) {
    for (int64_t v = 0; v < static_cast<int64_t>(l.num_loop_sizes); ++v)
      if (staticStride(k.indexPool(), e, PLUGSDK_INDEX_LOOP_VAR, v, &inv) != std::optional<int64_t>(0)) return false;
    return true;
  };
  auto operandsInvariant = [&](const plugsdk_stmt_t& t) {
    for (uint32_t o = 0; o < t.num_operands && o < 3; ++o)
      if (t.operands[o] < 0 || static_cast<size_t>(t.operands[o]) >= inv.size() ||
          !inv[static_cast<size_t>(t.operands[o])])
        return false;
    return true;
  };
  for (size_t j = loop + 1; j <= loop + l.body_count; ++j) {
    const plugsdk_stmt_t& t = k.stmt(j);
    if (t.result < 0 || static_cast<size_t>(t.result) >= inv.size()) continue;
    bool invariant = false;
    switch (t.kind) {
      case PLUGSDK_STMT_CONST: invariant = true; break;
      case PLUGSDK_STMT_LOAD: invariant = indexInvariant(t.index) && operandsInvariant(t); break;  // mask
      case PLUGSDK_STMT_INDEX: invariant = indexInvariant(t.index); break;
      case PLUGSDK_STMT_SCALAR:
      case PLUGSDK_STMT_WHERE:
      case PLUGSDK_STMT_CAST: invariant = operandsInvariant(t); break;
      default: break;  // a reduce, a random number: varying
    }
    inv[static_cast<size_t>(t.result)] = invariant;
  }
  return inv;
}

/// Every index expression of the kernel: accesses, indices, rand counters, loop extents.
std::vector<plugsdk_index_expr_t> indexExprs(const sdk::KernelView& k) {
  std::vector<plugsdk_index_expr_t> out;
  for (size_t i = 0; i < k.numStmts(); ++i) {
    const plugsdk_stmt_t& s = k.stmt(i);
    if (s.kind == PLUGSDK_STMT_LOAD || s.kind == PLUGSDK_STMT_STORE || s.kind == PLUGSDK_STMT_INDEX ||
        s.kind == PLUGSDK_STMT_RAND)
      out.push_back(s.index);
    if (s.kind == PLUGSDK_STMT_LOOP)
      for (size_t d = 0; d < s.num_loop_sizes; ++d) out.push_back(s.loop_sizes[d]);
  }
  return out;
}

/// Target::collapseGrid's groups: dims d and d + 1 join when both extents are constants and
/// every index is affine in both with i_d's coefficient i_(d+1)'s times extent d + 1, so
/// that sum_d c_d i_d over a group is c_last times the group's row-major linear index (a
/// loaded value in an index counts as a term without either variable). The last dim joins
/// only when its extent is a multiple of `lanes` (the launch's threads then do not change).
std::vector<std::pair<size_t, size_t>> collapsedGroups(const sdk::KernelView& k,
                                                       const std::vector<std::optional<int64_t>>& extents,
                                                       uint32_t lanes, bool collapse) {
  const size_t rank = extents.size();
  std::vector<std::pair<size_t, size_t>> groups;
  const std::vector<plugsdk_index_expr_t> exprs = collapse ? indexExprs(k) : std::vector<plugsdk_index_expr_t>{};
  const std::vector<bool> opaque(k.numValues(), true);
  auto joins = [&](size_t d) {
    if (!collapse || !extents[d] || !extents[d + 1] || *extents[d] <= 0 || *extents[d + 1] <= 0) return false;
    if (d + 2 == rank && *extents[d + 1] % lanes != 0) return false;
    for (plugsdk_index_expr_t e : exprs) {
      const std::optional<int64_t> a =
          staticStride(k.indexPool(), e, PLUGSDK_INDEX_GRID_VAR, static_cast<int64_t>(d), &opaque);
      const std::optional<int64_t> b =
          staticStride(k.indexPool(), e, PLUGSDK_INDEX_GRID_VAR, static_cast<int64_t>(d + 1), &opaque);
      if (!a || !b || static_cast<__int128>(*a) != static_cast<__int128>(*b) * *extents[d + 1]) return false;
    }
    return true;
  };
  __int128 points = 0;  // of the group being grown (kept far from overflowing an index)
  for (size_t d = 0; d < rank; ++d) {
    if (!groups.empty() && joins(d - 1) && points * *extents[d] <= (__int128{1} << 48)) {
      groups.back().second = d;
      points *= *extents[d];
    } else {
      groups.emplace_back(d, d);
      points = extents[d] ? *extents[d] : 0;
    }
  }
  return groups;
}

}  // namespace

const char* modeName(VectorMode m) {
  switch (m) {
    case VectorMode::kScalar: return "scalar";
    case VectorMode::kGrid: return "grid";
    case VectorMode::kLoop: return "loop";
  }
  return "?";
}

VectorMode chooseMode(const sdk::KernelView& k, const Target& target) {
  if (target.f32Lanes == 1) return VectorMode::kScalar;
  // Accesses inside loops vote: contiguous along the grid's last dim, or along the loop's last
  // var. An access that does not vary along the loop (a gather's id: once per point, not per
  // iteration) does not vote; a gather's row at that id (`768 * %id + r0`) votes for the loop.
  int gridVotes = 0, loopVotes = 0;
  bool hasLoop = false;
  for (size_t i = 0; i < k.numStmts(); ++i) {
    const plugsdk_stmt_t& s = k.stmt(i);
    if (s.kind != PLUGSDK_STMT_LOOP) continue;
    hasLoop = true;
    const std::vector<bool> invariant = loopInvariantValues(k, i);
    for (size_t j = i + 1; j <= i + s.body_count; ++j) {
      const plugsdk_stmt_t& t = k.stmt(j);
      if (t.kind != PLUGSDK_STMT_LOAD && t.kind != PLUGSDK_STMT_STORE) continue;
      if (t.result >= 0 && static_cast<size_t>(t.result) < invariant.size() && invariant[static_cast<size_t>(t.result)])
        continue;
      if (k.numGrid() > 0 && staticStride(k.indexPool(), t.index, PLUGSDK_INDEX_GRID_VAR,
                                          static_cast<int64_t>(k.numGrid()) - 1) == std::optional<int64_t>(1))
        ++gridVotes;
      if (s.num_loop_sizes > 0 &&
          staticStride(k.indexPool(), t.index, PLUGSDK_INDEX_LOOP_VAR, static_cast<int64_t>(s.num_loop_sizes) - 1,
                       &invariant) == std::optional<int64_t>(1))
        ++loopVotes;
    }
  }
  if (hasLoop && (loopVotes > gridVotes || k.numGrid() == 0)) return VectorMode::kLoop;
  return k.numGrid() > 0 ? VectorMode::kGrid : VectorMode::kScalar;
}

KernelLowering::KernelLowering(llvm::LLVMContext& ctx, llvm::Module& m, const sdk::KernelView& k, const Target& target,
                               VectorMode mode)
    : ctx_(ctx), m_(m), k_(k), target_(target), mode_(mode), b_(ctx) {
  values_.resize(k.numValues());
  valueTypes_.resize(k.numValues(), PLUGSDK_DTYPE_I64);
  checkOrdinal_.resize(k.numStmts(), 0);
  reuse_ = findLoopReuse(k);
  // A split reduction needs one loop with a reduce, and no store before its end (every split
  // runs the statements before and in the loop; only the last runs the ones after).
  if (mode == VectorMode::kLoop && target.group && target.group->canSplit()) {
    std::optional<size_t> loop;
    bool ok = true, reduces = false;
    for (size_t i = 0; i < k.numStmts() && ok; ++i) {
      const plugsdk_stmt_t& s = k.stmt(i);
      if (s.kind == PLUGSDK_STMT_LOOP) {
        ok = !loop && s.num_loop_sizes > 0;
        loop = i;
        for (size_t j = i + 1; j <= i + s.body_count; ++j) reduces |= k.stmt(j).kind == PLUGSDK_STMT_REDUCE;
      }
      if (s.kind == PLUGSDK_STMT_STORE && (!loop || i <= *loop + k.stmt(*loop).body_count)) ok = false;
    }
    if (ok && reduces) splitLoop = loop;
  }
  std::vector<uint8_t> trig(k.numValues(), 0);  // bit 0: sin taken, bit 1: cos taken
  for (size_t i = 0; i < k.numStmts(); ++i) {
    const plugsdk_stmt_t& s = k.stmt(i);
    if (s.kind == PLUGSDK_STMT_SCALAR && (s.op == PLUGSDK_OP_SIN || s.op == PLUGSDK_OP_COS) && s.num_operands == 1)
      trig[static_cast<size_t>(s.operands[0])] |= s.op == PLUGSDK_OP_SIN ? 1 : 2;
  }
  for (uint8_t t : trig) sinAndCos_.push_back(t == 3);
  for (size_t i = 0; i < k.numStmts(); ++i) {
    const plugsdk_stmt_t& s = k.stmt(i);
    if (s.result >= 0) valueTypes_[static_cast<size_t>(s.result)] = s.dtype;
    if (s.kind == PLUGSDK_STMT_CHECK) {
      checkOrdinal_[i] = checkMessages.size();
      checkMessages.emplace_back(s.message ? s.message : "");
    }
  }
}

sdk::Status KernelLowering::fail(size_t pos, const std::string& why) const {
  return sdk::unimplemented("kernel @" + std::string(k_.name()) + ", statement " + std::to_string(pos) + ": " + why);
}

llvm::Value* KernelLowering::laneIota(uint32_t lanes) {
  std::vector<llvm::Constant*> c;
  for (uint32_t i = 0; i < lanes; ++i) c.push_back(b_.getInt64(i));
  return llvm::ConstantVector::get(c);
}

llvm::Value* KernelLowering::invariantLoad(int32_t arg, llvm::Value* load) {
  if (argInvariant_[static_cast<size_t>(arg)])
    llvm::cast<llvm::LoadInst>(load)->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(ctx_, {}));
  return load;
}

llvm::Value* KernelLowering::anyTrue(llvm::Value* maskVec) {
  if (!maskVec->getType()->isVectorTy()) return maskVec;
  return b_.CreateOrReduce(maskVec);
}

llvm::Value* KernelLowering::widen(const Val& v, uint32_t lanes) {
  if (v.varying || lanes == 1) return v.v;
  return b_.CreateVectorSplat(lanes, v.v);
}

sdk::Status KernelLowering::forLoop(llvm::Value* begin, llvm::Value* end, int64_t step,
                                    const std::function<sdk::Status(llvm::Value*)>& body) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx_, "loop", fn_);
  llvm::BasicBlock* bodyBlock = llvm::BasicBlock::Create(ctx_, "body", fn_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "done", fn_);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
  i->addIncoming(begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(i, end), bodyBlock, done);
  b_.SetInsertPoint(bodyBlock);
  ++dynamicDepth_;
  sdk::Status st = body(i);
  --dynamicDepth_;
  if (!st.isOk()) return st;
  llvm::Value* next = b_.CreateAdd(i, b_.getInt64(step), "i.next", /*HasNUW=*/false, /*HasNSW=*/true);
  i->addIncoming(next, b_.GetInsertBlock());
  b_.CreateBr(head);
  b_.SetInsertPoint(done);
  return sdk::Status::ok();
}

sdk::Status KernelLowering::chunked(llvm::Value* begin, llvm::Value* end, uint32_t lanes,
                                    const std::function<sdk::Status(llvm::Value*, llvm::Value*)>& body) {
  if (lanes == 1) return forLoop(begin, end, 1, [&](llvm::Value* i) { return body(i, nullptr); });
  llvm::Value* n = b_.CreateSub(end, begin);
  llvm::Value* count = b_.CreateSDiv(n, b_.getInt64(lanes));
  llvm::Value* full = b_.CreateAdd(begin, b_.CreateMul(count, b_.getInt64(lanes)));
  sdk::Status st = sdk::Status::ok();
  // A few chunks known at compile time are unrolled (a row that fits a few vectors: loops
  // over the same extent then keep their values per chunk, loop_reuse.h).
  auto* constCount = llvm::dyn_cast<llvm::ConstantInt>(count);
  if (constCount && constCount->getSExtValue() <= kUnrollChunks) {
    for (int64_t c = 0; c < constCount->getSExtValue() && st.isOk(); ++c)
      st = body(b_.CreateAdd(begin, b_.getInt64(c * lanes)), nullptr);
  } else {
    st = forLoop(begin, full, lanes, [&](llvm::Value* i) { return body(i, nullptr); });
  }
  if (!st.isOk()) return st;
  return ifThen(b_.CreateICmpSLT(full, end), "tail", [&] { return body(full, tailMask(full, end, lanes)); });
}

llvm::Value* KernelLowering::tailMask(llvm::Value* start, llvm::Value* end, uint32_t lanes) {
  llvm::Value* laneIdx = b_.CreateAdd(b_.CreateVectorSplat(lanes, start), laneIota(lanes));
  return b_.CreateICmpSLT(laneIdx, b_.CreateVectorSplat(lanes, end), "tail.mask");
}

sdk::Status KernelLowering::ifThen(llvm::Value* cond, const char* name, const std::function<sdk::Status()>& body) {
  llvm::BasicBlock* then = llvm::BasicBlock::Create(ctx_, name, fn_);
  llvm::BasicBlock* after = llvm::BasicBlock::Create(ctx_, std::string(name) + ".after", fn_);
  b_.CreateCondBr(cond, then, after);
  b_.SetInsertPoint(then);
  sdk::Status st = body();
  if (!st.isOk()) return st;
  b_.CreateBr(after);
  b_.SetInsertPoint(after);
  return sdk::Status::ok();
}

sdk::Status KernelLowering::spread(llvm::Value* begin, llvm::Value* end, uint32_t lanes,
                                   const std::function<sdk::Status(llvm::Value*, llvm::Value*)>& body) {
  const ThreadGroup& g = *target_.group;
  llvm::Value* tid = g.threadIndex(b_);
  llvm::Value* width = b_.getInt64(lanes);
  llvm::Value* threads = b_.getInt64(g.size());
  llvm::Value* chunks = b_.CreateUDiv(b_.CreateSub(end, begin), width);  // full ones
  llvm::Value* fullEnd = b_.CreateAdd(begin, b_.CreateMul(chunks, width), "full.end");
  llvm::Value* rounds = b_.CreateUDiv(chunks, threads, "rounds");
  auto chunkAt = [&](llvm::Value* c) { return b_.CreateAdd(begin, b_.CreateMul(c, width)); };
  // A small constant number of rounds is unrolled here: the rounds of two loops over the
  // same extent compute the same addresses instruction for instruction, so the early CSE
  // reuses the first loop's loads of read-only arguments in the later ones.
  auto round = [&](llvm::Value* r) { return body(chunkAt(b_.CreateAdd(b_.CreateMul(r, threads), tid)), nullptr); };
  sdk::Status st = sdk::Status::ok();
  auto* constRounds = llvm::dyn_cast<llvm::ConstantInt>(rounds);
  if (constRounds && constRounds->getZExtValue() <= kUnrollRounds) {
    for (uint64_t r = 0; r < constRounds->getZExtValue() && st.isOk(); ++r) st = round(b_.getInt64(r));
  } else {
    st = forLoop(b_.getInt64(0), rounds, 1, round);
  }
  if (!st.isOk()) return st;
  // The leftover full chunks, then the partial one, which belongs to the thread that would
  // have taken the next full one.
  llvm::Value* rest = b_.CreateSub(chunks, b_.CreateMul(rounds, threads), "rest");
  auto isFalse = [](llvm::Value* v) {
    return llvm::isa<llvm::ConstantInt>(v) && llvm::cast<llvm::ConstantInt>(v)->isZero();
  };
  if (!isFalse(rest)) {
    st = ifThen(b_.CreateICmpULT(tid, rest), "spread.rest", [&] { return round(rounds); });
    if (!st.isOk()) return st;
  }
  llvm::Value* partial = b_.CreateICmpSLT(fullEnd, end);
  if (isFalse(partial)) return sdk::Status::ok();
  return ifThen(b_.CreateAnd(partial, b_.CreateICmpEQ(rest, tid)), "spread.tail",
                [&] { return body(fullEnd, tailMask(fullEnd, end, lanes)); });
}

sdk::Status KernelLowering::inOneThread(const Region& r, const std::function<sdk::Status()>& body) {
  if (!r.replicated) return body();
  return ifThen(b_.CreateICmpEQ(target_.group->threadIndex(b_), b_.getInt64(0)), "one.thread", body);
}

void KernelLowering::failWith(llvm::Value* failed, int32_t code, const std::string& message) {
  llvm::BasicBlock* bad = llvm::BasicBlock::Create(ctx_, "fail", fn_);
  llvm::BasicBlock* good = llvm::BasicBlock::Create(ctx_, "ok", fn_);
  b_.CreateCondBr(failed, bad, good, llvm::MDBuilder(ctx_).createUnlikelyBranchWeights());
  b_.SetInsertPoint(bad);
  b_.CreateAtomicCmpXchg(statusPtr_, b_.getInt32(kStatusOk), b_.getInt32(code), llvm::MaybeAlign(4),
                         llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
  if (target_.raiser) {
    llvm::BasicBlock* raise = llvm::BasicBlock::Create(ctx_, "fail.raise", fn_);
    b_.CreateCondBr(raiseFailures_, raise, exit_);
    b_.SetInsertPoint(raise);
    target_.raiser->raise(b_, std::string(k_.name()), message);
  }
  b_.CreateBr(exit_);
  b_.SetInsertPoint(good);
}

sdk::Status KernelLowering::run(const std::string& entry) {
  llvm::Type* i64 = b_.getInt64Ty();
  auto* fty = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), i64, i64, i64, i64}, false);
  fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, entry, &m_);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  if (!target_.cpu.empty()) fn_->addFnAttr("target-cpu", target_.cpu);
  if (!target_.features.empty()) fn_->addFnAttr("target-features", target_.features);
  if (target_.wideVectors) fn_->addFnAttr("prefer-vector-width", "512");
  llvm::BasicBlock* entryBlock = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  exit_ = llvm::BasicBlock::Create(ctx_, "exit", fn_);
  b_.SetInsertPoint(exit_);
  b_.CreateRetVoid();
  b_.SetInsertPoint(entryBlock);
  frame_ = fn_->getArg(0);
  llvm::Type* ptr = b_.getPtrTy();
  // CallFrame: args, symbols, grid, status (frame.h).
  llvm::Value* argsArr = b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, frame_, 0), "args");
  llvm::Value* symArr = b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, frame_, 1), "symbols");
  llvm::Value* gridArr = b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, frame_, 2), "grid");
  statusPtr_ = b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, frame_, 3), "status");
  if (target_.raiser) {  // bit 0: raise failures natively too (failure_raiser.h)
    llvm::Value* raw = b_.CreatePtrToInt(statusPtr_, i64);
    raiseFailures_ = b_.CreateTrunc(b_.CreateAnd(raw, b_.getInt64(1)), b_.getInt1Ty(), "status.raise");
    statusPtr_ = b_.CreateIntToPtr(b_.CreateAnd(raw, b_.getInt64(~int64_t{1})), ptr, "status.word");
  }
  // The ABI: in a kernel with a LOOP, an argument without WRITE access shares no memory with
  // one that has it (the core writes in place only in loop-free kernels), so its loads are
  // invariant over the launch.
  bool loops = false;
  for (size_t i = 0; i < k_.numStmts(); ++i) loops |= k_.stmt(i).kind == PLUGSDK_STMT_LOOP;
  for (size_t a = 0; a < k_.numArgs(); ++a)
    argInvariant_.push_back(loops && !(k_.arg(a).access & PLUGSDK_ACCESS_WRITE));
  for (size_t a = 0; a < k_.numArgs(); ++a)
    argPtrs_.push_back(b_.CreateLoad(ptr, b_.CreateConstGEP1_64(ptr, argsArr, a), "arg" + std::to_string(a)));
  for (size_t s = 0; s < k_.numSymbols(); ++s)
    symbols_.push_back(b_.CreateLoad(i64, b_.CreateConstGEP1_64(i64, symArr, s), std::string(k_.symbol(s))));
  for (size_t d = 0; d < k_.numGrid(); ++d) {
    sdk::StatusOr<int64_t> c = sdk::evalIndex(k_.indexPool(), k_.grid(d), sdk::IndexEnv{});
    gridExtents_.push_back(c.isOk() ? std::optional<int64_t>(*c) : std::nullopt);
  }
  for (size_t d = 0; d < k_.numGrid(); ++d)
    gridSizes_.push_back(target_.collapseGrid && gridExtents_[d]
                             ? static_cast<llvm::Value*>(b_.getInt64(static_cast<uint64_t>(*gridExtents_[d])))
                             : b_.CreateLoad(i64, b_.CreateConstGEP1_64(i64, gridArr, d), "g" + std::to_string(d)));
  // What the launch guarantees about alignment, for the vector accesses' alignment.
  if (target_.argAlign > 1)
    for (llvm::Value* p : argPtrs_) b_.CreateAlignmentAssumption(m_.getDataLayout(), p, target_.argAlign);
  if (target_.symbolDivisor > 1)
    for (llvm::Value* v : symbols_)
      b_.CreateAssumption(b_.CreateICmpEQ(b_.CreateAnd(v, b_.getInt64(target_.symbolDivisor - 1)), b_.getInt64(0)));

  const size_t rank = k_.numGrid();
  const uint32_t lanes = mode_ == VectorMode::kGrid ? target_.f32Lanes : 1;
  // Dims walked as one (Target::collapseGrid): the group's last variable is bound to the
  // group's linear index, the others to 0, and the range analysis of index programs sees
  // extents product and 1 (an index affine as collapsedGroups requires evaluates right).
  gridGroups = collapsedGroups(k_, gridExtents_, lanes, target_.collapseGrid);
  for (const auto& [first, last] : gridGroups) {
    if (first == last) continue;
    int64_t n = 1;
    for (size_t d = first; d <= last; ++d) {
      n *= *gridExtents_[d];
      gridExtents_[d] = d == last ? std::optional<int64_t>() : std::optional<int64_t>(1);
    }
    gridExtents_[last] = n;
  }
  sdk::Status st = forLoop(fn_->getArg(1), fn_->getArg(2), 1, [&](llvm::Value* outer) -> sdk::Status {
    if (target_.stopOnFailure) {
      // Another thread failed: stop early (the launch reports the first failure).
      llvm::Value* status = b_.CreateLoad(b_.getInt32Ty(), statusPtr_, "status.now");
      llvm::cast<llvm::LoadInst>(status)->setAtomic(llvm::AtomicOrdering::Monotonic);
      llvm::BasicBlock* go = llvm::BasicBlock::Create(ctx_, "go", fn_);
      b_.CreateCondBr(b_.CreateICmpNE(status, b_.getInt32(kStatusOk)), exit_, go);
      b_.SetInsertPoint(go);
    }
    Region r;
    r.grid.assign(rank, b_.getInt64(0));  // the dims of a group but its last
    r.replicated = mode_ == VectorMode::kLoop && target_.group;
    llvm::Value* rest = outer;
    for (size_t g = gridGroups.size() - (rank > 0 ? 1 : 0); g-- > 0;) {  // outer groups, innermost first
      const auto [first, last] = gridGroups[g];
      if (g == 0) {
        r.grid[last] = rest;
        break;
      }
      llvm::Value* size = gridSizes_[first];
      for (size_t d = first + 1; d <= last; ++d) size = b_.CreateMul(size, gridSizes_[d]);
      r.grid[last] = b_.CreateURem(rest, size);
      rest = b_.CreateUDiv(rest, size);
    }
    return chunked(fn_->getArg(3), fn_->getArg(4), lanes, [&](llvm::Value* base, llvm::Value* mask) {
      Region inner = r;
      inner.lanes = lanes;
      inner.mask = mask;
      if (rank > 0) {
        inner.grid[rank - 1] = base;
        if (lanes > 1) {
          inner.laneKind = PLUGSDK_INDEX_GRID_VAR;
          inner.laneVar = static_cast<int64_t>(rank) - 1;
        }
      }
      return block(0, k_.numStmts(), inner);
    });
  });
  if (!st.isOk()) return st;
  b_.CreateBr(exit_);
  return sdk::Status::ok();
}

sdk::Status KernelLowering::block(size_t begin, size_t end, Region& r) {
  for (size_t i = begin; i < end; ++i) {
    const plugsdk_stmt_t& s = k_.stmt(i);
    sdk::Status st = statement(s, i, r);
    if (!st.isOk()) return st;
    if (s.kind == PLUGSDK_STMT_LOOP) i += s.body_count;
  }
  return sdk::Status::ok();
}

sdk::Status KernelLowering::statement(const plugsdk_stmt_t& s, size_t pos, Region& r) {
  auto set = [&](sdk::StatusOr<Val> v) -> sdk::Status {
    if (!v.isOk()) return v.status();
    values_[static_cast<size_t>(s.result)] = *v;
    return sdk::Status::ok();
  };
  switch (s.kind) {
    case PLUGSDK_STMT_LOAD: return set(load(s, pos, r));
    case PLUGSDK_STMT_CONST: {
      llvm::Type* t = computeType(s.dtype);
      if (!t) return fail(pos, "a constant of dtype " + std::to_string(s.dtype));
      llvm::Value* c = t->isFloatingPointTy() ? roundTo(llvm::ConstantFP::get(t, s.fvalue), s.dtype)
                                              : llvm::ConstantInt::get(t, static_cast<uint64_t>(s.ivalue), true);
      return set(Val{c, false});
    }
    case PLUGSDK_STMT_INDEX: {
      sdk::StatusOr<IndexVal> x = index(s.index, r);
      if (!x.isOk()) return x.status();
      if (x->kind == IndexVal::Kind::kUniform) return set(Val{x->base, false});
      return set(Val{indexLanes(*x, r), true});
    }
    case PLUGSDK_STMT_SCALAR: return set(scalarOp(s, pos, r));
    case PLUGSDK_STMT_WHERE: {
      const Val c = values_[static_cast<size_t>(s.operands[0])];
      const Val a = values_[static_cast<size_t>(s.operands[1])];
      const Val bb = values_[static_cast<size_t>(s.operands[2])];
      if (!c.varying && !a.varying && !bb.varying) return set(Val{b_.CreateSelect(c.v, a.v, bb.v), false});
      return set(Val{b_.CreateSelect(widen(c, r.lanes), widen(a, r.lanes), widen(bb, r.lanes)), true});
    }
    case PLUGSDK_STMT_CAST: return set(cast(s, r));
    case PLUGSDK_STMT_RAND: return set(rand(s, r));
    case PLUGSDK_STMT_STORE: return store(s, pos, r);
    case PLUGSDK_STMT_LOOP: return loop(s, pos, r);
    case PLUGSDK_STMT_REDUCE: return fail(pos, "a reduce outside a loop body");
    case PLUGSDK_STMT_CHECK: {
      const Val c = values_[static_cast<size_t>(s.operands[0])];
      llvm::Value* bad = b_.CreateNot(c.v);
      if (c.varying && r.mask) bad = b_.CreateAnd(bad, r.mask);
      failWith(anyTrue(bad), kStatusCheckBase + static_cast<int32_t>(checkOrdinal_[pos]),
               s.message ? s.message : "a CHECK failed");
      return sdk::Status::ok();
    }
    default: return fail(pos, "statement kind " + std::to_string(s.kind) + " is unknown");
  }
}

sdk::StatusOr<LoweredKernel> lowerKernel(llvm::LLVMContext& ctx, const sdk::KernelView& k, const Target& target,
                                         const std::string& entry) {
  LoweredKernel out;
  out.module = std::make_unique<llvm::Module>(std::string(k.name()), ctx);
  out.entry = entry;
  out.mode = chooseMode(k, target);
  out.lanes = out.mode == VectorMode::kScalar ? 1 : target.f32Lanes;
  KernelLowering l(ctx, *out.module, k, target, out.mode);
  sdk::Status st = l.run(entry);
  if (!st.isOk()) return st;
  out.checkMessages = l.checkMessages;
  out.splitLoop = l.splitLoop;
  if (!l.gridGroups.empty()) out.innerGridDims = l.gridGroups.back().second - l.gridGroups.back().first + 1;
  return out;
}

}  // namespace plugsdk::lowering
