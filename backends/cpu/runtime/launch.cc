// Running a compiled kernel on oneTBB (see launch.h).
#include "backends/cpu/runtime/launch.h"

#include <algorithm>
#include <atomic>

#include <oneapi/tbb/parallel_for.h>

namespace plugsdk::cpu {

namespace {

/// How (outer x inner) points are cut into tasks: tasks take whole outer ranges when there
/// are enough outer points, else each outer point is cut into inner chunks (a multiple of
/// the vector width, so only the last chunk has a tail).
struct Split {
  int64_t tasks = 1, outerPer = 1, innerChunks = 1, innerChunk = 1;
};

Split split(int64_t outer, int64_t inner, int64_t work, int64_t lanes, int threads) {
  Split s;
  const int64_t wanted =
      std::min<int64_t>(static_cast<int64_t>(threads) * 4, std::max<int64_t>(1, work / kMinParallelWork));
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

PreparedLaunch::PreparedLaunch(PreparedLaunch&& o) noexcept
    : k_(o.k_),
      args_(std::move(o.args_)),
      symbols_(std::move(o.symbols_)),
      grid_(std::move(o.grid_)),
      outer_(o.outer_),
      inner_(o.inner_),
      perPoint_(o.perPoint_),
      status_(o.status_) {
  frame_ = lowering::CallFrame{args_.data(), symbols_.data(), grid_.data(), &status_};
}

sdk::StatusOr<PreparedLaunch> PreparedLaunch::prepare(const CompiledKernel& k, std::vector<void*> args,
                                                      std::vector<int64_t> symbols) {
  PreparedLaunch p(k);
  p.args_ = std::move(args);
  p.symbols_ = std::move(symbols);
  const sdk::Span<const plugsdk_index_insn_t> pool(k.pool.data(), k.pool.size());
  sdk::StatusOr<std::vector<int64_t>> grid = lowering::evalGrid(pool, k.grid, p.symbols_, k.name);
  if (!grid.isOk()) return grid.status();
  p.grid_ = std::move(*grid);
  for (size_t d = 0; d + 1 < p.grid_.size(); ++d) p.outer_ *= p.grid_[d];
  if (!p.grid_.empty()) p.inner_ = p.grid_.back();
  // Work per point: its statements once, and each top-level loop's body per iteration.
  const sdk::IndexEnv env{{}, {}, {p.symbols_.data(), p.symbols_.size()}};
  for (const auto& sizes : k.loops) {
    int64_t n = 1;
    for (const plugsdk_index_expr_t& e : sizes) {
      sdk::StatusOr<int64_t> v = sdk::evalIndex(pool, e, env);
      n *= v.isOk() ? std::max<int64_t>(*v, 0) : 1;
    }
    p.perPoint_ += n;
  }
  p.frame_ = lowering::CallFrame{p.args_.data(), p.symbols_.data(), p.grid_.data(), &p.status_};
  return p;
}

void PreparedLaunch::runRange(int64_t o0, int64_t o1, int64_t i0, int64_t i1) const {
  if (o0 >= o1 || i0 >= i1) return;
  k_->entry(&frame_, o0, o1, i0, i1);
}

void PreparedLaunch::runParallel(tbb::task_arena& arena, int64_t o0, int64_t o1) const {
  const int64_t outer = o1 - o0, inner = inner_;
  if (outer <= 0 || inner <= 0) return;
  const Split s = split(outer, inner, outer * inner * perPoint_, k_->lanes, arena.max_concurrency());
  if (s.tasks == 1) return runRange(o0, o1, 0, inner);
  arena.execute([&] {
    tbb::parallel_for(
        int64_t{0}, s.tasks,
        [&](int64_t t) {
          if (s.innerChunks == 1) {
            const int64_t a = o0 + t * s.outerPer;
            runRange(a, std::min(o1, a + s.outerPer), 0, inner);
          } else {
            const int64_t o = o0 + t / s.innerChunks, c = t % s.innerChunks;
            runRange(o, o + 1, c * s.innerChunk, std::min(inner, (c + 1) * s.innerChunk));
          }
        },
        tbb::simple_partitioner());
  });
}

sdk::Status PreparedLaunch::status() const {
  const int32_t st = std::atomic_ref<int32_t>(status_).load();
  return lowering::statusError(st, k_->name, k_->checkMessages);
}

sdk::Status launchKernel(const CompiledKernel& k, const std::vector<void*>& args, const std::vector<int64_t>& symbols,
                         tbb::task_arena& arena) {
  sdk::StatusOr<PreparedLaunch> p = PreparedLaunch::prepare(k, args, symbols);
  if (!p.isOk()) return p.status();
  p->runParallel(arena, 0, p->outer());
  return p->status();
}

}  // namespace plugsdk::cpu
