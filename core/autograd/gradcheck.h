// Finite-difference gradient checks on the reference executor (float64): the gradients a
// joint graph computes against central differences of sum_j <tangent_j, output_j(x)>. Used by
// the VJP rule tests, the joint-graph tests and `plugsdk gradcheck`.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/autograd/joint.h"
#include "core/exec/host_tensor.h"
#include "core/ir/context.h"

namespace plugsdk::autograd {

struct GradcheckOptions {
  double lo = -2.0, hi = 2.0;  ///< floating inputs are uniform in [lo, hi)
  /// Fixed values for some inputs (by index): integer index tensors, or values placed away
  /// from a kink. Other inputs are random.
  std::map<size_t, std::vector<double>> fixed;
  double step = 1e-6;  ///< relative finite-difference step (times max(1, |x|))
  double atol = 1e-6, rtol = 1e-5;
  uint64_t seed = 1;
  /// Elements checked per input (evenly spaced; every element when the input is smaller).
  int64_t maxElements = 64;
  /// Inputs not differentiated (no gradient asked for, none checked).
  std::set<size_t> noGrad;
  const VjpTable* table = nullptr;  ///< the rules under test (null: makeVjpTable())
};

struct GradcheckResult {
  bool ok = true;
  std::string failure;  ///< the first mismatch: input, element, analytic and numeric values
  double maxAbsError = 0;
  int64_t checked = 0;  ///< elements compared
};

/// Checks every floating input of `prims` (all marked as requiring grad). The graph's inputs
/// must have constant shapes. Errors are failures to build or run the graphs.
StatusOr<GradcheckResult> gradcheck(const std::shared_ptr<const ir::Context>& ctx, const ir::Graph& prims,
                                    const GradcheckOptions& options = {});

}  // namespace plugsdk::autograd
