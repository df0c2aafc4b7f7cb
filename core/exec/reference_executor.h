// The reference executor: runs any graph on the host, floating types in float64 and
// integers exactly. It is the oracle for every other test and for the conformance suite.
// Kernels live in a table keyed by op name (core/exec/kernels_*.cc), one entry per op.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/exec/host_tensor.h"
#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/support/status.h"

namespace plugsdk::exec {

/// What a reference kernel sees: concrete inputs, attributes, and the concrete output
/// types the graph's inference promised (the executor checks the kernel kept the promise).
class RefKernelContext : public ir::AttrReader {
 public:
  RefKernelContext(const ir::OpSchema& schema, const ir::AttrMap& attrs, const std::vector<const HostTensor*>& inputs,
                   const std::vector<DType>& outDTypes, const std::vector<std::vector<int64_t>>& outShapes,
                   const std::map<std::string, int64_t>& symbols)
      : AttrReader(schema, attrs), inputs_(inputs), outDTypes_(outDTypes), outShapes_(outShapes), symbols_(symbols) {}

  size_t numInputs() const { return inputs_.size(); }
  /// Input i, or nullptr for an absent optional tensor.
  const HostTensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  const std::vector<const HostTensor*>& inputs() const { return inputs_; }
  size_t numOutputs() const { return outShapes_.size(); }
  DType outDType(size_t i = 0) const { return outDTypes_.at(i); }
  const std::vector<int64_t>& outShape(size_t i = 0) const { return outShapes_.at(i); }
  /// A fresh zero-filled output tensor of the promised type.
  HostTensor makeOutput(size_t i = 0) const { return HostTensor(outDType(i), outShape(i)); }
  /// An int list attribute with size symbols evaluated.
  StatusOr<std::vector<int64_t>> evalInts(const std::string& name) const;
  StatusOr<int64_t> evalInt(const std::string& name) const;
  const std::map<std::string, int64_t>& symbols() const { return symbols_; }

 private:
  const std::vector<const HostTensor*>& inputs_;
  const std::vector<DType>& outDTypes_;
  const std::vector<std::vector<int64_t>>& outShapes_;
  const std::map<std::string, int64_t>& symbols_;
};

using RefKernel = std::function<StatusOr<std::vector<HostTensor>>(const RefKernelContext&)>;

class RefKernelTable {
 public:
  void add(const std::string& op, RefKernel kernel) { kernels_[op] = std::move(kernel); }
  const RefKernel* find(const std::string& op) const {
    auto it = kernels_.find(op);
    return it == kernels_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> names() const;

 private:
  std::map<std::string, RefKernel> kernels_;
};

/// A table with every reference kernel of core/exec registered.
RefKernelTable makeReferenceKernels();

struct RunStats {
  double seconds = 0;
  int64_t nodesRun = 0;
  int64_t peakLiveBytes = 0;  ///< at float64/int64 storage size
};

class ReferenceExecutor {
 public:
  explicit ReferenceExecutor(std::shared_ptr<const ir::Context> ctx);
  /// Runs the graph. Input shapes bind the size symbols (a mismatch is an error naming the
  /// input and dim); values are dropped after their last use.
  StatusOr<std::vector<HostTensor>> run(const ir::Graph& graph, const std::vector<HostTensor>& inputs,
                                        RunStats* stats = nullptr) const;
  const ir::Context& context() const { return *ctx_; }

 private:
  std::shared_ptr<const ir::Context> ctx_;
  RefKernelTable kernels_;
};

/// Binds size symbols from concrete input shapes (checks constants and derived dims).
StatusOr<std::map<std::string, int64_t>> bindSymbols(const ir::Graph& graph, const std::vector<HostTensor>& inputs);

/// Test helper: builds a one-node graph applying `op` to inputs of the given tensors' types
/// with `attrs`, verifies it, and runs it on the reference executor.
StatusOr<std::vector<HostTensor>> runOp(const std::shared_ptr<const ir::Context>& ctx, const std::string& op,
                                        const std::vector<const HostTensor*>& inputs, const ir::AttrMap& attrs = {});

}  // namespace plugsdk::exec
