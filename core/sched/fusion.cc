// Fusion: roots join groups (one kernel each) under the rules of FusionCaps --
// vertical (a consumer reading a member at its own point), reduction prologue (producers
// inlined into the loop), reduction epilogue (consumers over the reduction's output domain
// or its input domain), several reductions over one domain, horizontal (siblings over one
// domain) and library epilogues -- and each group's kernel is generated here.
#include <algorithm>

#include "core/ir/op_registry.h"
#include "core/sched/index_math.h"
#include "core/sched/index_ranges.h"
#include "core/sched/inline_emitter.h"
#include "core/sched/sched_internal.h"

namespace plugsdk::sched::detail {

using kernel::ReduceOp;

bool State::sameShape(const Shape& a, const Shape& b) const {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!provedEQ(a[i], b[i])) return false;
  return true;
}

bool State::sameDomain(const Shape& a, const Shape& b) const {
  Shape sa, sb;
  for (const SymExpr& d : a)
    if (d != SymExpr(1)) sa.push_back(d);
  for (const SymExpr& d : b)
    if (d != SymExpr(1)) sb.push_back(d);
  return sameShape(sa, sb);
}

ReductionDomain reductionDomain(const ir::Node& n) {
  ReductionDomain r;
  r.full = n.inputs()[0]->type().shape;
  r.grid = n.outputs()[0]->type().shape;
  r.reduced.assign(r.full.size(), false);
  ir::AttrReader a(n.def()->schema, n.attrs());
  std::vector<int64_t> dims = a.schema().findArg("dims") ? a.getInts("dims") : std::vector<int64_t>{a.getInt("dim")};
  for (int64_t d : dims) r.reduced[static_cast<size_t>(d)] = true;
  for (size_t d = 0; d < r.full.size(); ++d)
    if (r.reduced[d]) r.loopSizes.push_back(r.full[d]);
  return r;
}

namespace {

ReduceOp reduceOpOf(const std::string& op) {
  if (op == "prims.sum") return ReduceOp::kSum;
  if (op == "prims.prod") return ReduceOp::kProd;
  if (op == "prims.amax") return ReduceOp::kMax;
  if (op == "prims.amin") return ReduceOp::kMin;
  if (op == "prims.argmax") return ReduceOp::kArgMax;
  return ReduceOp::kArgMin;
}

/// The multi-index of a value of `shape` at the grid point of `grid` (same domain):
/// size-1 dims read 0, the others take the grid variables of grid's non-1 dims in order.
std::vector<SymExpr> pointIndex(const Shape& shape, const Shape& grid) {
  std::vector<SymExpr> vars;
  for (size_t d = 0; d < grid.size(); ++d)
    if (grid[d] != SymExpr(1)) vars.push_back(SymExpr::symbol(kernel::gridVar(d)));
  std::vector<SymExpr> idx;
  size_t next = 0;
  for (const SymExpr& s : shape) idx.push_back(s == SymExpr(1) || next >= vars.size() ? SymExpr(0) : vars[next++]);
  return idx;
}

/// The full-domain index inside a reduction loop: kept dims take grid variables, reduced
/// dims loop variables.
std::vector<SymExpr> loopIndex(const std::vector<bool>& reduced) {
  std::vector<SymExpr> idx;
  size_t gi = 0, ri = 0;
  for (bool red : reduced) idx.push_back(SymExpr::symbol(red ? kernel::loopVar(ri++) : kernel::gridVar(gi++)));
  return idx;
}

class GroupGen {
 public:
  GroupGen(State& st, int g, bool final) : st_(st), gi_(g), g_(st.groups[static_cast<size_t>(g)]), final_(final) {}

