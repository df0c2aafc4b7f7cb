// The scheduler's driver: picks the roots (values that get a kernel of their own or a place
// in a fused one), forms groups (fusion.cc), gives roots that need memory a buffer, turns
// groups into launches and library calls, and plans memory (memory_plan.cc).
#include "core/sched/schedule.h"

#include "core/sched/split_reductions.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <unordered_set>
#include <vector>

#include "core/ir/op_registry.h"
#include "core/prims/prims.h"
#include "core/sched/index_math.h"
#include "core/sched/index_ranges.h"
#include "core/sched/inline_emitter.h"
#include "core/sched/memory_plan.h"
#include "core/sched/sched_internal.h"

namespace plugsdk::sched {

using namespace detail;

namespace {

bool isLibrary(const std::string& op) { return prims::isLibraryPrim(op); }
bool isReduction(const std::string& op) {
  return op == "prims.sum" || op == "prims.prod" || op == "prims.amax" || op == "prims.amin" || op == "prims.argmax" ||
         op == "prims.argmin";
}

/// A strided view of `v` over the memory of a graph input or a root (or of `stop`, taken as
/// one), when v is a chain of views that strides can express. `base` receives the value whose
/// memory it views.
std::optional<View> viewOf(const State& st, const ir::Value* v, const ir::Value** base,
                           const ir::Value* stop = nullptr) {
  const ir::Node* n = v->producer();
  if (!n || st.isRoot(v) || v == stop) {
    View view;
    view.shape = v->type().shape;
    view.strides = v->type().effectiveStrides();
    view.offset = 0;
    *base = v;
    return view;
  }
  if (!isView(n->op())) return std::nullopt;
  auto in = viewOf(st, n->inputs()[0], base, stop);
  if (!in) return std::nullopt;
  ir::AttrReader a(n->def()->schema, n->attrs());
  const Shape& outShape = v->type().shape;
  View out;
  out.shape = outShape;
  out.offset = in->offset;
  const std::string op = n->op();
  if (op == "prims.permute") {
    for (int64_t d : a.getInts("dims")) out.strides.push_back(in->strides[static_cast<size_t>(d)]);
  } else if (op == "prims.slice") {
    const auto start = a.getSyms("start_indices");
    std::vector<int64_t> step = a.getInts("strides");
    if (step.empty()) step.assign(start.size(), 1);
    for (size_t d = 0; d < start.size(); ++d) {
      out.offset = out.offset + start[d] * in->strides[d];
      out.strides.push_back(in->strides[d] * step[d]);
    }
  } else if (op == "prims.rev") {
    out.strides = in->strides;
    for (int64_t d : a.getInts("dims")) {
      const auto u = static_cast<size_t>(d);
      out.offset = out.offset + (in->shape[u] - 1) * in->strides[u];
      out.strides[u] = -in->strides[u];
    }
  } else if (op == "prims.broadcast_in_dim") {
    out.strides.assign(outShape.size(), SymExpr(0));
    const auto bd = a.getInts("broadcast_dimensions");
    for (size_t i = 0; i < bd.size(); ++i)
      if (in->shape[i] != SymExpr(1)) out.strides[static_cast<size_t>(bd[i])] = in->strides[i];
  } else if (op == "prims.reshape") {
    // Contiguous storage reshapes freely; otherwise only size-1 dims may come and go.
    if (in->strides == ir::contiguousStrides(in->shape)) {
      out.strides = ir::contiguousStrides(outShape);
    } else {
      Shape inDims, inStrides, outDims;
      for (size_t d = 0; d < in->shape.size(); ++d)
        if (in->shape[d] != SymExpr(1)) {
          inDims.push_back(in->shape[d]);
          inStrides.push_back(in->strides[d]);
        }
      for (const SymExpr& d : outShape)
        if (d != SymExpr(1)) outDims.push_back(d);
      if (!st.sameShape(inDims, outDims)) return std::nullopt;
      size_t k = 0;
      for (const SymExpr& d : outShape) out.strides.push_back(d == SymExpr(1) ? SymExpr(0) : inStrides[k++]);
    }
  } else if (op == "prims.as_strided") {
    if (in->strides != ir::contiguousStrides(in->shape)) return std::nullopt;
    out.strides = a.getSyms("stride");
    out.offset = out.offset + a.getSym("storage_offset");
  } else {
    return std::nullopt;
  }
  return out;
}

/// Statements an inlined value costs each consumer (capped).
int64_t inlineCost(const State& st, const ir::Value* v, std::unordered_map<const ir::Value*, int64_t>& memo,
                   int64_t cap) {
  if (!v->producer() || st.isRoot(v)) return 1;
  auto it = memo.find(v);
  if (it != memo.end()) return it->second;
  int64_t c = 1;
  for (const ir::Value* in : v->producer()->inputs())
    if (in && c <= cap) c += inlineCost(st, in, memo, cap);
  memo[v] = c;
  return c;
}

/// Whether `v`, inlined, reads more than `limit` distinct large tensors (roots or graph
/// inputs with at least 1/16 of `v`'s elements; unknown sizes count as large).
bool readsMany(const State& st, const ir::Value* v, int64_t limit) {
  const std::optional<int64_t> n = v->type().numel().constant();
  std::unordered_set<const ir::Value*> seen, large;
  std::vector<const ir::Value*> stack{v};
  while (!stack.empty() && static_cast<int64_t>(large.size()) <= limit) {
    const ir::Value* x = stack.back();
    stack.pop_back();
    if (!seen.insert(x).second) continue;
    if (x != v && (!x->producer() || st.isRoot(x))) {
      const std::optional<int64_t> m = x->type().numel().constant();
      if (!n || !m || *m * 16 >= *n) large.insert(x);
      continue;
    }
    for (const ir::Value* in : x->producer()->inputs())
      if (in) stack.push_back(in);
  }
  return static_cast<int64_t>(large.size()) > limit;
}

/// Whether a view walks some dim backwards (prims.rev).
bool reversed(const View& v) {
  for (const SymExpr& s : v.strides) {
    const std::optional<int64_t> c = s.constant();
    if (c && *c < 0) return true;
  }
  return false;
}

/// Whether the batch dims of a matmul operand (all but the last two) walk memory with more
/// than one stride. Batched GEMM libraries take one batch stride, so such an operand costs a
/// library call per point of the dims that do not flatten: vit_b_16's attention backward read
/// a head view of the qkv projection ([32, 12, 197, 64], strides [453888, 64, 2304, 1]) as 32
/// calls of 12 small GEMMs, 128 calls a layer at ~7.5 us each (measured on the H200), where
/// one copy of the view costs ~7 us. Broadcast dims (stride 0) stay: copied, they would grow.
bool batchDimsSplit(const View& v) {
  const size_t rank = v.shape.size();
  std::vector<std::pair<int64_t, int64_t>> dims;  // (size, stride) of the batch dims past size 1
  for (size_t d = 0; d + 2 < rank; ++d) {
    const std::optional<int64_t> n = v.shape[d].constant();
    const std::optional<int64_t> s = v.strides[d].constant();
    if (!n || !s) return false;  // symbolic: left as it is
    if (*n == 1) continue;
    if (*s == 0) return false;
    dims.emplace_back(*n, *s);
  }
  for (size_t i = 0; i + 1 < dims.size(); ++i)
    if (dims[i].second != dims[i + 1].second * dims[i + 1].first) return true;
  return false;
}

/// Whether `v` is prims.permute of the last two dims (a transposed matrix, batch dims kept).
bool transposesLastTwo(const ir::Value* v) {
  const ir::Node* n = v->producer();
  if (!n || n->op() != "prims.permute") return false;
  const std::vector<int64_t> dims = ir::AttrReader(n->def()->schema, n->attrs()).getInts("dims");
  const int64_t r = static_cast<int64_t>(dims.size());
  if (r < 2 || dims[r - 2] != r - 1 || dims[r - 1] != r - 2) return false;
  for (int64_t d = 0; d + 2 < r; ++d)
    if (dims[d] != d) return false;
  return true;
}

/// Whether a library operand `in`, a chain of views over the computed value `v`, is best
/// read from v's own memory (v materialized, `in` a view of it) rather than materialized
/// itself. From v's memory when the library can take the view as it lies: v's elements in
/// row-major order, a broadcast (materialized it would be larger than v), or a permuted
/// view whose matrix has a unit stride and the other stride a multiple of 16 bytes (a
/// transposed operand: GEMM libraries read it at full speed); also when v is too costly
/// to recompute per read. Otherwise -- windows that strides cannot express (im2col's
/// columns) or a matrix whose rows would start unaligned (a convolution's channels-last
/// columns over a 14x14 NCHW activation: 392-byte rows) -- the operand is materialized in
/// its own row-major layout and v is inlined into the kernel that writes it, unless v is a
/// root for other reasons: the write happens either way, and the library gets an aligned,
/// contiguous operand (the columns gathered straight from the previous layer's pointwise
/// tail, without the padded input or the activation in between).
bool readsOperandFromBase(const State& st, const ir::Value* in, const ir::Value* v, int64_t maxRecompute) {
  if (in == v) return true;
  std::unordered_map<const ir::Value*, int64_t> memo;
  if (inlineCost(st, v, memo, maxRecompute) > maxRecompute) return true;
  const ir::Value* base = nullptr;
  const std::optional<View> view = viewOf(st, in, &base, v);
  if (!view) return false;
  Shape dims, strides;
  for (size_t d = 0; d < view->shape.size(); ++d)
    if (view->shape[d] != SymExpr(1)) {
      if (view->strides[d].isZero()) return true;  // a broadcast
      dims.push_back(view->shape[d]);
      strides.push_back(view->strides[d]);
    }
  if (strides == ir::contiguousStrides(dims)) return true;
  const size_t r = view->shape.size();
  if (r < 2) return false;
  const SymExpr &rows = view->strides[r - 2], &cols = view->strides[r - 1];
  const SymExpr& ld = cols == SymExpr(1) ? rows : rows == SymExpr(1) ? cols : SymExpr(0);
  if (ld.isZero()) return false;  // no unit stride: a gather either way
  const std::optional<int64_t> ldv = ld.constant();
  return !ldv || (*ldv * ir::dtypeSize(in->type().dtype)) % 16 == 0;
}

Status chooseRoots(State& st) {
  const FusionCaps& caps = st.options.caps;
  std::unordered_map<const ir::Value*, RootKind> kinds;
  std::unordered_map<const ir::Value*, int> uses;
  for (const auto& n : st.graph.nodes()) {
    if (!prims::isPrim(n->op()))
      return invalidArgument(n->describe() + ": the scheduler takes prims only; " + n->op() +
                             " must be decomposed first (decomp::decompose)");
    for (const ir::Value* in : n->inputs())
      if (in) ++uses[in];
    const std::string& op = n->op();
    for (const ir::Value* o : n->outputs()) {
      if (isLibrary(op))
        kinds[o] = RootKind::kLibrary;
      else if (isReduction(op))
        kinds[o] = RootKind::kReduction;
      else if (op == "prims.scatter")
        kinds[o] = RootKind::kScatter;
      else if (!caps.fuse && !isView(op))
        kinds[o] = RootKind::kElementwise;
      else if (!isInlinable(op))
        return internalError(n->describe() + ": no scheduling rule for " + op);
    }
  }
  for (const ir::Value* o : st.graph.outputs()) {
    ++uses[o];
    if (kinds.count(o)) continue;
    kinds[o] = o->producer() ? RootKind::kElementwise : RootKind::kInputCopy;
  }
  auto commit = [&]() {
    st.roots.clear();
    st.rootOf.clear();
    for (const ir::Value* in : st.graph.inputs())
      if (kinds.count(in)) {
        st.rootOf[in] = static_cast<int>(st.roots.size());
        st.roots.push_back(Root{in, kinds[in]});
      }
    for (const auto& n : st.graph.nodes())
      for (const ir::Value* o : n->outputs())
        if (kinds.count(o)) {
          st.rootOf[o] = static_cast<int>(st.roots.size());
          st.roots.push_back(Root{o, kinds[o]});
        }
  };
  commit();
  // Library operands are strided views of memory: a view chain over a computed value makes
  // that value a root; anything else is materialized.
  for (const auto& n : st.graph.nodes()) {
    if (!isLibrary(n->op())) continue;
    for (const ir::Value* in : n->inputs()) {
      if (!in) continue;
      const ir::Value* base = nullptr;
      const ir::Value* v = in;
      while (v->producer() && isView(v->producer()->op()) && !kinds.count(v)) v = v->producer()->inputs()[0];
      if (v->producer() && !kinds.count(v) && readsOperandFromBase(st, in, v, caps.maxRecompute))
        kinds[v] = RootKind::kElementwise;
      commit();
      // A view the library cannot take -- none at all, one with a negative stride (a
      // reversed weight: libraries index forward), or a matmul operand whose batch dims do
      // not flatten -- is materialized row-major.
      const std::optional<View> view = viewOf(st, in, &base);
      const bool splitBatch = view && n->op() == "prims.matmul" && batchDimsSplit(*view);
      // A transposed operand (k^T of attention) is materialized untransposed and read as a
      // transposed view of that: rows of the head dim (64) stay 16-byte aligned for the
      // GEMM, where rows of the sequence (197) would not.
      const ir::Value* copy = splitBatch && transposesLastTwo(in) ? in->producer()->inputs()[0] : in;
      if (!view || reversed(*view) || splitBatch)
        kinds[copy] = copy->producer() ? RootKind::kElementwise : RootKind::kInputCopy;
    }
  }
  commit();
  // Expensive values used more than once are computed once.
  std::unordered_map<const ir::Value*, int64_t> memo;
  for (const auto& n : st.graph.nodes())
    for (const ir::Value* o : n->outputs())
      if (!kinds.count(o) && uses[o] > 1 && !isView(n->op())) {
        if (inlineCost(st, o, memo, caps.maxRecompute) > caps.maxRecompute) {
          kinds[o] = RootKind::kElementwise;
        } else if (readsMany(st, o, caps.maxRecomputeReads)) {
          kinds[o] = RootKind::kElementwise;
          commit();  // later values (in graph order) read it as a root
          memo.clear();
        }
      }
  commit();
  // A reduction that reads a computed value through windows (pooling: pad, as_strided,
  // reshape) reads each of its elements several times: inlined, the computation would run
  // once per read, as gathers. That value is computed once instead, which also lets it fuse
  // as the epilogue of the library op that produced its operand (conv -> bn -> relu).
  for (const auto& n : st.graph.nodes()) {
    if (!isReduction(n->op())) continue;
    const ir::Value* in = n->inputs()[0];
    const ir::Value* base = in;
    while (base->producer() && !kinds.count(base) &&
           (isView(base->producer()->op()) || base->producer()->op() == "prims.pad"))
      base = base->producer()->inputs()[0];
    if (base == in || !base->producer() || kinds.count(base)) continue;
    const std::optional<int64_t> reads = in->type().numel().constant();
    const std::optional<int64_t> elems = base->type().numel().constant();
    if (reads && elems && *reads >= 2 * *elems && inlineCost(st, base, memo, 2) > 1)
      kinds[base] = RootKind::kElementwise;
  }
  commit();
  // A value whose inlined expression alone would take a quarter of the kernel size limit
  // becomes a root, so that a long elementwise chain splits into several kernels below the
  // limit instead of failing to schedule.
  const int64_t split = std::max<int64_t>(8, caps.maxKernelStmts / 4);
  memo.clear();
  for (const auto& n : st.graph.nodes())
    for (const ir::Value* o : n->outputs())
      if (!st.isRoot(o) && !isView(n->op()) && inlineCost(st, o, memo, split) > split) {
        kinds[o] = RootKind::kElementwise;
        commit();
        memo.clear();
      }
  return Status::ok();
}

int addBuffer(Program& p, const std::string& name, DType dtype, const SymExpr& numel, BufferRole role) {
  Buffer b;
  b.name = name;
  b.dtype = dtype;
  b.numel = numel;
  b.role = role;
  p.buffers.push_back(b);
  return static_cast<int>(p.buffers.size() - 1);
}

/// Elements a strided input spans: 1 + sum((size - 1) * stride), or numel when contiguous.
SymExpr storageExtent(const ir::TensorType& t) {
  if (!t.strides) return t.numel();
  SymExpr e(1);
  for (size_t d = 0; d < t.shape.size(); ++d) e = e + (t.shape[d] - 1) * (*t.strides)[d];
  return e;
}

Status assignBuffers(State& st) {
  Program& p = st.program;
  for (const ir::Value* in : st.graph.inputs())
    st.inputBuffer[in] = addBuffer(p, in->name(), in->type().dtype, storageExtent(in->type()), BufferRole::kInput);
  // Which roots other groups read (the same analysis the fusion trials did).
  for (size_t g = 0; g < st.groups.size(); ++g) {
    if (st.groups[g].kind == GroupKind::kScatter) {
      // The scatter's kernels inline its operands' expressions: every root those reach is read.
      std::vector<const ir::Value*> work(st.groups[g].scatter->inputs().begin(), st.groups[g].scatter->inputs().end());
      std::unordered_set<const ir::Value*> seen;
      while (!work.empty()) {
        const ir::Value* v = work.back();
        work.pop_back();
        if (!v || !v->producer() || !seen.insert(v).second) continue;
        auto it = st.rootOf.find(v);
        if (it != st.rootOf.end()) {
          st.roots[static_cast<size_t>(it->second)].needsBuffer = true;
          continue;
        }
        for (const ir::Value* in : v->producer()->inputs()) work.push_back(in);
      }
      continue;
    }
    ASSIGN_OR_RETURN(GroupCode code, generateGroup(st, static_cast<int>(g), -1, false));
    for (int m : code.externalRoots) st.roots[static_cast<size_t>(m)].needsBuffer = true;
  }
  for (const ir::Value* o : st.graph.outputs()) st.roots[static_cast<size_t>(st.rootOf.at(o))].needsBuffer = true;
  for (auto& r : st.roots) {
    if (r.loopMember || r.kind == RootKind::kScatter) r.needsBuffer = true;
    if (r.kind == RootKind::kLibrary && st.groups[static_cast<size_t>(r.group)].members.size() == 1)
      r.needsBuffer = true;
  }
  for (const auto& n : st.graph.nodes()) {
    if (isLibrary(n->op())) {
      for (const ir::Value* in : n->inputs()) {
        const ir::Value* base = nullptr;
        if (in && viewOf(st, in, &base) && base->producer())
          st.roots[static_cast<size_t>(st.rootOf.at(base))].needsBuffer = true;
      }
      if (n->outputs().size() > 1)
        for (const ir::Value* o : n->outputs()) st.roots[static_cast<size_t>(st.rootOf.at(o))].needsBuffer = true;
    }
    if (n->op() == "prims.scatter" && n->inputs()[0]->producer()) {
      // Reads of the scatter input by the scatter's own kernels are not external reads.
      const ir::Value* a = n->inputs()[0];
      auto it = st.rootOf.find(a);
      if (it != st.rootOf.end()) st.roots[static_cast<size_t>(it->second)].needsBuffer = true;
    }
  }
  // Graph outputs write to output buffers (one per distinct value), the rest to temps.
  std::unordered_map<const ir::Value*, int> outBuffer;
  for (const ir::Value* o : st.graph.outputs()) {
    if (outBuffer.count(o)) continue;
    outBuffer[o] = addBuffer(p, o->name(), o->type().dtype, o->type().numel(), BufferRole::kOutput);
  }
  for (Root& r : st.roots) {
    if (!r.needsBuffer) continue;
    auto it = outBuffer.find(r.value);
    // Temporaries are named after their value ("t" + name for numbered values, which would
    // read like SSA values in kernel text).
    const std::string& vn = r.value->name();
    const std::string name = std::isdigit(static_cast<unsigned char>(vn[0])) ? "t" + vn : vn;
    r.buffer = it != outBuffer.end()
                   ? it->second
                   : addBuffer(p, name, r.value->type().dtype, r.value->type().numel(), BufferRole::kTemp);
  }
  // A scatter whose input is a temporary read by nothing else updates it in place.
  for (Group& g : st.groups) {
    if (g.kind != GroupKind::kScatter) continue;
    const ir::Value* a = g.scatter->inputs()[0];
    auto it = st.rootOf.find(a);
    if (it == st.rootOf.end()) continue;
    Root& in = st.roots[static_cast<size_t>(it->second)];
    int users = 0;
    for (const auto& n : st.graph.nodes())
      for (const ir::Value* x : n->inputs()) users += x == a;
    for (const ir::Value* o : st.graph.outputs()) users += o == a;
    Root& out = st.roots[static_cast<size_t>(st.rootOf.at(g.scatter->outputs()[0]))];
    if (users == 1 && in.buffer >= 0 && p.buffers[static_cast<size_t>(in.buffer)].role == BufferRole::kTemp &&
        p.buffers[static_cast<size_t>(out.buffer)].role == BufferRole::kTemp) {
      out.buffer = in.buffer;
      g.scatterInPlace = true;
    }
  }
  for (size_t i = 0; i < st.graph.inputs().size(); ++i) {
    const ir::Value* in = st.graph.inputs()[i];
    p.inputs.push_back(ProgramInput{in->name(), st.inputBuffer.at(in), in->type()});
  }
  for (const ir::Value* o : st.graph.outputs())
    p.outputs.push_back(
        ProgramOutput{o->name(), st.roots[static_cast<size_t>(st.rootOf.at(o))].buffer, o->type().shape});
  return Status::ok();
}

View contiguousView(int buffer, const Shape& shape) {
  View v;
  v.buffer = buffer;
  v.shape = shape;
  v.strides = ir::contiguousStrides(shape);
  v.offset = 0;
  return v;
}

/// Appends a group's kernel and a step launching it.
void pushLaunch(Program& p, GroupCode c) {
  Step s;
  s.kind = Step::Kind::kLaunch;
  s.launch.kernel = static_cast<int>(p.kernels.size());
  s.launch.args = std::move(c.argBuffers);
  s.origin = std::move(c.origin);
  s.values = std::move(c.values);
  p.kernels.push_back(std::move(*c.kernel));
  p.steps.push_back(std::move(s));
}

Status emitSteps(State& st) {
  Program& p = st.program;
  for (size_t gi = 0; gi < st.groups.size(); ++gi) {
    const Group& g = st.groups[gi];
    if (g.kind == GroupKind::kScatter) {
      ASSIGN_OR_RETURN(auto codes, generateScatter(st, static_cast<int>(gi)));
      for (GroupCode& c : codes) pushLaunch(p, std::move(c));
      continue;
    }
    if (g.kind == GroupKind::kLibrary) {
      const ir::Node& n = *g.library;
      Step s;
      s.kind = Step::Kind::kCall;
      s.call.op = n.op();
      s.call.attrs = n.attrs();
      for (const ir::Value* in : n.inputs()) {
        if (!in) {
          s.call.inputs.push_back(std::nullopt);
          continue;
        }
        const ir::Value* base = nullptr;
        auto view = viewOf(st, in, &base);
        if (!view) return internalError(in->ref() + " is not a view of memory (library operand)");
        view->buffer =
            base->producer() ? st.roots[static_cast<size_t>(st.rootOf.at(base))].buffer : st.inputBuffer.at(base);
        if (view->buffer < 0) return internalError(base->ref() + " has no buffer");
        s.call.inputs.push_back(std::move(view));
      }
      const bool epilogue = g.members.size() > n.outputs().size();
      for (const ir::Value* o : n.outputs()) {
        const Root& r = st.roots[static_cast<size_t>(st.rootOf.at(o))];
        s.call.outputs.push_back(contiguousView(epilogue ? -1 : r.buffer, o->type().shape));
      }
      if (epilogue) {
        ASSIGN_OR_RETURN(GroupCode c, generateGroup(st, static_cast<int>(gi), -1, true));
        s.call.epilogue = static_cast<int>(p.kernels.size());
        s.call.epilogueArgs = c.argBuffers;
        c.kernel->name += "_epilogue";
        p.kernels.push_back(std::move(*c.kernel));
        s.origin = c.origin;
        s.values = c.values;
      } else {
        for (const ir::Value* o : n.outputs()) {
          s.origin += (s.origin.empty() ? "" : ", ") + o->ref();
          s.values.push_back(o->name());
        }
      }
      p.steps.push_back(std::move(s));
      continue;
    }
    ASSIGN_OR_RETURN(GroupCode c, generateGroup(st, static_cast<int>(gi), -1, true));
    pushLaunch(p, std::move(c));
  }
  for (const kernel::Kernel& k : p.kernels) {
    Status v = kernel::verifyKernel(k);
    if (!v.isOk()) return internalError("the scheduler produced an invalid kernel: " + v.message());
  }
  return Status::ok();
}

}  // namespace

int Program::numLaunches() const {
  int n = 0;
  for (const Step& s : steps) n += s.kind == Step::Kind::kLaunch;
  return n;
}
int Program::numCalls() const {
  int n = 0;
  for (const Step& s : steps) n += s.kind == Step::Kind::kCall;
  return n;
}

static StatusOr<Program> scheduleGraph(const ir::Context& ctx, const ir::Graph& prims, const ScheduleOptions& options,
                                       ScheduleStats* stats) {
  State st{ctx, prims, options, {}, {}, {}, {}, {}};
  st.program.name = prims.name();
  std::set<std::string> symbols;
  for (const ir::Value* in : prims.inputs())
    for (const SymExpr& d : in->type().shape)
      for (const auto& s : d.symbols()) symbols.insert(s);
  st.program.symbols.assign(symbols.begin(), symbols.end());
  RETURN_IF_ERROR(chooseRoots(st));
  RETURN_IF_ERROR(formGroups(st));
  RETURN_IF_ERROR(assignBuffers(st));
  RETURN_IF_ERROR(emitSteps(st));
  for (kernel::Kernel& k : st.program.kernels) simplifyKernelIndices(k);
  MemoryPlanStats plan;
  RETURN_IF_ERROR(planMemory(st.program, options.planMemory, ctx.assumptions, &plan));
  if (stats) {
    stats->primNodes = static_cast<int>(prims.nodes().size());
    stats->computeNodes = 0;
    for (const auto& n : prims.nodes()) stats->computeNodes += !isView(n->op());
    stats->kernels = st.program.numLaunches();
    stats->libraryCalls = st.program.numCalls();
    stats->tempBuffers = plan.tempBuffers;
    stats->tempBytesUnplanned = plan.unplannedBytes;
    stats->tempBytesPlanned = plan.plannedBytes;
  }
  return std::move(st.program);
}

StatusOr<Program> schedule(const ir::Context& ctx, const ir::Graph& prims, const ScheduleOptions& options,
                           ScheduleStats* stats) {
  if (options.caps.splitRowReductions <= 0 && options.caps.splitColumnReductions <= 0)
    return scheduleGraph(ctx, prims, options, stats);
  int split = 0;
  ASSIGN_OR_RETURN(ir::Graph g, splitReductions(ctx, prims, options.caps, &split));
  return scheduleGraph(ctx, split ? g : prims, options, stats);
}

}  // namespace plugsdk::sched
