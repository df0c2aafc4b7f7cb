// The guard set of a compiled artifact: what must hold of the inputs for the artifact to be
// reused. One guard kind per property (dtype, rank, each size or the symbolic-size
// constraints, stride class, device, requires_grad); a failed check names the input, the dim
// and the property, which is how cache misses are reported to users.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/guard/signature.h"
#include "core/ir/symbolic.h"
#include "core/ir/tensor_type.h"

namespace plugsdk::guard {

enum class GuardKind { kArity, kDType, kRank, kSize, kSymbol, kStrides, kDevice, kRequiresGrad };
const char* guardKindName(GuardKind k);

/// The guards on one input. A dim is a constant (that exact size), a symbol (any size at
/// least its lower bound, the same wherever the symbol occurs) or an expression of symbols
/// (checked once the symbols are bound).
struct InputGuard {
  std::string name;
  ir::DType dtype = ir::DType::kF32;
  ir::Shape dims;
  StrideClass strides = StrideClass::kContiguous;
  std::string device = "cpu";
  bool requiresGrad = false;
};

struct GuardFailure {
  GuardKind kind = GuardKind::kArity;
  int input = -1;       ///< -1: not about one input
  int dim = -1;         ///< -1: not about one dim
  std::string message;  ///< "input %x dim 0: size 4, guard wants 8"
};

class GuardSet {
 public:
  GuardSet() = default;
  /// `lowerBounds`: the least value of each symbol (what the compile assumed; default 1).
  GuardSet(std::vector<InputGuard> inputs, std::map<std::string, int64_t> lowerBounds = {});

  /// nullopt when every guard holds (and `bindings`, if given, receives the symbols' values);
  /// otherwise the first guard that fails.
  std::optional<GuardFailure> check(const std::vector<TensorSignature>& inputs,
                                    std::map<std::string, int64_t>* bindings = nullptr) const;

  const std::vector<InputGuard>& inputs() const { return inputs_; }
  /// Canonical text, one input per line ("%x: f32[s0, 3] contiguous cpu; s0 >= 2"): part of
  /// the persistent cache's key and of dumps.
  std::string toString() const;

 private:
  std::vector<InputGuard> inputs_;
  std::map<std::string, int64_t> lowerBounds_;
  int64_t lowerBound(const std::string& s) const;
};

}  // namespace plugsdk::guard