  StatusOr<GroupCode> run(const std::vector<int>& members) {
    members_ = members;
    KernelBuilder kb("k" + std::to_string(gi_), g_.grid);
    kb_ = &kb;
    InlineEmitter em(kb, [this](const ir::Value* v, const std::vector<SymExpr>* multi, const SymExpr& lin, int mask) {
      return resolve(v, multi, lin, mask);
    });
    em_ = &em;
    const SymExpr point = linearize(gridIndex(g_.grid.size()), g_.grid);
    for (int m : members) {
      Root& r = st_.roots[static_cast<size_t>(m)];
      current_ = m;
      code_.origin += (code_.origin.empty() ? "" : ", ") + r.value->ref();
      switch (r.kind) {
        case RootKind::kReduction: {
          const ir::Node& n = *r.value->producer();
          ReductionDomain dom = reductionDomain(n);
          kb.beginLoop(dom.loopSizes);
          ASSIGN_OR_RETURN(int x, em.at(n.inputs()[0], loopIndex(dom.reduced)));
          const int red = kb.reduce(reduceOpOf(n.op()), x);
          kb.endLoop();
          computed_[m] = red;
          storeIfNeeded(r, point, red);
          break;
        }
        case RootKind::kLibrary: {
          // The library result, read through the epilogue's accumulator argument.
          const int acc = kb.arg(-1, "acc", r.value->type().dtype, true, false, /*accumulator=*/true);
          const int v = kb.load(acc, point);
          computed_[m] = v;
          storeIfNeeded(r, point, v);
          break;
        }
        case RootKind::kElementwise:
        case RootKind::kInputCopy: {
          if (r.loopMember) {
            kb.beginLoop(reductionDomainOfGroup().loopSizes);
            const std::vector<SymExpr> idx = loopIndex(g_.reduced);
            ASSIGN_OR_RETURN(int v, r.kind == RootKind::kInputCopy ? em.at(r.value, idx) : em.compute(r.value, idx));
            kb.store(bufferArg(m, true), linearize(idx, g_.full), v);
            kb.endLoop();
          } else {
            const Shape& shape = r.value->type().shape;
            // A library epilogue's member in another shape of the same points (domainAllows).
            const std::vector<SymExpr> idx = g_.kind == GroupKind::kLibrary && !st_.sameDomain(shape, g_.grid)
                                                 ? delinearize(point, shape)
                                                 : pointIndex(shape, g_.grid);
            ASSIGN_OR_RETURN(int v, r.kind == RootKind::kInputCopy ? em.at(r.value, idx) : em.compute(r.value, idx));
            computed_[m] = v;
            storeIfNeeded(r, point, v);
          }
          break;
        }
        case RootKind::kScatter: return internalError("scatter roots are generated by the scheduler");
      }
      if (kb.size() > st_.options.caps.maxKernelStmts)
        return failedPrecondition("kernel would exceed " + std::to_string(st_.options.caps.maxKernelStmts) +
                                  " statements");
    }
    for (const ir::Value* v : em.computed()) code_.values.push_back(v->name());
    for (int m : members) {
      const std::string& n = st_.roots[static_cast<size_t>(m)].value->name();
      if (std::find(code_.values.begin(), code_.values.end(), n) == code_.values.end()) code_.values.push_back(n);
    }
    code_.argBuffers = kb.argBuffers();
    code_.kernel = kb.finish();
    return code_;
  }

 private:
  ReductionDomain reductionDomainOfGroup() const {
    ReductionDomain d;
    d.grid = g_.grid;
    d.full = g_.full;
    d.reduced = g_.reduced;
    for (size_t i = 0; i < g_.full.size(); ++i)
      if (g_.reduced[i]) d.loopSizes.push_back(g_.full[i]);
    return d;
  }

  /// The kernel argument of root m's buffer (a placeholder id before buffers exist).
  int bufferArg(int m, bool write) {
    const Root& r = st_.roots[static_cast<size_t>(m)];
    const int buffer = final_ ? r.buffer : -2 - m;
    const std::string name =
        final_ && r.buffer >= 0 ? st_.program.buffers[static_cast<size_t>(r.buffer)].name : "r" + std::to_string(m);
    return kb_->arg(buffer, name, r.value->type().dtype, !write, write);
  }

  void storeIfNeeded(const Root& r, const SymExpr& point, int v) {
    if (final_ && !r.needsBuffer) return;
    kb_->store(bufferArg(st_.rootOf.at(r.value), true), point, v);
  }

