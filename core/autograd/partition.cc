// partitionJoint: classify the joint graph's nodes (forward: no tangent upstream; backward:
// the rest), cut the forward values the backward reads at minimum bytes, then extract the
// two graphs: the forward computes its outputs and the saved values, the backward recomputes
// what was not saved and runs the backward nodes.
#include "core/autograd/partition.h"

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/autograd/min_cut.h"
#include "core/ir/cleanup.h"
#include "core/ir/verifier.h"

namespace plugsdk::autograd {
namespace {

const std::set<std::string> kNeverRecompute = {
    "prims.matmul", "prims.convolution", "prims.sdpa",   "prims.sdpa_backward", "prims.sum",    "prims.prod",
    "prims.amax",   "prims.amin",        "prims.argmax", "prims.argmin",        "prims.scatter"};

int64_t bytesOf(const ir::TensorType& t, const std::map<std::string, int64_t>& hints) {
  int64_t n = ir::dtypeSize(t.dtype);
  for (const ir::SymExpr& d : t.shape) {
    std::map<std::string, int64_t> values;
    for (const std::string& s : d.symbols()) {
      auto h = hints.find(s);
      values[s] = h == hints.end() ? 64 : h->second;
    }
    n *= std::max<int64_t>(0, d.evaluate(values).value_or(64));
  }
  return n;
}

/// Symbols a graph's types and attributes mention.
std::set<std::string> symbolsOf(const ir::Graph& g) {
  std::set<std::string> out;
  auto addExpr = [&](const ir::SymExpr& e) {
    for (const std::string& s : e.symbols()) out.insert(s);
  };
  auto addType = [&](const ir::TensorType& t) {
    for (const ir::SymExpr& d : t.shape) addExpr(d);
  };
  for (const ir::Value* v : g.inputs()) addType(v->type());
  for (const auto& n : g.nodes()) {
    for (const ir::Value* o : n->outputs()) addType(o->type());
    for (const auto& [name, a] : n->attrs()) {
      if (auto s = a.asSym()) addExpr(*s);
      if (auto l = a.asSymList())
        for (const ir::SymExpr& e : *l) addExpr(e);
    }
  }
  return out;
}

/// Symbols bound by a graph's inputs (a dim that is exactly the symbol).
std::set<std::string> boundSymbols(const std::vector<const ir::Value*>& inputs) {
  std::set<std::string> out;
  for (const ir::Value* v : inputs)
    for (const ir::SymExpr& d : v->type().shape)
      if (d.isSymbol()) out.insert(d.toString());
  return out;
}

struct Classified {
  std::unordered_set<const ir::Node*> backward;   // depends on a tangent
  std::unordered_map<const ir::Value*, bool> fw;  // forward values (inputs that are primals, forward outputs)
  std::vector<const ir::Value*> bwReads;          // forward values the backward reads (or returns)
};

Classified classify(const JointGraph& j) {
  Classified c;
  const auto& ins = j.graph.inputs();
  std::unordered_set<const ir::Value*> tangentDep;
  for (size_t i = j.numForwardInputs; i < ins.size(); ++i) tangentDep.insert(ins[i]);
  for (size_t i = 0; i < j.numForwardInputs; ++i) c.fw[ins[i]] = true;
  for (const auto& n : j.graph.nodes()) {
    bool bw = false;
    for (const ir::Value* in : n->inputs()) bw = bw || (in && tangentDep.count(in));
    if (bw) {
      c.backward.insert(n.get());
      for (const ir::Value* o : n->outputs()) tangentDep.insert(o);
    } else {
      for (const ir::Value* o : n->outputs()) c.fw[o] = true;
    }
  }
  std::unordered_set<const ir::Value*> seen;
  auto read = [&](const ir::Value* v) {
    if (v && c.fw.count(v) && seen.insert(v).second) c.bwReads.push_back(v);
  };
  for (const auto& n : j.graph.nodes())
    if (c.backward.count(n.get()))
      for (const ir::Value* in : n->inputs()) read(in);
  for (size_t i = j.numForwardOutputs; i < j.graph.outputs().size(); ++i) read(j.graph.outputs()[i]);
  return c;
}

/// The values to save: the min cut (or every value the backward reads).
std::unordered_set<const ir::Value*> chooseSaved(const JointGraph& j, const Classified& c,
                                                 const PartitionOptions& opts) {
  std::unordered_set<const ir::Value*> saved;
  if (!opts.recompute) {
    saved.insert(c.bwReads.begin(), c.bwReads.end());
    return saved;
  }
  // Nodes the forward's outputs need: only those must run in the forward.
  std::unordered_set<const ir::Node*> requiredFw;
  std::vector<const ir::Value*> work(j.graph.outputs().begin(), j.graph.outputs().begin() + j.numForwardOutputs);
  while (!work.empty()) {
    const ir::Value* v = work.back();
    work.pop_back();
    const ir::Node* p = v->producer();
    if (!p || !requiredFw.insert(p).second) continue;
    for (const ir::Value* in : p->inputs())
      if (in) work.push_back(in);
  }
  std::unordered_map<const ir::Value*, int> id;  // value -> its "in" vertex; "out" is id + 1
  FlowNetwork net(2);
  const int source = 0, sink = 1;
  auto vertex = [&](const ir::Value* v) {
    auto it = id.find(v);
    if (it != id.end()) return it->second;
    const int in = net.addVertex();
    net.addVertex();
    id[v] = in;
    return in;
  };
  for (size_t i = 0; i < j.numForwardInputs; ++i) {
    const int v = vertex(j.graph.inputs()[i]);
    net.addEdge(source, v, FlowNetwork::kInfinite);
    net.addEdge(v, v + 1, 0);  // kept by the caller anyway: free to save
  }
  for (const auto& n : j.graph.nodes()) {
    if (c.backward.count(n.get())) continue;
    const bool pinned = kNeverRecompute.count(n->op()) && requiredFw.count(n.get());
    for (const ir::Value* o : n->outputs()) {
      const int v = vertex(o);
      net.addEdge(v, v + 1, bytesOf(o->type(), opts.symbolHints));
      if (pinned) net.addEdge(source, v, FlowNetwork::kInfinite);
      for (const ir::Value* in : n->inputs())
        if (in) net.addEdge(vertex(in) + 1, v, FlowNetwork::kInfinite);
    }
  }
  for (const ir::Value* v : c.bwReads) net.addEdge(vertex(v) + 1, sink, FlowNetwork::kInfinite);
  net.maxFlow(source, sink);
  const std::vector<bool>& s = net.sourceSide();
  for (const auto& [v, in] : id)
    if (s[static_cast<size_t>(in)] && !s[static_cast<size_t>(in) + 1]) saved.insert(v);
  return saved;
}

}  // namespace

StatusOr<TrainingGraphs> partitionJoint(const ir::Context& ctx, const JointGraph& j, const PartitionOptions& o) {
  const Classified c = classify(j);
  std::unordered_set<const ir::Value*> cut = chooseSaved(j, c, o);
  std::unordered_set<const ir::Value*> primals(j.graph.inputs().begin(), j.graph.inputs().begin() + j.numForwardInputs);

  // Walk back from what the backward reads: a cut value is saved, anything else recomputed.
  std::unordered_set<const ir::Value*> savedSet;
  std::unordered_set<const ir::Node*> recompute;
  std::vector<const ir::Value*> work = c.bwReads;
  std::unordered_set<const ir::Value*> visited;
  while (!work.empty()) {
    const ir::Value* v = work.back();
    work.pop_back();
    if (!visited.insert(v).second) continue;
    if (primals.count(v) || cut.count(v)) {
      savedSet.insert(v);
      continue;
    }
    const ir::Node* p = v->producer();
    if (recompute.insert(p).second)
      for (const ir::Value* in : p->inputs())
        if (in) work.push_back(in);
  }

  TrainingGraphs t;
  t.numForwardOutputs = j.numForwardOutputs;
  t.tangentOf = j.tangentOf;
  t.gradOf = j.gradOf;
  std::vector<const ir::Value*> savedValues;  // in graph order, deterministic
  for (const auto& n : j.graph.nodes())
    for (const ir::Value* v : n->outputs())
      if (savedSet.count(v) && !primals.count(v)) savedValues.push_back(v);

  // Inputs the backward reads: those saved, and one binding each symbol the backward mentions.
  std::set<int> savedInputs;
  for (size_t i = 0; i < j.numForwardInputs; ++i)
    if (savedSet.count(j.graph.inputs()[i])) savedInputs.insert(static_cast<int>(i));

  // Stats.
  for (const ir::Value* v : savedValues) t.stats.savedBytes += bytesOf(v->type(), o.symbolHints);
  t.stats.saved = static_cast<int>(savedValues.size());
  t.stats.recomputed = static_cast<int>(recompute.size());
  for (const ir::Value* v : c.bwReads) {
    if (primals.count(v)) continue;
    t.stats.savedBytesNoRecompute += bytesOf(v->type(), o.symbolHints);
    ++t.stats.savedNoRecompute;
  }

  // The forward: every forward node the outputs and the saved values need.
  {
    ir::Graph fw(j.graph.name() + "_forward");
    std::unordered_map<const ir::Value*, ir::Value*> map;
    for (size_t i = 0; i < j.numForwardInputs; ++i) {
      const ir::Value* in = j.graph.inputs()[i];
      map[in] = fw.addInput(in->name(), in->type());
    }
    for (const auto& n : j.graph.nodes()) {
      if (c.backward.count(n.get())) continue;
      std::vector<ir::Value*> ins;
      for (const ir::Value* in : n->inputs()) ins.push_back(in ? map.at(in) : nullptr);
      std::vector<ir::TensorType> types;
      for (const ir::Value* out : n->outputs()) types.push_back(out->type());
      ir::Node* copy = fw.addNode(n->op(), n->def(), ins, n->attrs(), types, {}, n->loc());
      for (size_t i = 0; i < n->outputs().size(); ++i) map[n->outputs()[i]] = copy->outputs()[i];
    }
    std::vector<ir::Value*> outs;
    std::vector<std::string> names;
    for (size_t i = 0; i < j.numForwardOutputs; ++i) {
      outs.push_back(map.at(j.graph.outputs()[i]));
      names.push_back(j.graph.outputs()[i]->name());
    }
    for (const ir::Value* v : savedValues) {
      outs.push_back(map.at(v));
      names.push_back("saved_" + v->name());
    }
    fw.setOutputs(std::move(outs));
    t.forward = ir::cleanupGraph(fw, names);
  }

  // The backward: recomputed forward nodes and backward nodes, in the joint graph's order.
  if (!j.gradOf.empty()) {
    ir::Graph bw(j.graph.name() + "_backward");
    std::unordered_map<const ir::Value*, ir::Value*> map;
    std::vector<const ir::Value*> bwInputs;
    auto addInput = [&](const ir::Value* v, const std::string& name) {
      map[v] = bw.addInput(name, v->type());
      bwInputs.push_back(v);
    };
    // A symbol the backward mentions must be bound by one of its inputs: save a forward input
    // (free) whose dim is that symbol.
    std::vector<const ir::Value*> candidates;
    for (int i : savedInputs) candidates.push_back(j.graph.inputs()[static_cast<size_t>(i)]);
    candidates.insert(candidates.end(), savedValues.begin(), savedValues.end());
    for (size_t i = j.numForwardInputs; i < j.graph.inputs().size(); ++i) candidates.push_back(j.graph.inputs()[i]);
    std::set<std::string> bound = boundSymbols(candidates);
    for (const std::string& sym : symbolsOf(j.graph)) {
      if (bound.count(sym)) continue;
      for (size_t i = 0; i < j.numForwardInputs; ++i) {
        std::set<std::string> b = boundSymbols({j.graph.inputs()[i]});
        if (!b.count(sym)) continue;
        savedInputs.insert(static_cast<int>(i));
        bound.insert(b.begin(), b.end());
        break;
      }
    }
    for (int i : savedInputs) {
      const ir::Value* in = j.graph.inputs()[static_cast<size_t>(i)];
      addInput(in, in->name());
    }
    for (const ir::Value* v : savedValues) addInput(v, "saved_" + v->name());
    for (size_t i = j.numForwardInputs; i < j.graph.inputs().size(); ++i)
      addInput(j.graph.inputs()[i], j.graph.inputs()[i]->name());
    for (const auto& n : j.graph.nodes()) {
      if (!c.backward.count(n.get()) && !recompute.count(n.get())) continue;
      std::vector<ir::Value*> ins;
      for (const ir::Value* in : n->inputs()) {
        if (!in) {
          ins.push_back(nullptr);
          continue;
        }
        auto it = map.find(in);
        if (it == map.end())
          return internalError("partitioning @" + j.graph.name() + ": " + n->describe() + " reads %" + in->name() +
                               ", which the backward neither saved nor recomputed");
        ins.push_back(it->second);
      }
      std::vector<ir::TensorType> types;
      for (const ir::Value* out : n->outputs()) types.push_back(out->type());
      ir::Node* copy = bw.addNode(n->op(), n->def(), ins, n->attrs(), types, {}, n->loc());
      for (size_t i = 0; i < n->outputs().size(); ++i) map[n->outputs()[i]] = copy->outputs()[i];
    }
    std::vector<ir::Value*> outs;
    std::vector<std::string> names;
    for (size_t i = j.numForwardOutputs; i < j.graph.outputs().size(); ++i) {
      const ir::Value* g = j.graph.outputs()[i];
      auto it = map.find(g);
      if (it == map.end())
        return internalError("partitioning @" + j.graph.name() + ": gradient %" + g->name() + " lost");
      outs.push_back(it->second);
      names.push_back(g->name());
    }
    bw.setOutputs(std::move(outs));
    t.backward = ir::cleanupGraph(bw, names);
    // Which tangents reach each gradient.
    const size_t firstTangent = t.backward.inputs().size() - j.tangentOf.size();
    std::unordered_map<const ir::Value*, std::set<int>> reach;
    for (size_t i = firstTangent; i < t.backward.inputs().size(); ++i)
      reach[t.backward.inputs()[i]].insert(static_cast<int>(i - firstTangent));
    for (const auto& n : t.backward.nodes()) {
      std::set<int> r;
      for (const ir::Value* in : n->inputs())
        if (in && reach.count(in)) r.insert(reach[in].begin(), reach[in].end());
      if (!r.empty())
        for (const ir::Value* out : n->outputs()) reach[out] = r;
    }
    for (const ir::Value* g : t.backward.outputs()) {
      auto it = reach.find(g);
      t.gradTangents.emplace_back();
      if (it != reach.end()) t.gradTangents.back().assign(it->second.begin(), it->second.end());
    }
    std::vector<const ir::Value*> bwIns(t.backward.inputs().begin(), t.backward.inputs().end());
    std::set<std::string> missing;
    const std::set<std::string> have = boundSymbols(bwIns);
    for (const std::string& sym : symbolsOf(t.backward))
      if (!have.count(sym)) missing.insert(sym);
    if (!missing.empty())
      return unimplemented("partitioning @" + j.graph.name() + ": the backward uses size symbol " + *missing.begin() +
                           ", which no forward input has as a dim");
  }
  for (int i : savedInputs)
    t.stats.savedInputBytes += bytesOf(j.graph.inputs()[static_cast<size_t>(i)]->type(), o.symbolHints);
  t.savedInputs.assign(savedInputs.begin(), savedInputs.end());
  t.numSavedValues = savedValues.size();
  for (const ir::Graph* g : {&t.forward, &t.backward}) {
    if (g == &t.backward && j.gradOf.empty()) continue;
    Status s = ir::verifyGraph(ctx, *g);
    if (!s.isOk())
      return internalError("partitioning @" + j.graph.name() + ": " + g->name() + " does not verify: " + s.message());
  }
  return t;
}

}  // namespace plugsdk::autograd
