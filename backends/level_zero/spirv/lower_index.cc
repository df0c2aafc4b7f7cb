// Index programs (postfix, int64, Python floor semantics) as i64 SPIR-V values; what is known
// at compile time (constants, constant extents) is folded, so a static index costs nothing.
#include "backends/level_zero/spirv/lowering.h"
#include "backends/llvm_lowering/dtypes.h"

namespace plugsdk::level_zero::spirv {

uint32_t KernelLowering::materialize(const Idx& x) { return x.c ? constI64(*x.c) : x.id; }

Idx KernelLowering::product(const Idx& a, const Idx& b) {
  if (a.c && b.c) return Idx{0, *a.c * *b.c};
  if (a.c == std::optional<int64_t>(1)) return b;
  if (b.c == std::optional<int64_t>(1)) return a;
  return Idx{m_.op(spv::Op::IMul, i64(), {materialize(a), materialize(b)}), std::nullopt};
}

uint32_t KernelLowering::floorDivMod(uint32_t a, uint32_t b, std::optional<int64_t> bConst, bool mod) {
  const uint32_t t = i64(), bt = boolT();
  const uint32_t zero = constI64(0), one = constI64(1);
  auto op = [&](spv::Op code, uint32_t type, std::initializer_list<uint32_t> xs) { return m_.op(code, type, xs); };
  if (bConst && *bConst > 0) {
    // A positive divisor: truncation rounds toward -inf exactly when the remainder is negative.
    const uint32_t q = op(spv::Op::SDiv, t, {a, b});
    const uint32_t r = op(spv::Op::SRem, t, {a, b});
    const uint32_t negative = op(spv::Op::SLessThan, bt, {r, zero});
    if (mod) return op(spv::Op::Select, t, {negative, op(spv::Op::IAdd, t, {r, b}), r});
    return op(spv::Op::Select, t, {negative, op(spv::Op::ISub, t, {q, one}), q});
  }
  // A divisor of 0 cannot occur in a valid kernel: 1 instead, so that nothing traps; and
  // INT64_MIN / -1 overflows: a // -1 = -a, a % -1 = 0 without dividing.
  const uint32_t d = op(spv::Op::Select, t, {op(spv::Op::IEqual, bt, {b, zero}), one, b});
  const uint32_t isM1 = op(spv::Op::IEqual, bt, {d, constI64(-1)});
  const uint32_t safe = op(spv::Op::Select, t, {isM1, one, d});
  const uint32_t q = op(spv::Op::SDiv, t, {a, safe});
  const uint32_t r = op(spv::Op::SRem, t, {a, safe});
  const uint32_t adjust = op(spv::Op::LogicalAnd, bt,
                             {op(spv::Op::INotEqual, bt, {r, zero}),
                              op(spv::Op::SLessThan, bt, {op(spv::Op::BitwiseXor, t, {r, safe}), zero})});
  if (mod) {
    const uint32_t m = op(spv::Op::Select, t, {adjust, op(spv::Op::IAdd, t, {r, safe}), r});
    return op(spv::Op::Select, t, {isM1, zero, m});
  }
  const uint32_t fq = op(spv::Op::Select, t, {adjust, op(spv::Op::ISub, t, {q, one}), q});
  return op(spv::Op::Select, t, {isM1, op(spv::Op::SNegate, t, {a}), fq});
}

sdk::StatusOr<Idx> KernelLowering::index(plugsdk_index_expr_t e) {
  std::vector<Idx> st;
  const sdk::Span<const plugsdk_index_insn_t> pool = k_.indexPool();
  const std::string where = "kernel @" + std::string(k_.name()) + ": index program at " + std::to_string(e.first);
  for (uint32_t i = 0; i < e.count; ++i) {
    const plugsdk_index_insn_t& in = pool[e.first + i];
    const auto n = static_cast<size_t>(in.operand);
    switch (in.op) {
      case PLUGSDK_INDEX_CONST: st.push_back(Idx{0, in.operand}); continue;
      case PLUGSDK_INDEX_SYMBOL:
        if (n >= symbols_.size()) return sdk::internalError(where + ": symbol " + std::to_string(n) + " is unbound");
        st.push_back(Idx{symbols_[n], std::nullopt});
        continue;
      case PLUGSDK_INDEX_GRID_VAR:
      case PLUGSDK_INDEX_LOOP_VAR: {
        const std::vector<uint32_t>& vars = in.op == PLUGSDK_INDEX_GRID_VAR ? grid_ : loopVars_;
        if (n >= vars.size() || !vars[n])
          return sdk::internalError(where + ": variable " + std::to_string(n) + " is not bound");
        st.push_back(Idx{vars[n], std::nullopt});
        continue;
      }
      case PLUGSDK_INDEX_VALUE: {
        if (n >= values_.size() || !values_[n])
          return sdk::internalError(where + ": value %" + std::to_string(n) + " is not defined");
        const uint32_t dt = valueTypes_[n];
        const uint32_t v = values_[n];
        uint32_t x = v;
        if (dt == PLUGSDK_DTYPE_BOOL)
          x = boolToInt(v, i64());
        else if (lowering::isFloatDtype(dt))
          return sdk::unimplemented(where + ": a floating value %" + std::to_string(n) + " in an index");
        else if (dt != PLUGSDK_DTYPE_I64)
          x = m_.op(lowering::isUnsignedDtype(dt) ? spv::Op::UConvert : spv::Op::SConvert, i64(), {v});
        st.push_back(Idx{x, std::nullopt});
        continue;
      }
      default: break;
    }
    if (st.size() < 2) return sdk::internalError(where + ": the stack underflows");
    const Idx b = st.back();
    st.pop_back();
    const Idx a = st.back();
    st.pop_back();
    const uint32_t op = in.op;
    // Constants fold (Python semantics, as sdk::evalIndex; overflow is left to run time).
    if (a.c && b.c) {
      sdk::StatusOr<int64_t> folded = [&]() -> sdk::StatusOr<int64_t> {
        const plugsdk_index_insn_t prog[3] = {{PLUGSDK_INDEX_CONST, 0, *a.c}, {PLUGSDK_INDEX_CONST, 0, *b.c}, in};
        return sdk::evalIndex(sdk::Span<const plugsdk_index_insn_t>(prog, 3), plugsdk_index_expr_t{0, 3},
                              sdk::IndexEnv{});
      }();
      if (folded.isOk()) {
        st.push_back(Idx{0, *folded});
        continue;
      }
    }
    // Identities that keep static parts static.
    if (op == PLUGSDK_INDEX_ADD && a.c == std::optional<int64_t>(0)) {
      st.push_back(b);
      continue;
    }
    if ((op == PLUGSDK_INDEX_ADD || op == PLUGSDK_INDEX_SUB) && b.c == std::optional<int64_t>(0)) {
      st.push_back(a);
      continue;
    }
    if (op == PLUGSDK_INDEX_MUL && (a.c == std::optional<int64_t>(0) || b.c == std::optional<int64_t>(0))) {
      st.push_back(Idx{0, 0});
      continue;
    }
    if (op == PLUGSDK_INDEX_MUL && (a.c == std::optional<int64_t>(1) || b.c == std::optional<int64_t>(1))) {
      st.push_back(a.c == std::optional<int64_t>(1) ? b : a);
      continue;
    }
    if (op == PLUGSDK_INDEX_FLOORDIV && b.c == std::optional<int64_t>(1)) {
      st.push_back(a);
      continue;
    }
    if (op == PLUGSDK_INDEX_MOD && b.c == std::optional<int64_t>(1)) {
      st.push_back(Idx{0, 0});
      continue;
    }
    const uint32_t x = materialize(a), y = materialize(b);
    uint32_t r = 0;
    switch (op) {
      case PLUGSDK_INDEX_ADD: r = m_.op(spv::Op::IAdd, i64(), {x, y}); break;
      case PLUGSDK_INDEX_SUB: r = m_.op(spv::Op::ISub, i64(), {x, y}); break;
      case PLUGSDK_INDEX_MUL: r = m_.op(spv::Op::IMul, i64(), {x, y}); break;
      case PLUGSDK_INDEX_FLOORDIV:
      case PLUGSDK_INDEX_MOD: r = floorDivMod(x, y, b.c, op == PLUGSDK_INDEX_MOD); break;
      default: return sdk::internalError(where + ": unknown op " + std::to_string(op));
    }
    st.push_back(Idx{r, std::nullopt});
  }
  if (st.size() != 1) return sdk::internalError(where + ": a malformed index program");
  return st[0];
}

}  // namespace plugsdk::level_zero::spirv
