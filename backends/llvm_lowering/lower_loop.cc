// Reduction loops: the loop nest over the loop's dims, accumulators held in registers (one
// vector per reduce), masked tail chunks that leave accumulators untouched, and at the end
// of a loop vectorized along its own innermost variable a combine across lanes (a tree for
// sum and prod, an ordered scan for the others so that ties and NaNs resolve as the
// reference does: the first position wins).
#include <limits>

#include "backends/llvm_lowering/dtypes.h"
#include "backends/llvm_lowering/frame.h"
#include "backends/llvm_lowering/lowering.h"
#include "backends/llvm_lowering/thread_group.h"

namespace plugsdk::lowering {

std::pair<llvm::Value*, llvm::Value*> KernelLowering::combineOrdered(const Acc& a, llvm::Value* r, llvm::Value* bi,
                                                                     llvm::Value* v, llvm::Value* vi) {
  const bool fp = isFloatDtype(a.dtype);
  switch (a.s->op) {
    case PLUGSDK_REDUCE_SUM:
      return {fp                              ? b_.CreateFAdd(r, v)
              : a.dtype == PLUGSDK_DTYPE_BOOL ? b_.CreateOr(r, v)
                                              : b_.CreateAdd(r, v),
              nullptr};
    case PLUGSDK_REDUCE_PROD:
      return {fp                              ? b_.CreateFMul(r, v)
              : a.dtype == PLUGSDK_DTYPE_BOOL ? b_.CreateAnd(r, v)
                                              : b_.CreateMul(r, v),
              nullptr};
    case PLUGSDK_REDUCE_MAX:
    case PLUGSDK_REDUCE_MIN: return {maxMin(r, v, a.dtype, a.s->op == PLUGSDK_REDUCE_MAX), nullptr};
    default: break;
  }
  // argmax / argmin: the better value wins; on a tie, or between NaNs, the earlier position.
  const bool isMax = a.s->op == PLUGSDK_REDUCE_ARGMAX;
  llvm::Value* earlier = b_.CreateICmpSLT(vi, bi);
  llvm::Value* take = nullptr;
  if (fp) {
    llvm::Value* rNan = b_.CreateFCmpUNO(r, r);
    llvm::Value* vNan = b_.CreateFCmpUNO(v, v);
    llvm::Value* better = isMax ? b_.CreateFCmpOGT(v, r) : b_.CreateFCmpOLT(v, r);
    llvm::Value* tie = b_.CreateAnd(b_.CreateFCmpOEQ(v, r), earlier);
    take = b_.CreateSelect(rNan, b_.CreateAnd(vNan, earlier), b_.CreateOr(vNan, b_.CreateOr(better, tie)));
  } else {
    llvm::Value* better = isUnsignedDtype(a.dtype) ? (isMax ? b_.CreateICmpUGT(v, r) : b_.CreateICmpULT(v, r))
                                                   : (isMax ? b_.CreateICmpSGT(v, r) : b_.CreateICmpSLT(v, r));
    take = b_.CreateOr(better, b_.CreateAnd(b_.CreateICmpEQ(v, r), earlier));
  }
  return {b_.CreateSelect(take, v, r), b_.CreateSelect(take, vi, bi)};
}

sdk::Status KernelLowering::loop(const plugsdk_stmt_t& s, size_t pos, Region& outer) {
  const size_t rank = s.num_loop_sizes;
  std::vector<llvm::Value*> sizes;
  llvm::Value* total = b_.getInt64(1);
  for (size_t d = 0; d < rank; ++d) {
    sdk::StatusOr<llvm::Value*> v = uniformIndex(s.loop_sizes[d], outer);
    if (!v.isOk()) return v.status();
    sizes.push_back(*v);
    total = b_.CreateMul(total, *v);
  }
  const bool vecLoop = mode_ == VectorMode::kLoop && rank > 0;
  const uint32_t lanes = vecLoop ? target_.f32Lanes : outer.lanes;
  const ThreadGroup* group = vecLoop ? target_.group : nullptr;  // the lanes spread over its threads
  const bool split = group && splitLoop == pos;                  // and over the programs of a split

  // Accumulators, allocated in the entry block (promoted to registers by LLVM).
  std::vector<Acc> accs;
  llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  bool needsNonEmpty = false;
  for (size_t i = pos + 1; i <= pos + s.body_count; ++i) {
    const plugsdk_stmt_t& t = k_.stmt(i);
    if (t.kind != PLUGSDK_STMT_REDUCE) continue;
    Acc a;
    a.s = &t;
    a.dtype = dtypeOf(t.operands[0]);
    llvm::Type* et = computeType(a.dtype);
    if (!et) return fail(i, "a reduce of dtype " + std::to_string(a.dtype));
    llvm::Type* at = et;
    if (lanes > 1) at = llvm::VectorType::get(et, lanes, false);
    a.value = eb.CreateAlloca(at);
    llvm::Constant* init = nullptr;
    const bool fp = isFloatDtype(a.dtype);
    const unsigned bits = et->getScalarSizeInBits();
    switch (t.op) {
      case PLUGSDK_REDUCE_SUM: init = fp ? llvm::ConstantFP::get(et, 0.0) : llvm::ConstantInt::get(et, 0); break;
      case PLUGSDK_REDUCE_PROD: init = fp ? llvm::ConstantFP::get(et, 1.0) : llvm::ConstantInt::get(et, 1); break;
      case PLUGSDK_REDUCE_MAX:
      case PLUGSDK_REDUCE_ARGMAX:
        init = fp ? llvm::ConstantFP::getInfinity(et, true)
                  : llvm::ConstantInt::get(et, isUnsignedDtype(a.dtype) ? llvm::APInt::getMinValue(bits)
                                                                        : llvm::APInt::getSignedMinValue(bits));
        needsNonEmpty = true;
        break;
      case PLUGSDK_REDUCE_MIN:
      case PLUGSDK_REDUCE_ARGMIN:
        init = fp ? llvm::ConstantFP::getInfinity(et, false)
                  : llvm::ConstantInt::get(et, isUnsignedDtype(a.dtype) ? llvm::APInt::getMaxValue(bits)
                                                                        : llvm::APInt::getSignedMaxValue(bits));
        needsNonEmpty = true;
        break;
      default: return fail(i, "reduce op " + std::to_string(t.op) + " is unknown");
    }
    a.init = init;
    b_.CreateStore(lanes > 1 ? llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(lanes), init) : init,
                   a.value);
    if (t.op == PLUGSDK_REDUCE_ARGMAX || t.op == PLUGSDK_REDUCE_ARGMIN) {
      llvm::Type* it = b_.getInt64Ty();
      if (lanes > 1) it = llvm::VectorType::get(it, lanes, false);
      a.best = eb.CreateAlloca(it);
      b_.CreateStore(llvm::Constant::getNullValue(it), a.best);
    }
    accs.push_back(a);
  }
  if (needsNonEmpty)
    failWith(b_.CreateICmpEQ(total, b_.getInt64(0)), kStatusEmptyReduce, "a max/min/argmax/argmin over an empty loop");

