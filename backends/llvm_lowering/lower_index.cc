// Index programs (postfix, int64, Python floor semantics) lowered over the lanes of a
// region: a value that does not depend on the per-lane variable stays one scalar; one that
// is affine in it with a constant stride stays (base, stride), so a load or store can be a
// contiguous vector access (stride 1) or a broadcast (stride 0); anything else becomes one
// i64 per lane (a gather or scatter).
#include <algorithm>
#include <limits>

#include "backends/llvm_lowering/dtypes.h"
#include "backends/llvm_lowering/lowering.h"

namespace plugsdk::lowering {

namespace {

/// a // b and a % b with Python's floor semantics on i64 scalars or vectors. b == 0 cannot
/// happen in a valid kernel; it is replaced by 1 so that it never traps.
llvm::Value* floorDivMod(llvm::IRBuilder<>& b, llvm::Value* a, llvm::Value* d, bool mod) {
  llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
  llvm::Value* one = llvm::ConstantInt::get(a->getType(), 1);
  llvm::Value* minusOne = llvm::ConstantInt::getSigned(a->getType(), -1);
  d = b.CreateSelect(b.CreateICmpEQ(d, zero), one, d);
  // INT64_MIN / -1 traps in hardware: -1 divides everything, so use a // -1 = -a, a % -1 = 0.
  llvm::Value* isM1 = b.CreateICmpEQ(d, minusOne);
  llvm::Value* safeD = b.CreateSelect(isM1, one, d);
  llvm::Value* q = b.CreateSDiv(a, safeD);
  llvm::Value* r = b.CreateSRem(a, safeD);
  // Round toward -inf: when the remainder is nonzero and its sign differs from the divisor's.
  llvm::Value* adjust = b.CreateAnd(b.CreateICmpNE(r, zero), b.CreateICmpSLT(b.CreateXor(r, safeD), zero));
  if (mod) {
    llvm::Value* m = b.CreateSelect(adjust, b.CreateAdd(r, safeD), r);
    return b.CreateSelect(isM1, zero, m);
  }
  llvm::Value* fq = b.CreateSelect(adjust, b.CreateSub(q, one), q);
  return b.CreateSelect(isM1, b.CreateNeg(a), fq);
}

}  // namespace

llvm::Value* KernelLowering::indexLanes(const IndexVal& x, const Region& r) {
  switch (x.kind) {
    case IndexVal::Kind::kLanes: return x.lanes;
    case IndexVal::Kind::kUniform: return r.lanes == 1 ? x.base : b_.CreateVectorSplat(r.lanes, x.base);
    case IndexVal::Kind::kAffine: {
      if (r.lanes == 1) return x.base;
      std::vector<llvm::Constant*> c;
      for (uint32_t i = 0; i < r.lanes; ++i) c.push_back(b_.getInt64(static_cast<uint64_t>(x.stride * i)));
      return b_.CreateAdd(b_.CreateVectorSplat(r.lanes, x.base), llvm::ConstantVector::get(c));
    }
  }
  return nullptr;
}

namespace {

/// The values an index may take, when known at compile time (grid and loop extents that
/// are constants). Reshapes of views leave chains like (r0 // 9 + i3) % 56 that are i3
/// when r0 < 9 and i3 < 56: folding them keeps accesses affine (vector loads, not gathers)
/// and removes i64 divisions, which are scalar even in vector code.
struct Range {
  bool known = false;
  int64_t lo = 0, hi = 0;
  static Range exactly(int64_t v) { return {true, v, v}; }
  bool isConst() const { return known && lo == hi; }
};

Range fromWide(__int128 lo, __int128 hi) {
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  if (lo < kMin || hi > kMax) return {};
  return {true, static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

Range combine(uint32_t op, const Range& a, const Range& b) {
  if (!a.known || !b.known) {
    // a % c lies in [0, c) for a constant c > 0 whatever a is.
    if (op == PLUGSDK_INDEX_MOD && b.isConst() && b.lo > 0) return {true, 0, b.lo - 1};
    return {};
  }
  switch (op) {
    case PLUGSDK_INDEX_ADD: return fromWide(__int128{a.lo} + b.lo, __int128{a.hi} + b.hi);
    case PLUGSDK_INDEX_SUB: return fromWide(__int128{a.lo} - b.hi, __int128{a.hi} - b.lo);
    case PLUGSDK_INDEX_MUL: {
      const __int128 c[4] = {__int128{a.lo} * b.lo, __int128{a.lo} * b.hi, __int128{a.hi} * b.lo,
                             __int128{a.hi} * b.hi};
      return fromWide(std::min({c[0], c[1], c[2], c[3]}), std::max({c[0], c[1], c[2], c[3]}));
    }
    case PLUGSDK_INDEX_FLOORDIV:
      if (b.isConst() && b.lo > 0) return {true, sdk::floorDiv(a.lo, b.lo), sdk::floorDiv(a.hi, b.lo)};
      return {};
    default:  // MOD
      if (b.isConst() && b.lo > 0) {
        if (a.lo >= 0 && a.hi < b.lo) return a;
        if (sdk::floorDiv(a.lo, b.lo) == sdk::floorDiv(a.hi, b.lo))
          return {true, sdk::floorMod(a.lo, b.lo), sdk::floorMod(a.hi, b.lo)};
        return {true, 0, b.lo - 1};
      }
      return {};
  }
}

}  // namespace

sdk::StatusOr<IndexVal> KernelLowering::index(plugsdk_index_expr_t e, const Region& r) {
  using K = IndexVal::Kind;
  std::vector<IndexVal> st;
  std::vector<Range> ranges;
  auto push = [&](IndexVal v, Range range) {
    if (range.isConst()) v = IndexVal{K::kUniform, b_.getInt64(static_cast<uint64_t>(range.lo)), 0, nullptr};
    st.push_back(v);
    ranges.push_back(range);
  };
  auto uniform = [&](llvm::Value* v, Range range = {}) { push(IndexVal{K::kUniform, v, 0, nullptr}, range); };
  const sdk::Span<const plugsdk_index_insn_t> pool = k_.indexPool();
  for (uint32_t i = 0; i < e.count; ++i) {
    const plugsdk_index_insn_t& in = pool[e.first + i];
    const auto n = static_cast<size_t>(in.operand);
    switch (in.op) {
      case PLUGSDK_INDEX_CONST:
        uniform(b_.getInt64(static_cast<uint64_t>(in.operand)), Range::exactly(in.operand));
        continue;
      case PLUGSDK_INDEX_SYMBOL: uniform(symbols_[n]); continue;
      case PLUGSDK_INDEX_GRID_VAR:
      case PLUGSDK_INDEX_LOOP_VAR: {
        const bool grid = in.op == PLUGSDK_INDEX_GRID_VAR;
        const std::vector<llvm::Value*>& vars = grid ? r.grid : r.loop;
        if (n >= vars.size() || !vars[n])
          return sdk::internalError("index variable " + std::to_string(n) + " is not bound in kernel @" +
                                    std::string(k_.name()));
        const std::vector<std::optional<int64_t>>& extents = grid ? gridExtents_ : r.loopExtents;
        Range range;
        if (n < extents.size() && extents[n] && *extents[n] > 0) range = {true, 0, *extents[n] - 1};
        if (r.lanes > 1 && in.op == r.laneKind && in.operand == r.laneVar)
          push(IndexVal{K::kAffine, vars[n], 1, nullptr}, range);
        else
          uniform(vars[n], range);
        continue;
      }
      case PLUGSDK_INDEX_VALUE: {
        const Val& v = values_[n];
        llvm::Value* x = v.v;
        const bool isUnsigned = dtypeOf(static_cast<int32_t>(n)) == PLUGSDK_DTYPE_U8 ||
                                dtypeOf(static_cast<int32_t>(n)) == PLUGSDK_DTYPE_BOOL;
        llvm::Type* target = b_.getInt64Ty();
        if (v.varying) target = llvm::VectorType::get(target, r.lanes, false);
        if (x->getType() != target) x = isUnsigned ? b_.CreateZExt(x, target) : b_.CreateSExt(x, target);
        if (v.varying)
          push(IndexVal{K::kLanes, nullptr, 0, x}, {});
        else
          uniform(x);
        continue;
      }
      default: break;
    }
    IndexVal bv = st.back();
    const Range br = ranges.back();
    st.pop_back();
    ranges.pop_back();
    IndexVal av = st.back();
    const Range ar = ranges.back();
    st.pop_back();
    ranges.pop_back();
    const uint32_t op = in.op;
    const Range rr = combine(op, ar, br);
    // a // c = 0 and a % c = a when 0 <= a < c: keep a as it is (affine stays affine).
    if ((op == PLUGSDK_INDEX_MOD || op == PLUGSDK_INDEX_FLOORDIV) && ar.known && br.isConst() && br.lo > 0 &&
        ar.lo >= 0 && ar.hi < br.lo) {
      if (op == PLUGSDK_INDEX_MOD)
        push(av, ar);
      else
        uniform(b_.getInt64(0), Range::exactly(0));
      continue;
    }
    if (rr.isConst()) {
      uniform(nullptr, rr);
      continue;
    }
    // Both uniform: scalar arithmetic (constants folded by the IRBuilder).
    if (av.kind == K::kUniform && bv.kind == K::kUniform) {
      llvm::Value* v = nullptr;
      switch (op) {
        case PLUGSDK_INDEX_ADD: v = b_.CreateAdd(av.base, bv.base); break;
        case PLUGSDK_INDEX_SUB: v = b_.CreateSub(av.base, bv.base); break;
        case PLUGSDK_INDEX_MUL: v = b_.CreateMul(av.base, bv.base); break;
        default: v = floorDivMod(b_, av.base, bv.base, op == PLUGSDK_INDEX_MOD);
      }
      uniform(v, rr);
      continue;
    }
    const bool affineOk = av.kind != K::kLanes && bv.kind != K::kLanes;
    if (affineOk && (op == PLUGSDK_INDEX_ADD || op == PLUGSDK_INDEX_SUB)) {
      const int64_t sa = av.kind == K::kAffine ? av.stride : 0, sb = bv.kind == K::kAffine ? bv.stride : 0;
      IndexVal x{K::kAffine, op == PLUGSDK_INDEX_ADD ? b_.CreateAdd(av.base, bv.base) : b_.CreateSub(av.base, bv.base),
                 op == PLUGSDK_INDEX_ADD ? sa + sb : sa - sb, nullptr};
      if (x.stride == 0) x.kind = K::kUniform;
      push(x, rr);
      continue;
    }
    if (affineOk && op == PLUGSDK_INDEX_MUL &&
        ((av.kind == K::kUniform && ar.isConst()) || (bv.kind == K::kUniform && br.isConst()))) {
      const IndexVal& aff = av.kind == K::kAffine ? av : bv;
      const int64_t c = av.kind == K::kAffine ? br.lo : ar.lo;
      IndexVal x{K::kAffine, b_.CreateMul(aff.base, b_.getInt64(static_cast<uint64_t>(c))), aff.stride * c, nullptr};
      if (x.stride == 0) x.kind = K::kUniform;
      push(x, rr);
      continue;
    }
    // Per lane.
    llvm::Value* a = indexLanes(av, r);
    llvm::Value* bb = indexLanes(bv, r);
    llvm::Value* v = nullptr;
    switch (op) {
      case PLUGSDK_INDEX_ADD: v = b_.CreateAdd(a, bb); break;
      case PLUGSDK_INDEX_SUB: v = b_.CreateSub(a, bb); break;
      case PLUGSDK_INDEX_MUL: v = b_.CreateMul(a, bb); break;
      default: v = floorDivMod(b_, a, bb, op == PLUGSDK_INDEX_MOD);
    }
    push(IndexVal{K::kLanes, nullptr, 0, v}, rr);
  }
  if (st.size() != 1) return sdk::internalError("a malformed index program in kernel @" + std::string(k_.name()));
  return st[0];
}

sdk::StatusOr<llvm::Value*> KernelLowering::uniformIndex(plugsdk_index_expr_t e, const Region& r) {
  Region scalar = r;
  scalar.lanes = 1;
  scalar.laneVar = -1;
  sdk::StatusOr<IndexVal> x = index(e, scalar);
  if (!x.isOk()) return x.status();
  return x->base ? x->base : x->lanes;
}

}  // namespace plugsdk::lowering

namespace plugsdk::lowering {

int64_t KernelLowering::laneZeroMultiple(plugsdk_index_expr_t e, const Region& r) const {
  static constexpr int64_t kMost = int64_t{1} << 30;  // "a multiple of anything we ask about"
  auto lowBit = [](int64_t c) { return c == 0 ? kMost : std::min<int64_t>(c & -c, kMost); };
  std::vector<int64_t> st;
  const sdk::Span<const plugsdk_index_insn_t> pool = k_.indexPool();
  for (uint32_t i = 0; i < e.count; ++i) {
    const plugsdk_index_insn_t& in = pool[e.first + i];
    switch (in.op) {
      case PLUGSDK_INDEX_CONST: st.push_back(lowBit(in.operand)); continue;
      case PLUGSDK_INDEX_SYMBOL: st.push_back(target_.symbolDivisor); continue;
      case PLUGSDK_INDEX_GRID_VAR:
      case PLUGSDK_INDEX_LOOP_VAR:
        // The per-lane variable's lane 0 is a chunk's start: a multiple of the lanes when the
        // launch promises aligned chunks (Target::argAlign).
        st.push_back(r.lanes > 1 && in.op == r.laneKind && in.operand == r.laneVar && target_.argAlign > 0 ? r.lanes
                                                                                                           : 1);
        continue;
      case PLUGSDK_INDEX_VALUE: st.push_back(1); continue;
      default: break;
    }
    if (st.size() < 2) return 1;
    const int64_t b = st.back();
    st.pop_back();
    const int64_t a = st.back();
    st.pop_back();
    switch (in.op) {
      case PLUGSDK_INDEX_ADD:
      case PLUGSDK_INDEX_SUB:
      case PLUGSDK_INDEX_MOD: st.push_back(std::min(a, b)); break;  // x mod c: x - c*q
      case PLUGSDK_INDEX_MUL: st.push_back(std::min(a * b, kMost)); break;
      default: st.push_back(1);  // a quotient: nothing known
    }
  }
  return st.size() == 1 ? st[0] : 1;
}

llvm::Align KernelLowering::vectorAlign(plugsdk_index_expr_t e, const Region& r, uint32_t dtype) const {
  const int64_t elem = dtypeBytes(dtype);
  if (target_.argAlign == 0 || r.lanes == 1) return llvm::Align(elem);
  const int64_t bytes = std::min<int64_t>({laneZeroMultiple(e, r) * elem, target_.argAlign, elem * r.lanes});
  return llvm::Align(static_cast<uint64_t>(std::max(bytes & -bytes, elem)));
}

}  // namespace plugsdk::lowering
