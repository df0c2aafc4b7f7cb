// Minimum s-t cut of a directed graph with integer capacities (Dinic's max-flow), for the
// forward/backward partitioner's choice of what to save.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace plugsdk::autograd {

class FlowNetwork {
 public:
  static constexpr int64_t kInfinite = int64_t{1} << 60;

  explicit FlowNetwork(int vertices) : adj_(static_cast<size_t>(vertices)) {}
  int vertices() const { return static_cast<int>(adj_.size()); }
  int addVertex() {
    adj_.emplace_back();
    return vertices() - 1;
  }
  void addEdge(int from, int to, int64_t capacity);

  /// The maximum flow from s to t; afterwards sourceSide() is the minimum cut's source side.
  int64_t maxFlow(int s, int t);
  /// Per vertex: reachable from s in the residual network (valid after maxFlow).
  const std::vector<bool>& sourceSide() const { return reached_; }

 private:
  struct Edge {
    int to;
    int64_t capacity;
    size_t reverse;
  };
  bool levels(int s, int t);
  int64_t push(int v, int t, int64_t limit);

  std::vector<std::vector<Edge>> adj_;
  std::vector<int> level_;
  std::vector<size_t> next_;
  std::vector<bool> reached_;
};

}  // namespace plugsdk::autograd
