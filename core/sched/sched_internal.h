// State shared by the scheduler's stages (schedule.cc: roots, buffers and steps;
// fusion.cc: groups and their kernels). Internal to core/sched.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/sched/kernel_builder.h"
#include "core/sched/program.h"
#include "core/sched/schedule.h"

namespace plugsdk::sched::detail {

enum class RootKind {
  kElementwise,  ///< an inlinable value the schedule stores (or keeps in a fused kernel's registers)
  kReduction,    ///< prims.sum / prod / amax / amin / argmax / argmin
  kLibrary,      ///< an output of prims.matmul / convolution / sdpa
  kScatter,      ///< prims.scatter
  kInputCopy,    ///< a graph input that is also a graph output
};

struct Root {
  const ir::Value* value = nullptr;
  RootKind kind = RootKind::kElementwise;
  int group = -1;
  bool needsBuffer = false;
  int buffer = -1;
  bool loopMember = false;  ///< computed inside a reduction loop of its group
};

enum class GroupKind { kPointwise, kReduction, kLibrary, kScatter };

struct Group {
  GroupKind kind = GroupKind::kPointwise;
  Shape grid;                 ///< the parallel domain P
  Shape full;                 ///< reductions: the reduced input's shape
  std::vector<bool> reduced;  ///< reductions: which dims of `full` are reduced
  std::vector<int> members;   ///< root indices, in program order
  const ir::Node* library = nullptr;
  const ir::Node* scatter = nullptr;
  bool scatterInPlace = false;
};

struct State {
  const ir::Context& ctx;
  const ir::Graph& graph;
  const ScheduleOptions& options;
  std::vector<Root> roots;
  std::unordered_map<const ir::Value*, int> rootOf;
  std::vector<Group> groups;
  std::unordered_map<const ir::Value*, int> inputBuffer;  ///< graph input -> buffer
  Program program;

  bool isRoot(const ir::Value* v) const { return rootOf.count(v) > 0; }
  bool provedEQ(const SymExpr& a, const SymExpr& b) const {
    auto r = ir::proveEQ(a, b, ctx.assumptions);
    return r && *r;
  }
  /// Equal numel and equal dims once size-1 dims are dropped: the same row-major points.
  bool sameDomain(const Shape& a, const Shape& b) const;
  bool sameShape(const Shape& a, const Shape& b) const;
};

/// What generating one group's kernel found out.
struct GroupCode {
  std::optional<kernel::Kernel> kernel;  ///< none for a library call without epilogue
  std::vector<int> argBuffers;
  std::set<int> externalRoots;  ///< roots read from other groups' buffers
  bool readsMember = false;     ///< some member reads an earlier member at its own point
  std::string origin;
  std::vector<std::string> values;  ///< every prim value the kernel computes (roots and inlined)
};

/// Generates the kernel of group `g` (with `extra` appended as a member when >= 0). In
/// `final` mode roots use their assigned buffers; otherwise placeholders. Fails on a fusion
/// conflict (a member read at another point or from a loop) or a too-large kernel.
StatusOr<GroupCode> generateGroup(State& st, int g, int extra, bool final);

/// The kernels of a scatter group: a copy of the input (unless in place), then the scatter.
StatusOr<std::vector<GroupCode>> generateScatter(State& st, int g);

/// Puts every root into a group (fusion).
Status formGroups(State& st);

/// Shape-level facts about reductions.
struct ReductionDomain {
  Shape grid, full;
  std::vector<bool> reduced;
  Shape loopSizes;
};
ReductionDomain reductionDomain(const ir::Node& n);

}  // namespace plugsdk::sched::detail
