// Graph verification.
#include "core/ir/verifier.h"

#include <unordered_set>

namespace plugsdk::ir {

namespace {

Status checkArity(const OpSchema& s, const std::vector<Value*>& inputs, const std::string& where) {
  auto targs = s.tensorArgs();
  size_t fixed = 0;
  bool variadic = false;
  for (const ArgSpec* a : targs) {
    if (a->type == ArgType::kTensorList)
      variadic = true;
    else
      ++fixed;
  }
  if (variadic ? inputs.size() < fixed : inputs.size() != fixed)
    return invalidArgument(where + ": " + s.name + " takes " + (variadic ? "at least " : "") + std::to_string(fixed) +
                           " tensor input" + (fixed == 1 ? "" : "s") + ", got " + std::to_string(inputs.size()) +
                           " (schema: " + s.text + ")");
  for (size_t i = 0; i < targs.size() && i < inputs.size(); ++i) {
    if (targs[i]->type == ArgType::kTensorList) break;
    if (!inputs[i] && targs[i]->type != ArgType::kOptionalTensor)
      return invalidArgument(where + ": input '" + targs[i]->name + "' of " + s.name + " may not be none");
  }
  return Status::ok();
}

}  // namespace

StatusOr<std::vector<TensorType>> checkAndInfer(const Context& ctx, const OpDef& def, const std::vector<Value*>& inputs,
                                                AttrMap& attrs, const std::string& where) {
  RETURN_IF_ERROR(checkArity(def.schema, inputs, where));
  ASSIGN_OR_RETURN(attrs, normalizeAttrs(def.schema, attrs, where));
  std::vector<const TensorType*> types;
  for (Value* v : inputs) types.push_back(v ? &v->type() : nullptr);
  auto result = inferTypes(def, types, attrs, ctx.assumptions);
  if (!result.isOk()) return result.status().withContext(where);
  if (!def.schema.variadicOutputs && result->size() != static_cast<size_t>(def.schema.numOutputs))
    return internalError(where + ": inference for " + def.schema.name + " returned " + std::to_string(result->size()) +
                         " types, schema says " + std::to_string(def.schema.numOutputs));
  return result;
}

Status verifyGraph(const Context& ctx, const Graph& graph) {
  std::unordered_set<const Value*> defined;
  std::unordered_set<std::string> names;
  auto define = [&](const Value* v, const std::string& where) -> Status {
    if (!names.insert(v->name()).second) return invalidArgument(where + ": value " + v->ref() + " is defined twice");
    defined.insert(v);
    return Status::ok();
  };
  for (const Value* v : graph.inputs()) {
    RETURN_IF_ERROR(define(v, "graph input"));
    for (const auto& d : v->type().shape)
      if (auto c = d.constant(); c && *c < 0)
        return invalidArgument("graph input " + v->ref() + " has a negative size " + v->type().toString());
  }
  for (const auto& n : graph.nodes()) {
    std::string where = n->describe();
    const OpDef* def = n->def() ? n->def() : ctx.ops.find(n->op());
    if (!def) return notFound(where + ": unknown op '" + n->op() + "'");
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const Value* in = n->inputs()[i];
      if (in && !defined.count(in))
        return invalidArgument(where + ": input " + std::to_string(i) + " (" + in->ref() +
                               ") is used before it is defined (not in SSA order, or a cycle)");
    }
    AttrMap attrs = n->attrs();
    ASSIGN_OR_RETURN(auto types, checkAndInfer(ctx, *def, n->inputs(), attrs, where));
    if (attrs != n->attrs()) return invalidArgument(where + ": attributes are not normalized (missing defaults)");
    if (types.size() != n->outputs().size())
      return invalidArgument(where + ": declares " + std::to_string(n->outputs().size()) +
                             " outputs, the op produces " + std::to_string(types.size()));
    for (size_t i = 0; i < types.size(); ++i) {
      const Value* out = n->outputs()[i];
      const TensorType& declared = out->type();
      bool same = declared.dtype == types[i].dtype && declared.rank() == types[i].rank();
      for (size_t d = 0; same && d < types[i].shape.size(); ++d) {
        auto eq = proveEQ(declared.shape[d], types[i].shape[d], ctx.assumptions);
        same = eq && *eq;
      }
      if (!same)
        return invalidArgument(where + ": output " + out->ref() + " is declared " + declared.toString() +
                               " but the op infers " + types[i].toString());
      RETURN_IF_ERROR(define(out, where));
    }
  }
  for (const Value* v : graph.outputs())
    if (!defined.count(v)) return invalidArgument("graph output " + v->ref() + " is not defined in the graph");
  if (graph.outputs().empty()) return invalidArgument("graph @" + graph.name() + " returns nothing");
  return Status::ok();
}

}  // namespace plugsdk::ir
