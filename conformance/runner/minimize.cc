// The minimizer (see minimize.h). Each pass proposes edits of the current graph, from the
// ones that drop the most to the smallest; the first candidate that verifies, is smaller and
// still fails replaces the current graph and the passes start again from the first. Smaller
// means, in order: fewer nodes, fewer outputs, fewer input elements, fewer inputs, so every
// accepted step makes progress and the loop ends.
#include "conformance/runner/minimize.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/ir/verifier.h"

namespace plugsdk::conformance {
namespace {

using Measure = std::tuple<size_t, size_t, int64_t, size_t>;

int64_t staticNumel(const ir::TensorType& t) {
  int64_t n = 1;
  if (auto s = t.staticShape())
    for (int64_t d : *s) n *= d;
  return n;
}

Measure measure(const ir::Graph& g) {
  int64_t elements = 0;
  for (const ir::Value* v : g.inputs()) elements += staticNumel(v->type());
  return {g.nodes().size(), g.outputs().size(), elements, g.inputs().size()};
}

std::string nodes(size_t n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

const ir::Value* resolve(const GraphEdit& e, const ir::Value* v) {
  for (size_t hops = 0; hops <= e.replace.size(); ++hops) {
    auto it = std::find_if(e.replace.begin(), e.replace.end(), [&](const auto& r) { return r.first == v; });
    if (it == e.replace.end()) return v;
    v = it->second;
  }
  return v;  // a cycle of replacements: leave it to the verifier
}

class Minimizer {
 public:
  Minimizer(const ir::Context& ctx, ir::Graph g, const StillFails& stillFails, const MinimizeProgress& progress)
      : ctx_(ctx), cur_(std::move(g)), stillFails_(stillFails), progress_(progress) {}

  ir::Graph run() {
    say(nodes(cur_.nodes().size()));
    while (unusedInputsPass() || prefixPass() || outputsPass() || suffixPass() || cutPass() || bypassPass() ||
           sizePass()) {
    }
    say("done: " + nodes(cur_.nodes().size()) + ", " + std::to_string(tested_) + " candidates tried");
    return std::move(cur_);
  }

 private:
  void say(const std::string& s) const {
    if (progress_) progress_("minimize: " + s);
  }

  /// Builds the candidate; it replaces the current graph when it verifies, is smaller and
  /// still fails. `e` refers to the current graph's values, so callers return right after a
  /// success (the old values are gone).
  bool attempt(const GraphEdit& e, const std::string& what) {
    auto c = rebuildGraph(ctx_, cur_, e);
    if (!c.isOk() || c->nodes().empty() || !(measure(*c) < measure(cur_))) return false;
    ++tested_;
    if (!stillFails_(*c)) return false;
    cur_ = std::move(*c);
    say(nodes(cur_.nodes().size()) + " left (" + what + ")");
    return true;
  }

  /// True when v is read by a node at index >= from, or is a graph output.
  bool liveAfter(const ir::Value* v, size_t from) const {
    const auto& outs = cur_.outputs();
    if (std::find(outs.begin(), outs.end(), v) != outs.end()) return true;
    for (size_t i = from; i < cur_.nodes().size(); ++i)
      for (const ir::Value* in : cur_.nodes()[i]->inputs())
        if (in == v) return true;
    return false;
  }

  /// Nodes [0, k]: the values they make that are still needed become the outputs.
  GraphEdit prefix(size_t k) const {
    GraphEdit e;
    for (size_t i = 0; i <= k; ++i)
      for (const ir::Value* o : cur_.nodes()[i]->outputs())
        if (liveAfter(o, k + 1)) e.outputs.push_back(o);
    if (e.outputs.empty()) e.outputs.push_back(cur_.nodes()[k]->output(0));
    return e;
  }

  /// Nodes [k, end): the values from before k that they (or the outputs) read become inputs.
  GraphEdit suffix(size_t k) const {
    GraphEdit e;
    for (size_t i = 0; i < k; ++i)
      for (const ir::Value* o : cur_.nodes()[i]->outputs())
        if (liveAfter(o, k)) e.asInputs.push_back(o);
    return e;
  }

  bool unusedInputsPass() { return attempt({}, "removed unused inputs"); }

  bool prefixPass() {
    const size_t n = cur_.nodes().size();
    for (size_t lo = 0, hi = n - 1; lo < hi;) {
      const size_t mid = (lo + hi) / 2;
      if (attempt(prefix(mid), "kept the first " + std::to_string(mid + 1) + " nodes")) return true;
      lo = mid + 1;
    }
    return false;
  }

  bool outputsPass() {
    const auto outs = cur_.outputs();
    if (outs.size() < 2) return false;
    for (const ir::Value* o : outs)
      if (attempt({{o}, {}, {}, {}}, "only output " + o->ref())) return true;
    for (size_t i = 0; i < outs.size(); ++i) {
      GraphEdit e;
      for (size_t j = 0; j < outs.size(); ++j)
        if (j != i) e.outputs.push_back(outs[j]);
      if (attempt(e, "dropped output " + outs[i]->ref())) return true;
    }
    return false;
  }

  bool suffixPass() {
    const size_t n = cur_.nodes().size();
    for (size_t lo = 0, hi = n - 1; lo < hi;) {
      const size_t mid = (lo + hi + 1) / 2;
      if (attempt(suffix(mid), "dropped the first " + std::to_string(mid) + " nodes")) return true;
      hi = mid - 1;
    }
    return false;
  }

  bool cutPass() {
    for (size_t i = cur_.nodes().size(); i-- > 0;)
      for (const ir::Value* in : cur_.nodes()[i]->inputs())
        if (in && in->producer() && attempt({{}, {in}, {}, {}}, "cut at " + in->ref())) return true;
    return false;
  }

  bool bypassPass() {
    for (size_t i = cur_.nodes().size(); i-- > 0;) {
      const ir::Node& n = *cur_.nodes()[i];
      for (const ir::Value* o : n.outputs())
        for (const ir::Value* in : n.inputs())
          if (in && in->type() == o->type() &&
              attempt({{}, {}, {{o, in}}, {}}, "bypassed " + n.op() + " defining " + o->ref()))
            return true;
    }
    return false;
  }

  /// Every input dim equal to `from` (or only dim `dim` of input `only`) becomes `to`.
  GraphEdit resized(int64_t from, int64_t to, const ir::Value* only = nullptr, size_t dim = 0) const {
    GraphEdit e;
    for (const ir::Value* v : cur_.inputs()) {
      if (only && v != only) continue;
      ir::TensorType t = v->type();
      bool changed = false;
      for (size_t d = 0; d < t.shape.size(); ++d) {
        auto c = t.shape[d].constant();
        if (c && *c == from && (!only || d == dim)) t.shape[d] = ir::SymExpr(to), changed = true;
      }
      if (!changed) continue;
      t.strides.reset();
      e.inputTypes.push_back({v, t});
    }
    return e;
  }

  bool sizePass() {
    std::set<int64_t, std::greater<>> sizes;
    for (const ir::Value* v : cur_.inputs())
      for (const auto& d : v->type().shape)
        if (auto c = d.constant(); c && *c > 1) sizes.insert(*c);
    for (int64_t s : sizes)
      for (int64_t to : {int64_t{1}, s / 2})
        if (to < s && attempt(resized(s, to), "every size " + std::to_string(s) + " -> " + std::to_string(to)))
          return true;
    for (const ir::Value* v : cur_.inputs())
      for (size_t d = 0; d < v->type().shape.size(); ++d) {
        auto c = v->type().shape[d].constant();
        if (!c || *c <= 1) continue;
        for (int64_t to : {int64_t{1}, *c / 2})
          if (to < *c &&
              attempt(resized(*c, to, v, d), v->ref() + " dim " + std::to_string(d) + " -> " + std::to_string(to)))
            return true;
      }
    return false;
  }

  const ir::Context& ctx_;
  ir::Graph cur_;
  const StillFails& stillFails_;
  const MinimizeProgress& progress_;
  size_t tested_ = 0;
};

}  // namespace

StatusOr<ir::Graph> rebuildGraph(const ir::Context& ctx, const ir::Graph& g, const GraphEdit& edit) {
  const std::set<const ir::Value*> cut(edit.asInputs.begin(), edit.asInputs.end());
  std::vector<const ir::Value*> outs;
  for (const ir::Value* o :
       edit.outputs.empty() ? std::vector<const ir::Value*>(g.outputs().begin(), g.outputs().end()) : edit.outputs) {
    const ir::Value* r = resolve(edit, o);
    if (std::find(outs.begin(), outs.end(), r) == outs.end()) outs.push_back(r);
  }
  // what the outputs need: nodes, and the values that are (or become) inputs
  std::set<const ir::Node*> nodes;
  std::set<const ir::Value*> inputs;
  std::vector<const ir::Value*> work = outs;
  while (!work.empty()) {
    const ir::Value* v = work.back();
    work.pop_back();
    if (!v->producer() || cut.count(v)) {
      inputs.insert(v);
      continue;
    }
    if (!nodes.insert(v->producer()).second) continue;
    for (const ir::Value* in : v->producer()->inputs())
      if (in) work.push_back(resolve(edit, in));
  }
  ir::Graph out(g.name());
  std::map<const ir::Value*, ir::Value*> map;
  auto typeOf = [&](const ir::Value* v) {
    for (const auto& [w, t] : edit.inputTypes)
      if (w == v) return t;
    ir::TensorType t = v->type();
    if (v->producer()) t.strides.reset();  // values inside a graph are logically contiguous
    return t;
  };
  for (const ir::Value* v : g.inputs())
    if (inputs.count(v) || edit.keepInputs) map[v] = out.addInput(v->name(), typeOf(v));
  for (const auto& n : g.nodes())
    for (const ir::Value* o : n->outputs())
      if (inputs.count(o)) map[o] = out.addInput(o->name(), typeOf(o));
  for (const auto& n : g.nodes()) {
    if (!nodes.count(n.get())) continue;
    std::vector<ir::Value*> ins;
    for (const ir::Value* in : n->inputs()) ins.push_back(in ? map.at(resolve(edit, in)) : nullptr);
    const ir::OpDef* def = n->def() ? n->def() : ctx.ops.find(n->op());
    if (!def) return invalidArgument("unknown op " + n->op());
    ir::AttrMap attrs = n->attrs();
    ASSIGN_OR_RETURN(std::vector<ir::TensorType> types, ir::checkAndInfer(ctx, *def, ins, attrs, n->describe()));
    std::vector<std::string> names;
    for (const ir::Value* o : n->outputs()) names.push_back(o->name());
    ir::Node* m = out.addNode(n->op(), def, ins, attrs, types, names);
    for (size_t i = 0; i < n->outputs().size(); ++i) map[n->outputs()[i]] = m->outputs()[i];
  }
  std::vector<ir::Value*> newOuts;
  for (const ir::Value* o : outs) newOuts.push_back(map.at(o));
  out.setOutputs(std::move(newOuts));
  RETURN_IF_ERROR(ir::verifyGraph(ctx, out));
  return out;
}

StatusOr<ir::Graph> copyGraph(const ir::Context& ctx, const ir::Graph& g) { return rebuildGraph(ctx, g, {}); }

StatusOr<ir::Graph> minimizeGraph(const ir::Context& ctx, const ir::Graph& g, const StillFails& stillFails,
                                  const MinimizeProgress& progress) {
  GraphEdit keep;
  keep.keepInputs = true;
  ASSIGN_OR_RETURN(ir::Graph start, rebuildGraph(ctx, g, keep));
  if (start.nodes().empty()) return invalidArgument("the graph to minimize has no nodes");
  if (!stillFails(start)) return failedPrecondition("the graph to minimize does not fail");
  return Minimizer(ctx, std::move(start), stillFails, progress).run();
}

}  // namespace plugsdk::conformance
