// Running a compiled kernel on oneTBB (see launch.h).
#include "backends/cpu/runtime/launch.h"

#include <algorithm>
#include <atomic>

#include <oneapi/tbb/parallel_for.h>

namespace plugsdk::cpu {

namespace {

/// How the (outer x inner) points are cut into tasks: tasks take whole outer ranges when
/// there are enough outer points, else each outer point is cut into inner chunks (a
/// multiple of the vector width, so only the last chunk has a tail).
struct Split {
  int64_t tasks = 1, outerPer = 1, innerChunks = 1, innerChunk = 1;
};

Split split(int64_t outer, int64_t inner, int64_t work, int64_t lanes, int threads) {
  Split s;
  const int64_t wanted = std::min<int64_t>(static_cast<int64_t>(threads) * 4, std::max<int64_t>(1, work / kMinParallelWork));
  if (wanted <= 1 || threads <= 1) {
    s.outerPer = outer;
    s.innerChunk = inner;
    return s;
  }
  if (outer >= wanted) {
    s.outerPer = (outer + wanted - 1) / wanted;
    s.tasks = (outer + s.outerPer - 1) / s.outerPer;
    s.innerChunk = inner;
    return s;
  }
  s.outerPer = 1;
  s.innerChunks = std::max<int64_t>(1, (wanted + outer - 1) / outer);
  s.innerChunk = ((inner + s.innerChunks - 1) / s.innerChunks + lanes - 1) / lanes * lanes;
  s.innerChunks = std::max<int64_t>(1, (inner + s.innerChunk - 1) / s.innerChunk);
  s.tasks = outer * s.innerChunks;
  return s;
}

}  // namespace

sdk::Status launchKernel(const CompiledKernel& k, const std::vector<void*>& args, const std::vector<int64_t>& symbols,
                         tbb::task_arena& arena) {
  const sdk::Span<const plugsdk_index_insn_t> pool(k.pool.data(), k.pool.size());
  const sdk::IndexEnv env{{}, {}, {symbols.data(), symbols.size()}};
  std::vector<int64_t> grid;
  for (size_t d = 0; d < k.grid.size(); ++d) {
    sdk::StatusOr<int64_t> v = sdk::evalIndex(pool, k.grid[d], env);
    if (!v.isOk()) return v.status().withContext("kernel @" + k.name + ": grid dim " + std::to_string(d));
    if (*v < 0)
      return sdk::invalidArgument("kernel @" + k.name + ": grid dim " + std::to_string(d) + " has negative size " +
                                  std::to_string(*v));
    grid.push_back(*v);
  }
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d + 1 < grid.size(); ++d) outer *= grid[d];
  if (!grid.empty()) inner = grid.back();
  if (outer == 0 || inner == 0) return sdk::Status::ok();
  // Work: each point runs its statements once and each top-level loop's body per iteration.
  int64_t perPoint = 1;
  for (const auto& sizes : k.loops) {
    int64_t n = 1;
    for (const plugsdk_index_expr_t& e : sizes) {
      sdk::StatusOr<int64_t> v = sdk::evalIndex(pool, e, env);
      n *= v.isOk() ? std::max<int64_t>(*v, 0) : 1;
    }
    perPoint += n;
  }
  const int64_t work = outer * inner * perPoint;

  int32_t status = 0;
  const CallFrame frame{args.data(), symbols.data(), grid.data(), &status};
  const Split s = split(outer, inner, work, k.lanes, arena.max_concurrency());
  if (s.tasks == 1) {
    k.entry(&frame, 0, outer, 0, inner);
  } else {
    arena.execute([&] {
      tbb::parallel_for(
          int64_t{0}, s.tasks,
          [&](int64_t t) {
            if (s.innerChunks == 1) {
              const int64_t o0 = t * s.outerPer;
              k.entry(&frame, o0, std::min(outer, o0 + s.outerPer), 0, inner);
            } else {
              const int64_t o = t / s.innerChunks, c = t % s.innerChunks;
              k.entry(&frame, o, o + 1, c * s.innerChunk, std::min(inner, (c + 1) * s.innerChunk));
            }
          },
          tbb::simple_partitioner());
    });
  }
  const int32_t st = std::atomic_ref<int32_t>(status).load();
  if (st == kStatusOk) return sdk::Status::ok();
  const std::string who = "kernel @" + k.name + ": ";
  if (st == kStatusDivisionByZero) return sdk::invalidArgument(who + "integer division by zero (ZeroDivisionError)");
  if (st == kStatusEmptyReduce) return sdk::invalidArgument(who + "a max/min/argmax/argmin over an empty loop");
  const size_t check = static_cast<size_t>(st - kStatusCheckBase);
  if (st >= kStatusCheckBase && check < k.checkMessages.size()) return sdk::outOfRange(who + k.checkMessages[check]);
  return sdk::internalError(who + "unknown status " + std::to_string(st));
}

}  // namespace plugsdk::cpu
