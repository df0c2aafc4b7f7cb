#include "backends/llvm_lowering/loop_reuse.h"

#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

namespace plugsdk::lowering {

namespace {

/// The loop's extents, when every one is a constant.
std::optional<std::vector<int64_t>> constantExtents(const sdk::KernelView& k, const plugsdk_stmt_t& loop) {
  std::vector<int64_t> out;
  for (uint32_t d = 0; d < loop.num_loop_sizes; ++d) {
    sdk::StatusOr<int64_t> v = k.evalIndex(loop.loop_sizes[d], sdk::IndexEnv{});
    if (!v.isOk()) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

}  // namespace

LoopReuse findLoopReuse(const sdk::KernelView& k) {
  const size_t n = k.numStmts();
  LoopReuse r;
  r.from.assign(n, -1);
  r.kept.assign(n, false);
  std::vector<bool> written(k.numArgs(), false);  // the arg's access says so, or a store does
  for (size_t a = 0; a < k.numArgs(); ++a) written[a] = (k.arg(a).access & PLUGSDK_ACCESS_WRITE) != 0;
  std::vector<int64_t> defOf(k.numValues(), -1);  // value id -> defining statement
  for (size_t i = 0; i < n; ++i) {
    const plugsdk_stmt_t& s = k.stmt(i);
    if (s.kind == PLUGSDK_STMT_STORE) written[static_cast<size_t>(s.arg)] = true;
    if (s.result >= 0) defOf[static_cast<size_t>(s.result)] = static_cast<int64_t>(i);
  }
  // Per extents: the key of each statement seen in a loop over them -> (statement, loop).
  std::map<std::vector<int64_t>, std::unordered_map<std::string, std::pair<int64_t, size_t>>> seen;
  for (size_t pos = 0; pos < n; ++pos) {
    const plugsdk_stmt_t& loop = k.stmt(pos);
    if (loop.kind != PLUGSDK_STMT_LOOP) continue;
    const size_t end = pos + 1 + loop.body_count;
    const std::optional<std::vector<int64_t>> extents = constantExtents(k, loop);
    if (!extents) {
      pos = end - 1;
      continue;
    }
    auto& keys = seen[*extents];
    // A value's name in keys: the statement it repeats (or its own) inside this loop's body,
    // its id outside it (the same value at every iteration of both loops).
    auto name = [&](int32_t id) -> std::string {
      const int64_t d = defOf[static_cast<size_t>(id)];
      if (d > static_cast<int64_t>(pos) && d < static_cast<int64_t>(end)) {
        const int64_t c = r.from[static_cast<size_t>(d)];
        return "s" + std::to_string(c >= 0 ? c : d);
      }
      return "v" + std::to_string(id);
    };
    for (size_t i = pos + 1; i < end; ++i) {
      const plugsdk_stmt_t& s = k.stmt(i);
      const bool pure = s.kind == PLUGSDK_STMT_SCALAR || s.kind == PLUGSDK_STMT_WHERE || s.kind == PLUGSDK_STMT_CAST ||
                        s.kind == PLUGSDK_STMT_INDEX || s.kind == PLUGSDK_STMT_CONST;
      const bool load = s.kind == PLUGSDK_STMT_LOAD && !written[static_cast<size_t>(s.arg)];
      if (!pure && !load) continue;
      std::string key = std::to_string(s.kind) + ":" + std::to_string(s.dtype) + ":" + std::to_string(s.op) + ":" +
                        (load ? std::to_string(s.arg) : "-");
      for (uint32_t o = 0; o < s.num_operands; ++o) key += "," + name(s.operands[o]);
      if (s.kind == PLUGSDK_STMT_CONST) {
        uint64_t bits = 0;
        std::memcpy(&bits, &s.fvalue, sizeof bits);
        key += "=" + std::to_string(bits) + "/" + std::to_string(s.ivalue);
      }
      if (load || s.kind == PLUGSDK_STMT_INDEX) {
        key += "@";
        for (const plugsdk_index_insn_t& in : k.program(s.index)) {
          key += std::to_string(in.op) + ":";
          key += in.op == PLUGSDK_INDEX_VALUE ? name(static_cast<int32_t>(in.operand)) : std::to_string(in.operand);
          key += " ";
        }
      }
      auto [it, fresh] = keys.emplace(key, std::make_pair(static_cast<int64_t>(i), pos));
      if (fresh || it->second.second == pos) continue;  // new, or repeated within one loop (LLVM's CSE)
      r.from[i] = it->second.first;
      r.kept[static_cast<size_t>(it->second.first)] = true;
    }
    pos = end - 1;
  }
  return r;
}

}  // namespace plugsdk::lowering
