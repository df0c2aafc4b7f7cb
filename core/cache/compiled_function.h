// A captured graph compiled on demand for the inputs it is called with: the in-memory
// artifact cache. Each artifact carries a guard set (core/guard); a call whose inputs pass
// an artifact's guards reuses it (a hit), otherwise the graph is specialized for the new
// inputs and compiled again (a miss), up to a recompile limit after which the call is told
// to run eagerly, with the reason. Size symbols follow the dynamic policy: under
// kAutomatic a symbol is first compiled as the constant it was called with and becomes
// symbolic once a call brings a second value, so later sizes run without compiling.
//
// Thread-safe: any number of threads may call select() on one function; compiles of one
// function are serialized, and a thread that waited for another's compile reuses it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/autograd/partition.h"
#include "core/compile/pipeline.h"
#include "core/guard/guard_set.h"
#include "core/ir/context.h"
#include "core/plugin/device.h"
#include "core/plugin/device_program.h"

namespace plugsdk::cache {

class DiskCache;

enum class DynamicPolicy {
  kAutomatic,  ///< constant first, symbolic once a second value is seen (the default)
  kSymbolic,   ///< the graph's symbols stay symbolic from the first compile
  kStatic,     ///< every new size compiles a fully specialized artifact
};

struct FunctionOptions {
  DynamicPolicy dynamic = DynamicPolicy::kAutomatic;
  /// Compiles after which a miss is not compiled: select() returns a fallback reason.
  int recompileLimit = 8;
  /// Where the inputs this function accepts live (torch's device string: "cpu", "<type>:<index>"):
  /// inputs elsewhere fall back.
  std::string inputDevice = "cpu";
  compile::CompileOptions compile;  ///< dumps, decomposition and schedule options
  DiskCache* disk = nullptr;        ///< optional persistent cache (not owned)
  /// max-autotune: compile each specialization under several schedule variants, time them on
  /// the device at the call's sizes and keep the fastest (core/cache/autotune.h).
  bool autotune = false;
  /// A call whose inputs require grad compiles a training artifact: a forward program that
  /// also returns the values the backward needs and a backward program (core/autograd).
  /// Training artifacts bypass the persistent cache and autotuning.
  bool training = false;
  /// Per graph output, whether it gets a tangent in training (empty: every floating output
  /// that depends on an input requiring grad). False for e.g. a buffer's updated value.
  std::vector<bool> differentiableOutputs;
};

/// The backward half of a training artifact and how it connects to the forward.
struct BackwardProgram {
  std::unique_ptr<plugin::DeviceProgram> program;  ///< null when no gradient flows (gradOf empty)
  std::vector<int> savedInputs;                    ///< forward inputs passed to the backward first
  size_t numSavedValues = 0;                       ///< the forward program's outputs after the graph's, passed next
  std::vector<int> tangentOf;                      ///< then one tangent per entry: the cotangent of that graph output
  std::vector<int> gradOf;                         ///< the backward's outputs: the gradient of these graph inputs
  std::vector<std::vector<int>> gradTangents;      ///< per gradient, the tangents it depends on
  autograd::PartitionStats stats;
};

/// One compiled specialization of the graph.
struct Artifact {
  guard::GuardSet guards;
  std::unique_ptr<plugin::DeviceProgram> program;
  std::map<std::string, int64_t> specialized;  ///< symbols compiled as constants
  std::vector<std::pair<std::string, double>> stageSeconds;
  size_t kernels = 0, libraryCalls = 0;
  bool fromDisk = false;  ///< the scheduled program came from the persistent cache
  /// With autotune: each variant's median time in ms (-1: it failed), and the one kept.
  std::vector<std::pair<std::string, double>> autotuneMillis;
  std::string autotuneWinner;
  /// Set for a training artifact: `program` is then the forward, whose outputs are the
  /// graph's followed by backward->numSavedValues saved values.
  std::unique_ptr<BackwardProgram> backward;
};

struct Selection {
  std::shared_ptr<const Artifact> artifact;  ///< null: run eagerly, see fallbackReason
  std::string fallbackReason;
  bool compiled = false;  ///< this call compiled the artifact
};

/// Counters users can read (plugsdk.cache_info() in Python).
struct FunctionStats {
  uint64_t compiles = 0;        ///< artifacts compiled (scheduled here or loaded from disk)
  uint64_t hits = 0;            ///< calls that reused an artifact
  uint64_t misses = 0;          ///< calls no artifact's guards admitted
  uint64_t fallbacks = 0;       ///< calls told to run eagerly
  uint64_t diskHits = 0;        ///< compiles whose program came from the persistent cache
  uint64_t diskRejected = 0;    ///< corrupt or stale disk entries ignored (and rewritten)
  std::string lastDiskProblem;  ///< why the last one was rejected, or a write that failed
  size_t entries = 0;           ///< artifacts held
  double compileSeconds = 0;
  std::vector<std::string> missReasons;  ///< the failed guard of the last 32 misses ("size: input %x dim 0: ...")
};

class CompiledFunction {
 public:
  /// `device` must outlive the function.
  CompiledFunction(std::shared_ptr<const ir::Context> ctx, const plugin::Device& device, ir::Graph graph,
                   FunctionOptions options = {});

  /// The artifact for these inputs: a hit, a fresh compile, or (artifact null) a reason to
  /// run eagerly. Errors are compile failures (an op the device cannot run).
  StatusOr<Selection> select(const std::vector<guard::TensorSignature>& inputs);

  /// A caller that remembers which artifact its inputs selected (keyed on everything the
  /// guards read) and reuses it without select() reports the hit here, so stats stay true.
  void countHit();

  FunctionStats stats() const;
  const ir::Graph& graph() const { return graph_; }
  const FunctionOptions& options() const { return options_; }

 private:
  std::shared_ptr<const Artifact> lookup(const std::vector<guard::TensorSignature>& inputs,
                                         std::optional<guard::GuardFailure>* firstFailure) const;
  /// The specialization for `inputs`: input types and symbol values, or a fallback reason.
  struct Plan {
    std::vector<ir::TensorType> types;
    std::map<std::string, ir::SymExpr> symbols;
    std::map<std::string, int64_t> specialized;
    std::string fallbackReason;
  };
  Plan plan(const std::vector<guard::TensorSignature>& inputs);
  StatusOr<std::shared_ptr<const Artifact>> compile(const Plan& p, const ir::Graph& specialized,
                                                    const std::vector<guard::TensorSignature>& inputs,
                                                    double specializeSeconds);

  std::shared_ptr<const ir::Context> ctx_;
  const plugin::Device& device_;
  ir::Graph graph_;
  FunctionOptions options_;

  mutable std::mutex mu_;  // guards everything below
  std::vector<std::shared_ptr<const Artifact>> artifacts_;
  std::map<std::string, std::set<int64_t>> observed_;  ///< values each symbol was called with
  FunctionStats stats_;
  std::mutex compileMu_;  // one compile at a time
};

}  // namespace plugsdk::cache
