// Building cuDNN graph-API descriptors (cudnn_api.h's backend functions) and finding an
// execution plan for an operation graph: what the convolution's plan (cudnn_graph.h) and the
// attention's (sdpa_graph.h) share. The builder owns every descriptor it makes and records
// the first failure, naming the step, so a plan is written as a straight sequence of calls
// and checked once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/library/cudnn_api.h"

namespace plugsdk::cuda::dnn {

class GraphBuilder {
 public:
  explicit GraphBuilder(const Api& api) : api_(api) {}
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;
  ~GraphBuilder();

  /// A new descriptor of `type`, destroyed with the builder (null after a failure).
  BackendDesc make(int type);
  void set(BackendDesc d, int attr, int type, int64_t n, const void* v, const char* what);
  void finalize(BackendDesc d, const char* what);
  void setDesc(BackendDesc d, int attr, BackendDesc v, const char* what) {
    set(d, attr, kTypeBackendDescriptor, 1, &v, what);
  }

  struct TensorSpec {
    int64_t uid = 0;
    int dataType = kFloat;
    std::vector<int64_t> dims, strides;
    bool isVirtual = false;  ///< an intermediate of the graph, never in memory
    bool byValue = false;    ///< a scalar passed by its host address in the variant pack
    int reordering = 0;      ///< cudnnBackendTensorReordering_t (kReorderF16x16: dQ's accumulator)
  };
  /// A finalized tensor descriptor (16-byte alignment claimed for tensors in memory).
  BackendDesc tensor(const TensorSpec& t);

  /// Operations, each finalized and appended to ops() in the order made. `prec` is the
  /// pointwise math precision; `t` a binary select's condition; `axis` a GEN_INDEX's dim.
  void pointwise(int mode, int prec, BackendDesc x, BackendDesc b, BackendDesc y, BackendDesc t = nullptr,
                 int64_t axis = -1);
  void reduce(int op, BackendDesc x, BackendDesc y);         ///< over the dims where y has size 1 (f32)
  void matmul(BackendDesc a, BackendDesc b, BackendDesc c);  ///< f32 accumulation
  void reshape(BackendDesc x, BackendDesc y);                ///< y: x's elements as another view
  const std::vector<BackendDesc>& ops() const { return ops_; }

  /// The operation graph of `ops` on `handle`, finalized.
  BackendDesc graph(Handle handle, const std::vector<BackendDesc>& ops);

  struct Plan {
    BackendDesc plan = nullptr;  ///< owned by the builder
    int64_t workspace = 0;
    std::string engine;  ///< "engine configuration I of N"
  };
  /// The first of heuristics mode A's engine configurations for `graph` that finalizes and
  /// whose numerical notes `skip` does not reject (notes: cudnnBackendNumericalNote_t).
  /// UNIMPLEMENTED listing what each configuration did when none does.
  sdk::StatusOr<Plan> plan(Handle handle, BackendDesc graph, bool (*skip)(const int* notes, int64_t count, void* ctx),
                           void* ctx);

  const sdk::Status& status() const { return status_; }

  /// Hands the descriptors to the caller (destroyed in reverse order of creation).
  std::vector<BackendDesc> release();

 private:
  const Api& api_;
  std::vector<BackendDesc> owned_, ops_;
  sdk::Status status_;
};

/// Destroys descriptors released by a GraphBuilder, the last made first.
void destroyAll(const Api& api, std::vector<BackendDesc>& owned);

/// The variant pack for `uids` -> `pointers` and `workspace`, reused while they stay the
/// same (`pack` is replaced otherwise).
sdk::Status variantPack(const Api& api, BackendDesc* pack, std::vector<const void*>* packed,
                        const std::vector<int64_t>& uids, const std::vector<const void*>& pointers, void* workspace);

}  // namespace plugsdk::cuda::dnn