  StatusOr<std::optional<int>> resolve(const ir::Value* v, const std::vector<SymExpr>* multi, const SymExpr& lin,
                                       int mask) {
    if (!v->producer()) {  // a graph input
      if (!final_)
        return std::optional<int>(
            kb_->load(kb_->arg(-100000 - inputIndex(v), v->name(), v->type().dtype, true, false), lin, mask));
      const int buffer = st_.inputBuffer.at(v);
      const int arg =
          kb_->arg(buffer, st_.program.buffers[static_cast<size_t>(buffer)].name, v->type().dtype, true, false);
      SymExpr offset = lin;
      if (v->type().strides) offset = dot(multi ? *multi : delinearize(lin, v->type().shape), *v->type().strides);
      return std::optional<int>(kb_->load(arg, offset, mask));
    }
    auto it = st_.rootOf.find(v);
    if (it == st_.rootOf.end()) return std::optional<int>();
    const int m = it->second;
    const Root& r = st_.roots[static_cast<size_t>(m)];
    if (m == current_) return std::optional<int>();  // the member being computed: inline its op
    const bool inGroup = std::find(members_.begin(), members_.end(), m) != members_.end();
    if (inGroup) {
      auto c = computed_.find(m);
      const SymExpr point = linearize(gridIndex(g_.grid.size()), g_.grid);
      if (c == computed_.end() || r.loopMember)
        return failedPrecondition(v->ref() + " is computed in a loop of this kernel or later, not readable here");
      if ((lin != point && !samePoint(lin, point)) || mask >= 0)
        return failedPrecondition(v->ref() + " is read at another point than the one this kernel computes");
      code_.readsMember = true;
      return std::optional<int>(c->second);
    }
    if (r.group < 0 || r.group >= gi_) return failedPrecondition(v->ref() + " is computed by a later kernel");
    code_.externalRoots.insert(m);
    return std::optional<int>(kb_->load(bufferArg(m, false), lin, mask));
  }

  /// Whether index `lin` is the grid point `point` within the grid's constant extents: a member
  /// in another shape of the same points reads at linearize(delinearize(point)).
  bool samePoint(const SymExpr& lin, const SymExpr& point) const {
    std::map<std::string, int64_t> extents;
    for (size_t d = 0; d < g_.grid.size(); ++d)
      if (auto c = g_.grid[d].constant()) extents[kernel::gridVar(d)] = *c;
    return st_.provedEQ(simplifyInRanges(lin, extents), point);
  }

  int inputIndex(const ir::Value* v) const {
    const auto& ins = st_.graph.inputs();
    return static_cast<int>(std::find(ins.begin(), ins.end(), v) - ins.begin());
  }

  State& st_;
  int gi_;
  const Group& g_;
  bool final_;
  KernelBuilder* kb_ = nullptr;
  InlineEmitter* em_ = nullptr;
  std::vector<int> members_;
  std::unordered_map<int, int> computed_;
  int current_ = -1;
  GroupCode code_;
};

/// Whether the target takes a fused epilogue on library call `lib` (matmul and convolution only).
bool takesEpilogue(const FusionCaps& caps, const ir::Node* lib) {
  if (!lib) return false;
  if (lib->op() == "prims.matmul") return caps.matmulEpilogue;
  if (lib->op() == "prims.convolution") return caps.convolutionEpilogue;
  return false;
}

}  // namespace

