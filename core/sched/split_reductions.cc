// splitReductions: the two-stage rewrite of reductions that keep few rows (split_reductions.h).
#include "core/sched/split_reductions.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "core/ir/verifier.h"

namespace plugsdk::sched {
namespace {

bool splittable(const std::string& op) { return op == "prims.sum" || op == "prims.amax" || op == "prims.amin"; }

/// Appends `op` to `g` with inferred types; its one result is named `name` (fresh when empty).
StatusOr<ir::Value*> append(const ir::Context& ctx, ir::Graph& g, const std::string& op, std::vector<ir::Value*> ins,
                            ir::AttrMap attrs, const std::string& name, const ir::Node& origin) {
  const ir::OpDef* def = ctx.ops.find(op);
  if (def == nullptr) return internalError("splitting reductions: no op " + op);
  ASSIGN_OR_RETURN(std::vector<ir::TensorType> types,
                   ir::checkAndInfer(ctx, *def, ins, attrs, origin.describe() + " (split in two stages)"));
  ir::Node* n =
      g.addNode(op, def, std::move(ins), std::move(attrs), types, {name.empty() ? g.freshName() : name}, origin.loc());
  return n->output();
}

}  // namespace

ReductionSplit chooseReductionSplit(const std::vector<int64_t>& shape, const std::vector<int64_t>& dims,
                                    const FusionCaps& caps, bool canPad) {
  ReductionSplit none;
  if (dims.empty() || shape.empty()) return none;
  int64_t kept = 1, reduced = 1;
  std::vector<bool> isReduced(shape.size(), false);
  for (int64_t d : dims) isReduced[static_cast<size_t>(d)] = true;
  for (size_t d = 0; d < shape.size(); ++d) (isReduced[d] ? reduced : kept) *= shape[d];
  const bool column = !isReduced.back();
  const int64_t want = column ? caps.splitColumnReductions : caps.splitRowReductions;
  if (want <= 0 || kept >= want || reduced < 2 * kMinSplitPartial) return none;
  const int64_t target = std::min((want + kept - 1) / kept, reduced / kMinSplitPartial);
  if (target < 2) return none;
  ReductionSplit s;
  for (int64_t d : dims) {
    const int64_t e = shape[static_cast<size_t>(d)];
    if (s.slices * e <= target) {
      s.slices *= e;
      ++s.wholeDims;
      continue;
    }
    const int64_t want = target / s.slices;
    for (int64_t f = want; f >= 2; --f)
      if (e % f == 0) {
        s.factor = f;
        break;
      }
    // No divisor near the wanted factor: pad the extent to a multiple of it (each slice
    // still reducing at least kMinSplitPartial), when that adds little.
    if (canPad && s.factor * 2 <= want) {
      for (int64_t f = want; f > s.factor && f >= 2; --f) {
        const int64_t padded = (e + f - 1) / f * f;
        if (padded / f < kMinSplitPartial || (padded - e) * kMostSplitPadding > e) continue;
        s.factor = f;
        s.paddedExtent = padded;
        break;
      }
    }
    s.slices *= s.factor;
    break;
  }
  return s.slices >= 2 ? s : none;
}

StatusOr<ir::Graph> splitReductions(const ir::Context& ctx, const ir::Graph& prims, const FusionCaps& caps,
                                    int* split) {
  if (split) *split = 0;
  ir::Graph out(prims.name());
  for (const ir::Value* v : prims.inputs()) out.reserveName(v->name());
  for (const auto& n : prims.nodes())
    for (const ir::Value* v : n->outputs()) out.reserveName(v->name());
  std::unordered_map<const ir::Value*, ir::Value*> map;
  for (const ir::Value* v : prims.inputs()) map[v] = out.addInput(v->name(), v->type());
  for (const auto& n : prims.nodes()) {
    std::vector<ir::Value*> ins;
    for (const ir::Value* v : n->inputs()) ins.push_back(v ? map.at(v) : nullptr);
    // The reduction's static shape and dims, when it is one this pass splits.
    std::vector<int64_t> shape, dims;
    ReductionSplit s;
    if (splittable(n->op()) && ins.size() == 1 && n->outputs().size() == 1) {
      bool constant = true;
      for (const ir::SymExpr& e : ins[0]->type().shape) {
        std::optional<int64_t> c = e.constant();
        constant = constant && c.has_value();
        shape.push_back(c.value_or(0));
      }
      const ir::Attribute* a = n->attr("dims");
      std::optional<std::vector<int64_t>> d = a ? a->asIntList() : std::nullopt;
      if (constant && d && std::all_of(d->begin(), d->end(), [&](int64_t x) {
            return x >= 0 && x < static_cast<int64_t>(shape.size());
          })) {
        dims = *d;
        std::sort(dims.begin(), dims.end());
        dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
        const ir::DType t = ins[0]->type().dtype;
        s = chooseReductionSplit(shape, dims, caps, n->op() == "prims.sum" || ir::isFloating(t));
      }
    }
    if (s.slices < 2) {
      std::vector<std::string> names;
      for (const ir::Value* o : n->outputs()) names.push_back(o->name());
      ir::AttrMap attrs = n->attrs();
      const ir::OpDef* def = n->def() ? n->def() : ctx.ops.find(n->op());
      if (def == nullptr) return invalidArgument(n->describe() + ": unknown op " + n->op());
      ASSIGN_OR_RETURN(std::vector<ir::TensorType> types, ir::checkAndInfer(ctx, *def, ins, attrs, n->describe()));
      ir::Node* m = out.addNode(n->op(), def, std::move(ins), std::move(attrs), types, names, n->loc());
      for (size_t i = 0; i < names.size(); ++i) map[n->outputs()[i]] = m->output(static_cast<int>(i));
      continue;
    }
    // x' = reshape(x): the split dim becomes [factor, extent / factor]; stage one reduces every
    // reduced dim but the slice dims, stage two the slice dims (numbered in the partial).
    ir::Value* x = ins[0];
    const ir::DType dtype = x->type().dtype;
    const bool widen = n->op() == "prims.sum" && (dtype == ir::DType::kF16 || dtype == ir::DType::kBF16);
    if (widen) {
      ASSIGN_OR_RETURN(x, append(ctx, out, "prims.convert_element_type", {x},
                                 {{"dtype", ir::Attribute::fromDType(ir::DType::kF32)}}, "", *n));
    }
    if (s.paddedExtent > 0) {  // the split dim padded with the reduction's identity
      const int64_t d = dims[s.wholeDims];
      std::vector<ir::SymExpr> low(shape.size(), ir::SymExpr(0)), high(shape.size(), ir::SymExpr(0));
      high[static_cast<size_t>(d)] = ir::SymExpr(s.paddedExtent - shape[static_cast<size_t>(d)]);
      const double inf = std::numeric_limits<double>::infinity();
      const double identity = n->op() == "prims.sum" ? 0.0 : n->op() == "prims.amax" ? -inf : inf;
      const ir::Attribute value =
          n->op() == "prims.sum" && !ir::isFloating(x->type().dtype)
              ? (x->type().dtype == ir::DType::kBool ? ir::Attribute::fromBool(false) : ir::Attribute::fromInt(0))
              : ir::Attribute::fromFloat(identity);
      ASSIGN_OR_RETURN(x, append(ctx, out, "prims.pad", {x},
                                 {{"low", ir::Attribute::fromInts(low)},
                                  {"high", ir::Attribute::fromInts(high)},
                                  {"padding_value", value}},
                                 "", *n));
      shape[static_cast<size_t>(d)] = s.paddedExtent;
    }
    std::vector<int64_t> newShape, first, second;
    int64_t kept = 0;  // dims of the partial so far
    for (size_t d = 0; d < shape.size(); ++d) {
      const auto at = std::find(dims.begin(), dims.end(), static_cast<int64_t>(d));
      const size_t rank = at == dims.end() ? dims.size() : static_cast<size_t>(at - dims.begin());
      if (at == dims.end()) {  // kept by the reduction
        newShape.push_back(shape[d]);
        ++kept;
      } else if (rank < s.wholeDims) {  // a slice dim, whole
        newShape.push_back(shape[d]);
        second.push_back(kept++);
      } else if (rank == s.wholeDims && s.factor > 1) {  // split: slices outside, the rest reduced
        newShape.push_back(s.factor);
        second.push_back(kept++);
        first.push_back(static_cast<int64_t>(newShape.size()));
        newShape.push_back(shape[d] / s.factor);
      } else {
        first.push_back(static_cast<int64_t>(newShape.size()));
        newShape.push_back(shape[d]);
      }
    }
    ir::Value* r = x;
    if (newShape != shape) {
      ASSIGN_OR_RETURN(r,
                       append(ctx, out, "prims.reshape", {x}, {{"shape", ir::Attribute::fromInts(newShape)}}, "", *n));
    }
    ASSIGN_OR_RETURN(ir::Value * partial,
                     append(ctx, out, n->op(), {r}, {{"dims", ir::Attribute::fromInts(first)}}, "", *n));
    const std::string name = n->output()->name();
    ASSIGN_OR_RETURN(ir::Value * y, append(ctx, out, n->op(), {partial}, {{"dims", ir::Attribute::fromInts(second)}},
                                           widen ? "" : name, *n));
    if (widen) {
      ASSIGN_OR_RETURN(y, append(ctx, out, "prims.convert_element_type", {y},
                                 {{"dtype", ir::Attribute::fromDType(dtype)}}, name, *n));
    }
    map[n->output()] = y;
    if (split) ++*split;
  }
  std::vector<ir::Value*> outs;
  for (const ir::Value* v : prims.outputs()) outs.push_back(map.at(v));
  out.setOutputs(std::move(outs));
  RETURN_IF_ERROR(ir::verifyGraph(ctx, out));
  return out;
}

}  // namespace plugsdk::sched
