// The op registry: each op has a schema (tensor inputs, attributes with types and
// defaults, outputs) written in ATen's schema language, and a shape/dtype inference rule.
// The registry is an explicit object (see core/ir/context.h), never a global.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/attribute.h"
#include "core/ir/graph.h"
#include "core/ir/tensor_type.h"
#include "core/support/status.h"

namespace plugsdk::ir {

/// Argument types of the schema language (a subset of ATen's).
enum class ArgType {
  kTensor,          ///< Tensor      (an input)
  kOptionalTensor,  ///< Tensor?     (an input that may be absent)
  kTensorList,      ///< Tensor[]    (variadic inputs; must be the only tensor-list argument)
  kInt,             ///< int         (attribute kInt)
  kSymInt,          ///< SymInt      (kInt or kSym)
  kIntList,         ///< int[] / SymInt[] (kIntList)
  kFloat,           ///< float       (kFloat or kInt)
  kFloatList,       ///< float[]
  kScalar,          ///< Scalar      (kInt, kFloat, kBool, or kSym: a symbolic integer)
  kBool,            ///< bool
  kString,          ///< str
  kDType,           ///< ScalarType
};

struct ArgSpec {
  std::string name;
  ArgType type = ArgType::kTensor;
  bool optional = false;                  ///< "T?": may be none
  std::optional<Attribute> defaultValue;  ///< "= value"
  bool symbolic = false;                  ///< SymInt / SymInt[]: entries may be size expressions
  bool isTensor() const {
    return type == ArgType::kTensor || type == ArgType::kOptionalTensor || type == ArgType::kTensorList;
  }
};

struct OpSchema {
  std::string name;              ///< "aten.add.Tensor"
  std::vector<ArgSpec> args;     ///< in declaration order
  int numOutputs = 1;            ///< fixed number of tensor outputs
  bool variadicOutputs = false;  ///< "-> Tensor[]": the count comes from inference
  std::string text;              ///< the schema as written

  std::vector<const ArgSpec*> tensorArgs() const;
  std::vector<const ArgSpec*> attrArgs() const;
  const ArgSpec* findArg(std::string_view name) const;
};

/// Parses "aten.add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor".
StatusOr<OpSchema> parseSchema(std::string_view text);

/// Reads a node's attributes by name: the value given, or the schema default. Getters
/// are only called after the node was checked against its schema, so kinds are right.
class AttrReader {
 public:
  AttrReader(const OpSchema& schema, const AttrMap& attrs) : schema_(schema), attrs_(attrs) {}
  const Attribute& attr(const std::string& name) const;
  int64_t getInt(const std::string& name) const;
  SymExpr getSym(const std::string& name) const;
  double getFloat(const std::string& name) const;  ///< float, int or bool (0/1)
  bool getBool(const std::string& name) const;
  std::string getString(const std::string& name) const;
  DType getDType(const std::string& name) const;
  std::vector<int64_t> getInts(const std::string& name) const;  ///< static list (empty if symbolic)
  /// A 1- or 2-entry int list as (height, width), [] giving `fallback` (2-d pooling
  /// attributes; the op's inference has checked the length).
  std::array<int64_t, 2> getIntPair(const std::string& name, std::array<int64_t, 2> fallback = {1, 1}) const;
  std::vector<SymExpr> getSyms(const std::string& name) const;
  bool isNone(const std::string& name) const { return attr(name).isNone(); }
  const OpSchema& schema() const { return schema_; }
  const AttrMap& attrs() const { return attrs_; }
  /// invalid_argument naming the op.
  Status error(const std::string& message) const { return invalidArgument(schema_.name + ": " + message); }

 private:
  const OpSchema& schema_;
  const AttrMap& attrs_;
};

/// What an inference rule sees: input types (nullptr for an absent optional tensor) and
/// attributes. Inference reports problems through Status, never by asserting.
class InferContext : public AttrReader {
 public:
  InferContext(const OpSchema& schema, const std::vector<const TensorType*>& inputs, const AttrMap& attrs,
               const SymAssumptions& assumptions)
      : AttrReader(schema, attrs), inputs_(inputs), assumptions_(assumptions) {}

  size_t numInputs() const { return inputs_.size(); }
  const TensorType* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  const std::vector<const TensorType*>& inputs() const { return inputs_; }
  const SymAssumptions& assumptions() const { return assumptions_; }

 private:
  const std::vector<const TensorType*>& inputs_;
  const SymAssumptions& assumptions_;
};

using InferFn = std::function<StatusOr<std::vector<TensorType>>(const InferContext&)>;

struct OpDef {
  OpSchema schema;
  InferFn infer;
  std::string category;  ///< "pointwise", "reduction", "shape", "nn", "creation", ... (docs)
  std::string doc;       ///< one line for the op table in docs/
};

class OpRegistry {
 public:
  /// Registers an op from its schema text. Fails on a malformed schema or a duplicate.
  Status add(std::string_view schemaText, InferFn infer, std::string category, std::string doc = "");
  /// Looks an op up by name; "aten.X.default" (FX's name for a default overload) finds
  /// "aten.X", the canonical name.
  const OpDef* find(std::string_view name) const;
  std::vector<const OpDef*> all() const;
  size_t size() const { return ops_.size(); }

 private:
  std::map<std::string, std::unique_ptr<OpDef>, std::less<>> ops_;
};

/// Checks `attrs` against the schema (unknown names, wrong kinds, missing required ones)
/// and returns them completed with defaults. `where` prefixes error messages.
StatusOr<AttrMap> normalizeAttrs(const OpSchema& schema, const AttrMap& attrs, const std::string& where);

/// Runs the op's inference for the given input types and (normalized) attributes.
StatusOr<std::vector<TensorType>> inferTypes(const OpDef& def, const std::vector<const TensorType*>& inputs,
                                             const AttrMap& attrs, const SymAssumptions& assumptions);

}  // namespace plugsdk::ir