StatusOr<std::vector<GroupCode>> generateScatter(State& st, int gi) {
  const Group& g = st.groups[static_cast<size_t>(gi)];
  const ir::Node& n = *g.scatter;
  const Root& out = st.roots[static_cast<size_t>(st.rootOf.at(n.outputs()[0]))];
  const ir::Value *a = n.inputs()[0], *index = n.inputs()[1], *src = n.inputs()[2];
  ir::AttrReader attrs(n.def()->schema, n.attrs());
  const auto dim = static_cast<size_t>(attrs.getInt("dim"));
  const std::string reduce = attrs.getString("reduce");
  const kernel::Combine combine = reduce == "sum"    ? kernel::Combine::kSum
                                  : reduce == "prod" ? kernel::Combine::kProd
                                  : reduce == "amax" ? kernel::Combine::kMax
                                  : reduce == "amin" ? kernel::Combine::kMin
                                                     : kernel::Combine::kNone;
  const std::string& outName = st.program.buffers[static_cast<size_t>(out.buffer)].name;
  std::vector<GroupCode> codes;
  auto external = [&](KernelBuilder& kb) {
    return [&st, &kb, gi](const ir::Value* v, const std::vector<SymExpr>* multi, const SymExpr& lin,
                          int mask) -> StatusOr<std::optional<int>> {
      if (!v->producer()) {
        const int buffer = st.inputBuffer.at(v);
        const int arg =
            kb.arg(buffer, st.program.buffers[static_cast<size_t>(buffer)].name, v->type().dtype, true, false);
        SymExpr offset = lin;
        if (v->type().strides) offset = dot(multi ? *multi : delinearize(lin, v->type().shape), *v->type().strides);
        return std::optional<int>(kb.load(arg, offset, mask));
      }
      auto it = st.rootOf.find(v);
      if (it == st.rootOf.end()) return std::optional<int>();
      const Root& r = st.roots[static_cast<size_t>(it->second)];
      if (r.group >= gi || r.buffer < 0) return internalError(v->ref() + " has no buffer before the scatter");
      const int arg =
          kb.arg(r.buffer, st.program.buffers[static_cast<size_t>(r.buffer)].name, v->type().dtype, true, false);
      return std::optional<int>(kb.load(arg, lin, mask));
    };
  };
  if (!g.scatterInPlace) {  // out = a
    KernelBuilder kb("k" + std::to_string(gi) + "_copy", a->type().shape);
    InlineEmitter em(kb, external(kb));
    const auto idx = gridIndex(a->type().shape.size());
    ASSIGN_OR_RETURN(int v, em.at(a, idx));
    kb.store(kb.arg(out.buffer, outName, a->type().dtype, false, true), linearize(idx, a->type().shape), v);
    GroupCode c;
    for (const ir::Value* x : em.computed()) c.values.push_back(x->name());
    c.argBuffers = kb.argBuffers();
    c.kernel = kb.finish();
    c.origin = n.outputs()[0]->ref() + " (copy)";
    codes.push_back(std::move(c));
  }
  KernelBuilder kb("k" + std::to_string(gi) + "_scatter", index->type().shape);
  InlineEmitter em(kb, external(kb));
  const auto idx = gridIndex(index->type().shape.size());
  ASSIGN_OR_RETURN(int k, em.at(index, idx));
  k = kb.cast(k, DType::kI64);
  kb.checkIndex(k, a->type().shape[dim],
                "scatter " + n.outputs()[0]->ref() + ": an index along dim " + std::to_string(dim));
  ASSIGN_OR_RETURN(int v, em.at(src, idx));
  std::vector<SymExpr> target = idx;
  target[dim] = kernel::valueRef(k);
  const int arg = kb.arg(out.buffer, outName, a->type().dtype, combine != kernel::Combine::kNone, true);
  kb.store(arg, linearize(target, a->type().shape), v, combine);
  GroupCode c;
  for (const ir::Value* x : em.computed()) c.values.push_back(x->name());
  c.values.push_back(n.outputs()[0]->name());
  c.argBuffers = kb.argBuffers();
  c.kernel = kb.finish();
  c.origin = n.outputs()[0]->ref();
  codes.push_back(std::move(c));
  return codes;
}

StatusOr<GroupCode> generateGroup(State& st, int g, int extra, bool final) {
  std::vector<int> members = st.groups[static_cast<size_t>(g)].members;
  if (extra >= 0) members.push_back(extra);
  return GroupGen(st, g, final).run(members);
}

