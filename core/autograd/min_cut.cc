// Dinic's algorithm: BFS levels, then blocking flows along level-increasing paths.
#include "core/autograd/min_cut.h"

#include <algorithm>
#include <deque>

namespace plugsdk::autograd {

void FlowNetwork::addEdge(int from, int to, int64_t capacity) {
  auto f = static_cast<size_t>(from), t = static_cast<size_t>(to);
  adj_[f].push_back(Edge{to, capacity, adj_[t].size() + (f == t ? 1 : 0)});
  adj_[t].push_back(Edge{from, 0, adj_[f].size() - 1});
}

bool FlowNetwork::levels(int s, int t) {
  level_.assign(adj_.size(), -1);
  std::deque<int> queue{s};
  level_[static_cast<size_t>(s)] = 0;
  while (!queue.empty()) {
    const int v = queue.front();
    queue.pop_front();
    for (const Edge& e : adj_[static_cast<size_t>(v)])
      if (e.capacity > 0 && level_[static_cast<size_t>(e.to)] < 0) {
        level_[static_cast<size_t>(e.to)] = level_[static_cast<size_t>(v)] + 1;
        queue.push_back(e.to);
      }
  }
  return level_[static_cast<size_t>(t)] >= 0;
}

int64_t FlowNetwork::push(int v, int t, int64_t limit) {
  if (v == t) return limit;
  const auto sv = static_cast<size_t>(v);
  for (size_t& i = next_[sv]; i < adj_[sv].size(); ++i) {
    Edge& e = adj_[sv][i];
    if (e.capacity <= 0 || level_[static_cast<size_t>(e.to)] != level_[sv] + 1) continue;
    const int64_t got = push(e.to, t, std::min(limit, e.capacity));
    if (got > 0) {
      e.capacity -= got;
      adj_[static_cast<size_t>(e.to)][e.reverse].capacity += got;
      return got;
    }
  }
  return 0;
}

int64_t FlowNetwork::maxFlow(int s, int t) {
  int64_t flow = 0;
  while (levels(s, t)) {
    next_.assign(adj_.size(), 0);
    while (int64_t f = push(s, t, kInfinite)) flow = std::min(kInfinite, flow + f);
  }
  reached_.assign(adj_.size(), false);
  std::deque<int> queue{s};
  reached_[static_cast<size_t>(s)] = true;
  while (!queue.empty()) {
    const int v = queue.front();
    queue.pop_front();
    for (const Edge& e : adj_[static_cast<size_t>(v)])
      if (e.capacity > 0 && !reached_[static_cast<size_t>(e.to)]) {
        reached_[static_cast<size_t>(e.to)] = true;
        queue.push_back(e.to);
      }
  }
  return flow;
}

}  // namespace plugsdk::autograd