  Region inner = outer;
  inner.loop.assign(rank, nullptr);
  inner.loopExtents.clear();
  for (size_t d = 0; d < rank; ++d) {
    sdk::StatusOr<int64_t> c = sdk::evalIndex(k_.indexPool(), s.loop_sizes[d], sdk::IndexEnv{});
    inner.loopExtents.push_back(c.isOk() ? std::optional<int64_t>(*c) : std::nullopt);
  }
  if (vecLoop) {
    inner.replicated = false;
    inner.lanes = lanes;
    inner.laneKind = PLUGSDK_INDEX_LOOP_VAR;
    inner.laneVar = static_cast<int64_t>(rank) - 1;
  }

  // The body at one point (or chunk) of the loop: its statements, then the accumulations.
  // Each call outside a dynamic loop is an unrolled iteration ("slot"), the same chunk in
  // the same thread as the same slot of an earlier loop over the same extents: values the
  // later loops repeat (loop_reuse.h) are kept per slot and read back there.
  const int depth0 = dynamicDepth_;
  int64_t nextSlot = 0;
  auto body = [&](llvm::Value* linear, llvm::Value* mask) -> sdk::Status {
    inner.mask = vecLoop ? mask : outer.mask;
    const int64_t slot = dynamicDepth_ == depth0 ? nextSlot++ : -1;
    for (size_t i = pos + 1; i <= pos + s.body_count; ++i) {
      const plugsdk_stmt_t& t = k_.stmt(i);
      if (t.kind == PLUGSDK_STMT_LOOP) return fail(i, "a loop nested in a loop");
      if (t.kind == PLUGSDK_STMT_REDUCE) continue;
      if (slot >= 0 && reuse_.from[i] >= 0) {
        auto kept = keptValues_.find({static_cast<size_t>(reuse_.from[i]), slot});
        if (kept != keptValues_.end()) {
          llvm::AllocaInst* cell = kept->second.first;
          values_[static_cast<size_t>(t.result)] =
              Val{b_.CreateLoad(cell->getAllocatedType(), cell), kept->second.second};
          continue;
        }
      }
      sdk::Status st = statement(t, i, inner);
      if (!st.isOk()) return st;
      if (slot >= 0 && reuse_.kept[i]) {
        const Val v = values_[static_cast<size_t>(t.result)];
        llvm::AllocaInst* cell = eb.CreateAlloca(v.v->getType());
        b_.CreateStore(v.v, cell);
        keptValues_[{i, slot}] = {cell, v.varying};
      }
    }
    for (Acc& a : accs) {
      const Val x0 = values_[static_cast<size_t>(a.s->operands[0])];
      llvm::Value* x = widen(x0, lanes);
      llvm::Value* acc = b_.CreateLoad(a.value->getAllocatedType(), a.value);
      const bool fp = isFloatDtype(a.dtype);
      llvm::Value* next = nullptr;
      llvm::Value* take = nullptr;
      switch (a.s->op) {
        case PLUGSDK_REDUCE_SUM:
          next = fp                              ? b_.CreateFAdd(acc, x)
                 : a.dtype == PLUGSDK_DTYPE_BOOL ? b_.CreateOr(acc, x)
                                                 : b_.CreateAdd(acc, x);
          break;
        case PLUGSDK_REDUCE_PROD:
          next = fp                              ? b_.CreateFMul(acc, x)
                 : a.dtype == PLUGSDK_DTYPE_BOOL ? b_.CreateAnd(acc, x)
                                                 : b_.CreateMul(acc, x);
          break;
        case PLUGSDK_REDUCE_MAX: next = maxMin(acc, x, a.dtype, true); break;
        case PLUGSDK_REDUCE_MIN: next = maxMin(acc, x, a.dtype, false); break;
        default: {
          const bool isMax = a.s->op == PLUGSDK_REDUCE_ARGMAX;
          if (fp) {
            llvm::Value* better = isMax ? b_.CreateFCmpOGT(x, acc) : b_.CreateFCmpOLT(x, acc);
            take = b_.CreateAnd(b_.CreateFCmpORD(acc, acc), b_.CreateOr(b_.CreateFCmpUNO(x, x), better));
          } else if (isUnsignedDtype(a.dtype)) {
            take = isMax ? b_.CreateICmpUGT(x, acc) : b_.CreateICmpULT(x, acc);
          } else {
            take = isMax ? b_.CreateICmpSGT(x, acc) : b_.CreateICmpSLT(x, acc);
          }
          if (mask && vecLoop) take = b_.CreateAnd(take, mask);
          next = b_.CreateSelect(take, x, acc);
          llvm::Value* posv = linear;
          if (lanes > 1) {
            posv = b_.CreateVectorSplat(lanes, linear);
            if (vecLoop) posv = b_.CreateAdd(posv, laneIota(lanes));
          }
          llvm::Value* best = b_.CreateLoad(a.best->getAllocatedType(), a.best);
          b_.CreateStore(b_.CreateSelect(take, posv, best), a.best);
        }
      }
      if (mask && vecLoop && !take) next = b_.CreateSelect(mask, next, acc);
      b_.CreateStore(next, a.value);
    }
    return sdk::Status::ok();
  };

