// Reduction loops: a structured loop per dim of the loop's domain (r0 outermost), one
// Function variable per accumulator (the consumer promotes them to registers), argmax /
// argmin keeping the first position on ties and the first NaN, and max / min / argmax /
// argmin over an empty domain reported as frame.h's kStatusEmptyReduce. In group mode
// (mapping.h) one loop over the flattened domain spread over the work-group, and the
// accumulators combined across it (lower_group.cc).
#include <limits>

#include "backends/level_zero/spirv/lowering.h"
#include "backends/llvm_lowering/dtypes.h"
#include "backends/llvm_lowering/frame.h"

namespace plugsdk::level_zero::spirv {

using lowering::isFloatDtype;
using lowering::isUnsignedDtype;

namespace {

struct Acc {
  const plugsdk_stmt_t* s = nullptr;
  uint32_t dtype = 0;  ///< the operand's
  uint32_t value = 0;  ///< Function variable
  uint32_t best = 0;   ///< argmax / argmin: the position (i64 variable)
};

}  // namespace

sdk::Status KernelLowering::loop(const plugsdk_stmt_t& s, size_t pos) {
  const size_t rank = s.num_loop_sizes;
  std::vector<uint32_t> sizes;
  Idx total{0, 1};
  for (size_t d = 0; d < rank; ++d) {
    sdk::StatusOr<Idx> e = index(s.loop_sizes[d]);
    if (!e.isOk()) return e.status();
    sizes.push_back(materialize(*e));
    total = product(total, *e);
  }

  std::vector<Acc> accs;
  std::vector<size_t> accOf(s.body_count + 1, 0);  // body offset -> accs index
  bool needsNonEmpty = false;
  for (size_t i = pos + 1; i <= pos + s.body_count; ++i) {
    const plugsdk_stmt_t& t = k_.stmt(i);
    if (t.kind == PLUGSDK_STMT_LOOP) return fail(i, "a loop nested in a loop");
    if (t.kind != PLUGSDK_STMT_REDUCE) continue;
    Acc a;
    a.s = &t;
    a.dtype = dtypeOf(t.operands[0]);
    const uint32_t et = computeType(a.dtype);
    if (!et) return fail(i, "a reduce of dtype " + std::to_string(a.dtype));
    const bool fp = isFloatDtype(a.dtype), isBool = a.dtype == PLUGSDK_DTYPE_BOOL;
    const uint32_t bits = m_.typeInfo(et).width;
    const uint64_t ones = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    const uint64_t signedMin = uint64_t{1} << (bits - 1);
    uint32_t init = 0;
    switch (t.op) {
      case PLUGSDK_REDUCE_SUM:
        init = isBool ? m_.constBool(false) : fp ? m_.constFloat(et, 0.0) : m_.constInt(et, 0);
        break;
      case PLUGSDK_REDUCE_PROD:
        init = isBool ? m_.constBool(true) : fp ? m_.constFloat(et, 1.0) : m_.constInt(et, 1);
        break;
      case PLUGSDK_REDUCE_MAX:
      case PLUGSDK_REDUCE_ARGMAX:
        init = isBool ? m_.constBool(false)
               : fp   ? m_.constFloat(et, -std::numeric_limits<double>::infinity())
                      : m_.constInt(et, isUnsignedDtype(a.dtype) ? 0 : signedMin);
        needsNonEmpty = true;
        break;
      case PLUGSDK_REDUCE_MIN:
      case PLUGSDK_REDUCE_ARGMIN:
        init = isBool ? m_.constBool(true)
               : fp   ? m_.constFloat(et, std::numeric_limits<double>::infinity())
                      : m_.constInt(et, isUnsignedDtype(a.dtype) ? ones : signedMin - 1);
        needsNonEmpty = true;
        break;
      default: return fail(i, "reduce op " + std::to_string(t.op) + " is unknown");
    }
    a.value = m_.localVariable(et);
    m_.emit(spv::Op::Store, {a.value, init});
    if (t.op == PLUGSDK_REDUCE_ARGMAX || t.op == PLUGSDK_REDUCE_ARGMIN) {
      a.best = m_.localVariable(i64());
      m_.emit(spv::Op::Store, {a.best, constI64(0)});
    }
    accOf[i - pos] = accs.size();
    accs.push_back(a);
  }
  if (needsNonEmpty)
    failWith(m_.op(spv::Op::IEqual, boolT(), {materialize(total), constI64(0)}), lowering::kStatusEmptyReduce);

  // The body at one point of the domain: statements in order, each reduce accumulating.
  const uint32_t bt = boolT();
  auto body = [&](uint32_t linear) -> sdk::Status {
    for (size_t i = pos + 1; i <= pos + s.body_count; ++i) {
      const plugsdk_stmt_t& t = k_.stmt(i);
      if (t.kind != PLUGSDK_STMT_REDUCE) {
        sdk::Status st = statement(t, i);
        if (!st.isOk()) return st;
        continue;
      }
      const Acc& a = accs[accOf[i - pos]];
      const uint32_t x = value(t.operands[0]);
      const uint32_t et = m_.typeOf(x);
      const uint32_t acc = m_.op(spv::Op::Load, et, {a.value});
      if (!a.best) {
        const bool isMax = t.op == PLUGSDK_REDUCE_MAX;
        m_.emit(spv::Op::Store,
                {a.value, combine(t.op == PLUGSDK_REDUCE_SUM, t.op == PLUGSDK_REDUCE_PROD, isMax, acc, x, a.dtype)});
        continue;
      }
      // argmax / argmin: a better value wins, the earlier position stays on ties; the first
      // NaN wins and stays.
      const bool isMax = t.op == PLUGSDK_REDUCE_ARGMAX;
      uint32_t take = 0;
      if (isFloatDtype(a.dtype)) {
        const uint32_t better = m_.op(isMax ? spv::Op::FOrdGreaterThan : spv::Op::FOrdLessThan, bt, {x, acc});
        const uint32_t accOk = m_.op(spv::Op::LogicalNot, bt, {m_.op(spv::Op::IsNan, bt, {acc})});
        take = m_.op(spv::Op::LogicalAnd, bt,
                     {accOk, m_.op(spv::Op::LogicalOr, bt, {m_.op(spv::Op::IsNan, bt, {x}), better})});
      } else {
        take = compare(isMax ? PLUGSDK_OP_GT : PLUGSDK_OP_LT, x, acc, a.dtype);
      }
      m_.emit(spv::Op::Store, {a.value, m_.op(spv::Op::Select, et, {take, x, acc})});
      const uint32_t best = m_.op(spv::Op::Load, i64(), {a.best});
      m_.emit(spv::Op::Store, {a.best, m_.op(spv::Op::Select, i64(), {take, linear, best})});
    }
    return sdk::Status::ok();
  };

  // The nest: r0 outermost; `linear` is the row-major position in the domain.
  const std::vector<uint32_t> outerVars = loopVars_;
  loopVars_.assign(rank, 0);
  std::function<sdk::Status(size_t, uint32_t)> nest = [&](size_t d, uint32_t prefix) -> sdk::Status {
    if (d == rank) return body(prefix);  // rank 0: one iteration
    return forLoop(sizes[d], [&](uint32_t r) {
      loopVars_[d] = r;
      const uint32_t linear =
          d == 0 ? r : m_.op(spv::Op::IAdd, i64(), {m_.op(spv::Op::IMul, i64(), {prefix, sizes[d]}), r});
      return nest(d + 1, linear);
    });
  };
  // Group mode: position p of the flattened domain on work-item p % groupSize_.
  auto spread = [&]() -> sdk::Status {
    // After a failure outside the loops (every work-item alike) the loop runs no iteration.
    closeSkips();
    uint32_t n = materialize(total);
    if (groupMayFail_)
      n = m_.op(spv::Op::Select, i64(), {m_.op(spv::Op::Load, boolT(), {groupFailed_}), constI64(0), n});
    return spreadLoop(n, [&](uint32_t linear) {
      uint32_t rest = linear;
      for (size_t d = rank; d-- > 0;) {
        if (d == 0) {
          loopVars_[0] = rest;
          break;
        }
        loopVars_[d] = m_.op(spv::Op::UMod, i64(), {rest, sizes[d]});
        rest = m_.op(spv::Op::UDiv, i64(), {rest, sizes[d]});
      }
      return body(linear);
    });
  };
  sdk::Status st = groupSize_ ? spread() : nest(0, constI64(0));
  loopVars_ = outerVars;
  if (!st.isOk()) return st;
  if (groupSize_ && !accs.empty()) {
    // The work-items' accumulators combined: fields (value[, position]) per accumulator.
    std::vector<uint32_t> fields, types;
    for (const Acc& a : accs) {
      const uint32_t et = computeType(a.dtype);
      fields.push_back(m_.op(spv::Op::Load, et, {a.value}));
      types.push_back(et);
      if (a.best) {
        fields.push_back(m_.op(spv::Op::Load, i64(), {a.best}));
        types.push_back(i64());
      }
    }
    const Combine combineAll = [&](const std::vector<uint32_t>& x, const std::vector<uint32_t>& y) {
      std::vector<uint32_t> out;
      size_t f = 0;
      for (const Acc& a : accs) {
        const uint32_t op = a.s->op;
        if (a.best) {
          const auto [v, i] = combineOrdered(op == PLUGSDK_REDUCE_ARGMAX, x[f], x[f + 1], y[f], y[f + 1], a.dtype);
          out.push_back(v);
          out.push_back(i);
          f += 2;
          continue;
        }
        out.push_back(combine(op == PLUGSDK_REDUCE_SUM, op == PLUGSDK_REDUCE_PROD, op == PLUGSDK_REDUCE_MAX, x[f], y[f],
                              a.dtype));
        ++f;
      }
      return out;
    };
    // Sums of 32- and 64-bit registers may go through sub-groups first (their order is the
    // device's within a sub-group; max, min and argmax keep the tree's NaN and tie rules).
    std::vector<bool> sumIsFloat;
    for (const Acc& a : accs) {
      const uint32_t t = a.dtype;
      const bool isFloat =
          t == PLUGSDK_DTYPE_F16 || t == PLUGSDK_DTYPE_BF16 || t == PLUGSDK_DTYPE_F32 || t == PLUGSDK_DTYPE_F64;
      if (a.best || a.s->op != PLUGSDK_REDUCE_SUM || !(isFloat || t == PLUGSDK_DTYPE_I32 || t == PLUGSDK_DTYPE_I64)) {
        sumIsFloat.clear();
        break;
      }
      sumIsFloat.push_back(isFloat);
    }
    const std::vector<uint32_t> all = groupAllReduce(fields, types, combineAll, sumIsFloat);
    size_t f = 0;
    for (const Acc& a : accs) {
      m_.emit(spv::Op::Store, {a.value, all[f++]});
      if (a.best) m_.emit(spv::Op::Store, {a.best, all[f++]});
    }
  }

  for (const Acc& a : accs) {
    uint32_t r = 0;
    if (a.best) {
      r = m_.op(spv::Op::Load, i64(), {a.best});
    } else {
      r = roundTo(m_.op(spv::Op::Load, computeType(a.dtype), {a.value}), a.s->dtype);
    }
    values_[static_cast<size_t>(a.s->result)] = r;
    if (groupSize_) defined_.push_back(a.s->result);
  }
  if (groupSize_) skipIfGroupFailed();
  return sdk::Status::ok();
}

}  // namespace plugsdk::level_zero::spirv