namespace {

/// Whether root r may join group g, judged on domains and capabilities alone.
bool domainAllows(const State& st, const Group& g, const Root& r, bool* asLoopMember) {
  const FusionCaps& caps = st.options.caps;
  *asLoopMember = false;
  const Shape& shape = r.value->type().shape;
  if (r.kind == RootKind::kReduction) {
    ReductionDomain d = reductionDomain(*r.value->producer());
    if (g.kind == GroupKind::kReduction)
      return caps.multiReduction && st.sameShape(d.full, g.full) && d.reduced == g.reduced &&
             st.sameShape(d.grid, g.grid);
    if (g.kind == GroupKind::kPointwise) return caps.horizontal && st.sameShape(d.grid, g.grid);
    return false;
  }
  if (r.kind != RootKind::kElementwise && r.kind != RootKind::kInputCopy) return false;
  switch (g.kind) {
    case GroupKind::kPointwise: return st.sameDomain(shape, g.grid);
    case GroupKind::kReduction:
      if (!caps.reductionEpilogue) return false;
      if (st.sameDomain(shape, g.grid)) return true;
      if (st.sameShape(shape, g.full)) {
        *asLoopMember = true;
        return true;
      }
      return false;
    case GroupKind::kLibrary:
      // A member over the result's elements in another shape (a view of it: a linear layer's
      // [b*s, n] result read as [b, s, n]) is computed at the same linear points.
      return takesEpilogue(caps, g.library) &&
             (st.sameDomain(shape, g.grid) || st.provedEQ(numelOf(shape), numelOf(g.grid)));
    case GroupKind::kScatter: return false;
  }
  return false;
}

Group newGroup(const State& st, const Root& r) {
  Group g;
  const ir::Node* n = r.value->producer();
  switch (r.kind) {
    case RootKind::kReduction: {
      ReductionDomain d = reductionDomain(*n);
      g.kind = GroupKind::kReduction;
      g.grid = d.grid;
      g.full = d.full;
      g.reduced = d.reduced;
      break;
    }
    case RootKind::kLibrary:
      g.kind = GroupKind::kLibrary;
      g.library = n;
      g.grid = n->outputs()[0]->type().shape;
      break;
    case RootKind::kScatter:
      g.kind = GroupKind::kScatter;
      g.scatter = n;
      g.grid = n->inputs()[1]->type().shape;
      break;
    default: g.grid = r.value->type().shape; break;
  }
  (void)st;
  return g;
}

}  // namespace

Status formGroups(State& st) {
  const FusionCaps& caps = st.options.caps;
  for (size_t ri = 0; ri < st.roots.size(); ++ri) {
    Root& r = st.roots[ri];
    const int m = static_cast<int>(ri);
    // The second output of a library op belongs to its call.
    if (r.kind == RootKind::kLibrary) {
      bool joined = false;
      for (size_t gi = 0; gi < st.groups.size() && !joined; ++gi)
        if (st.groups[gi].library == r.value->producer()) {
          st.groups[gi].members.push_back(m);
          r.group = static_cast<int>(gi);
          joined = true;
        }
      if (joined) continue;
    }
    bool joined = false;
    if (caps.fuse && r.kind != RootKind::kLibrary && r.kind != RootKind::kScatter) {
      for (size_t gi = st.groups.size(); gi-- > 0 && !joined;) {
        Group& g = st.groups[gi];
        bool loop = false;
        if (!domainAllows(st, g, r, &loop)) continue;
        r.loopMember = loop;
        auto code = generateGroup(st, static_cast<int>(gi), m, /*final=*/false);
        bool ok = code.isOk();

        if (ok) {
          for (int ext : code->externalRoots)
            ok = ok && st.roots[static_cast<size_t>(ext)].group < static_cast<int>(gi);
          // Library epilogues and non-horizontal joins need a real producer-consumer edge.
          if (g.kind == GroupKind::kLibrary || (!caps.horizontal && g.kind == GroupKind::kPointwise))
            ok = ok && code->readsMember;
        }
        if (!ok) {
          r.loopMember = false;
          continue;
        }
        if (r.kind == RootKind::kReduction && g.kind == GroupKind::kPointwise) {
          ReductionDomain d = reductionDomain(*r.value->producer());
          g.kind = GroupKind::kReduction;
          g.full = d.full;
          g.reduced = d.reduced;
        }
        g.members.push_back(m);
        r.group = static_cast<int>(gi);
        joined = true;
      }
    }
    if (joined) continue;
    st.groups.push_back(newGroup(st, r));
    st.groups.back().members.push_back(m);
    r.group = static_cast<int>(st.groups.size() - 1);
  }
  return Status::ok();
}

}  // namespace plugsdk::sched::detail