  // This split's part [lo, hi) of `chunks` chunks (all of them when the loop is not split).
  auto splitRange = [&](llvm::Value* chunks) -> std::pair<llvm::Value*, llvm::Value*> {
    if (!split) return {b_.getInt64(0), chunks};
    llvm::Value* count = group->splitCount(b_);
    llvm::Value* per = b_.CreateUDiv(b_.CreateAdd(chunks, b_.CreateSub(count, b_.getInt64(1))), count);
    llvm::Value* first = b_.CreateMul(group->splitIndex(b_), per);
    auto umin = [&](llvm::Value* x, llvm::Value* y) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, x, y); };
    return {umin(first, chunks), umin(b_.CreateAdd(first, per), chunks)};
  };

  // A loop of several dims spread over a thread group: the chunks of every row (a point of
  // dims 0 .. rank-2) in one flat range, so that a batch norm's loop over (N, H, W) keeps
  // every thread busy (spreading the last dim alone left 14 chunks of W = 56 for 256
  // threads, and the N x H rows one after another). Chunk c is row c / perRow, lanes
  // (c % perRow) * lanes of the last dim; a row's last chunk is masked when it is partial.
  auto flatNest = [&]() -> sdk::Status {
    const size_t last = rank - 1;
    llvm::Value* rows = b_.getInt64(1);
    for (size_t d = 0; d < last; ++d) rows = b_.CreateMul(rows, sizes[d]);
    llvm::Value* width = b_.getInt64(lanes);
    llvm::Value* perRow = b_.CreateUDiv(b_.CreateAdd(sizes[last], b_.getInt64(lanes - 1)), width);
    auto [lo, hi] = splitRange(b_.CreateMul(rows, perRow));
    const bool exact = lanes == 1 || (inner.loopExtents[last] && *inner.loopExtents[last] % lanes == 0);
    return spread(lo, b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, lo, hi), 1, [&](llvm::Value* c, llvm::Value*) {
      llvm::Value* row = b_.CreateUDiv(c, perRow);
      llvm::Value* i = b_.CreateMul(b_.CreateURem(c, perRow), width);
      llvm::Value* rest = row;
      for (size_t d = last; d-- > 0;) {
        inner.loop[d] = d == 0 ? rest : b_.CreateURem(rest, sizes[d]);
        if (d > 0) rest = b_.CreateUDiv(rest, sizes[d]);
      }
      inner.loop[last] = i;
      llvm::Value* linear = b_.CreateAdd(b_.CreateMul(row, sizes[last]), i);
      if (exact) return body(linear, nullptr);
      llvm::Value* full = b_.CreateICmpULE(b_.CreateAdd(i, width), sizes[last]);
      sdk::Status st = ifThen(full, "row.full", [&] { return body(linear, nullptr); });
      if (!st.isOk()) return st;
      return ifThen(b_.CreateNot(full), "row.tail", [&] { return body(linear, tailMask(i, sizes[last], lanes)); });
    });
  };

  // The nest: dims 0 .. rank-2 one at a time, the last one chunked when vectorized.
  std::function<sdk::Status(size_t, llvm::Value*)> nest = [&](size_t d, llvm::Value* prefix) -> sdk::Status {
    if (d == rank) return body(prefix, nullptr);  // rank 0: one iteration
    llvm::Value* base = b_.CreateMul(prefix, sizes[d]);
    if (d + 1 < rank)
      return forLoop(b_.getInt64(0), sizes[d], 1, [&](llvm::Value* i) {
        inner.loop[d] = i;
        return nest(d + 1, b_.CreateAdd(base, i));
      });
    auto chunk = [&](llvm::Value* i, llvm::Value* mask) {
      inner.loop[d] = i;
      return body(b_.CreateAdd(base, i), mask);
    };
    if (group && split) {
      // This split's range of chunks: [index * per, (index + 1) * per) of ceil(size / lanes).
      llvm::Value* width = b_.getInt64(lanes);
      auto [first, end] = splitRange(b_.CreateUDiv(b_.CreateAdd(sizes[d], b_.getInt64(lanes - 1)), width));
      llvm::Value* lo = b_.CreateMul(first, width);
      llvm::Value* hi = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b_.CreateMul(end, width), sizes[d]);
      return spread(lo, b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, lo, hi), lanes, chunk);
    }
    if (group) return spread(b_.getInt64(0), sizes[d], lanes, chunk);
    return chunked(b_.getInt64(0), sizes[d], vecLoop ? lanes : 1, chunk);
  };
  sdk::Status st = group && rank > 1 ? flatNest() : nest(0, b_.getInt64(0));
  if (!st.isOk()) return st;

  // Results: vectors of grid lanes as they are; vectors of loop lanes combined into one,
  // then across the thread group when the lanes were spread over it.
  std::vector<llvm::Value*> fields;  // per acc: its value, and its position for an arg reduce
  for (Acc& a : accs) {
    llvm::Value* acc = b_.CreateLoad(a.value->getAllocatedType(), a.value);
    const bool arg = a.s->op == PLUGSDK_REDUCE_ARGMAX || a.s->op == PLUGSDK_REDUCE_ARGMIN;
    llvm::Value* best = arg ? b_.CreateLoad(a.best->getAllocatedType(), a.best) : nullptr;
    if (!vecLoop) {
      values_[static_cast<size_t>(a.s->result)] = Val{arg ? best : roundTo(acc, a.s->dtype), lanes > 1};
      continue;
    }
    llvm::Value* r = nullptr;
    llvm::Value* bi = nullptr;
    if (!arg && a.s->op != PLUGSDK_REDUCE_MAX && a.s->op != PLUGSDK_REDUCE_MIN) {
      const bool sum = a.s->op == PLUGSDK_REDUCE_SUM;
      if (isFloatDtype(a.dtype)) {
        llvm::Type* et = acc->getType()->getScalarType();
        r = sum ? b_.CreateFAddReduce(llvm::ConstantFP::get(et, 0.0), acc)
                : b_.CreateFMulReduce(llvm::ConstantFP::get(et, 1.0), acc);
        llvm::cast<llvm::Instruction>(r)->setHasAllowReassoc(true);  // a tree, not a chain
      } else if (a.dtype == PLUGSDK_DTYPE_BOOL) {
        r = sum ? b_.CreateOrReduce(acc) : b_.CreateAndReduce(acc);
      } else {
        r = sum ? b_.CreateAddReduce(acc) : b_.CreateMulReduce(acc);
      }
    } else {
      // Lane by lane in position order of each lane's first element (lane i saw position i
      // first), keeping the earlier position on ties.
      r = b_.CreateExtractElement(acc, uint64_t{0});
      bi = arg ? b_.CreateExtractElement(best, uint64_t{0}) : nullptr;
      for (uint32_t lane = 1; lane < lanes; ++lane) {
        std::pair<llvm::Value*, llvm::Value*> x = combineOrdered(a, r, bi, b_.CreateExtractElement(acc, lane),
                                                                 arg ? b_.CreateExtractElement(best, lane) : nullptr);
        r = x.first;
        bi = x.second;
      }
    }
    fields.push_back(r);
    if (arg) fields.push_back(bi);
  }
  if (!vecLoop) return sdk::Status::ok();
  const ThreadGroup::Combine combine = [&](const std::vector<llvm::Value*>& x, const std::vector<llvm::Value*>& y) {
    std::vector<llvm::Value*> out;
    size_t f = 0;
    for (Acc& a : accs) {
      const bool arg = a.best != nullptr;
      std::pair<llvm::Value*, llvm::Value*> c =
          combineOrdered(a, x[f], arg ? x[f + 1] : nullptr, y[f], arg ? y[f + 1] : nullptr);
      out.push_back(c.first);
      if (arg) out.push_back(c.second);
      f += arg ? 2 : 1;
    }
    return out;
  };
  if (group && !fields.empty()) fields = group->allReduce(b_, fields, combine);
  if (split && !fields.empty()) {
    std::vector<llvm::Value*> identity;
    for (Acc& a : accs) {
      identity.push_back(a.init);
      if (a.best) identity.push_back(b_.getInt64(0));
    }
    fields = group->combineSplits(b_, fields, identity, combine, exit_);
  }
  size_t f = 0;
  for (Acc& a : accs) {
    const bool arg = a.best != nullptr;
    values_[static_cast<size_t>(a.s->result)] = Val{arg ? fields[f + 1] : roundTo(fields[f], a.s->dtype), false};
    f += arg ? 2 : 1;
  }
  return sdk::Status::ok();
}

}  // namespace plugsdk::lowering
