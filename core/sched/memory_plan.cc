// planMemory: linear scan over the steps with a free list of arena slots.
#include "core/sched/memory_plan.h"

#include <algorithm>
#include <map>
#include <set>

namespace plugsdk::sched {

namespace {

SymExpr align64(const SymExpr& bytes) { return SymExpr::floorDiv(bytes + 63, 64) * 64; }

bool provedGE(const SymExpr& a, const SymExpr& b, const ir::SymAssumptions& as) {
  auto r = ir::proveGE(a, b, as);
  return r && *r;
}

/// Buffers a step reads and writes.
void stepUses(const Program& p, const Step& s, std::set<int>& reads, std::set<int>& writes) {
  auto kernelArgs = [&](int kernel, const std::vector<int>& bufs) {
    const kernel::Kernel& k = p.kernels[static_cast<size_t>(kernel)];
    for (size_t i = 0; i < bufs.size(); ++i) {
      if (bufs[i] < 0) continue;
      if (k.args[i].read) reads.insert(bufs[i]);
      if (k.args[i].written) writes.insert(bufs[i]);
    }
  };
  if (s.kind == Step::Kind::kLaunch) {
    kernelArgs(s.launch.kernel, s.launch.args);
    return;
  }
  for (const auto& v : s.call.inputs)
    if (v) reads.insert(v->buffer);
  for (const View& v : s.call.outputs)
    if (v.buffer >= 0) writes.insert(v.buffer);
  if (s.call.epilogue >= 0) kernelArgs(s.call.epilogue, s.call.epilogueArgs);
}

bool hasLoop(const kernel::Kernel& k) {
  for (const kernel::Stmt& s : k.body)
    if (s.kind == kernel::StmtKind::kLoop) return true;
  return false;
}

}  // namespace

bool inPlaceLegal(const kernel::Kernel& k, int in, int out) {
  if (hasLoop(k) || in == out) return false;
  std::optional<SymExpr> index;
  bool stored = false;  // a load of `in` after the store to `out` would read the new value
  for (const kernel::Stmt& s : k.body) {
    if (s.arg != in && s.arg != out) continue;
    if (s.kind == kernel::StmtKind::kLoad && (s.arg == out || !s.operands.empty() || stored)) return false;
    if (s.kind == kernel::StmtKind::kStore && (s.arg == in || s.combine != kernel::Combine::kNone)) return false;
    if (s.kind != kernel::StmtKind::kLoad && s.kind != kernel::StmtKind::kStore) continue;
    if (index && *index != s.index) return false;
    index = s.index;
    stored = stored || s.kind == kernel::StmtKind::kStore;
  }
  return true;
}

Status planMemory(Program& p, bool reuse, const ir::SymAssumptions& as, MemoryPlanStats* stats) {
  const size_t nb = p.buffers.size();
  std::vector<int> def(nb, -1), last(nb, -1);
  for (size_t si = 0; si < p.steps.size(); ++si) {
    std::set<int> reads, writes;
    stepUses(p, p.steps[si], reads, writes);
    for (int b : writes)
      if (def[static_cast<size_t>(b)] < 0) def[static_cast<size_t>(b)] = static_cast<int>(si);
    for (int b : reads) last[static_cast<size_t>(b)] = static_cast<int>(si);
    for (int b : writes) last[static_cast<size_t>(b)] = std::max(last[static_cast<size_t>(b)], static_cast<int>(si));
  }
  auto bytesOf = [&](const Buffer& b) { return b.numel * dtypeBytes(b.dtype); };
  MemoryPlanStats st;
  st.unplannedBytes = 0;
  // Invariant: a slot's memory belongs to the live temporaries in slotHolders, and there is at
  // most one of them, except during the one step where a kernel writes a result in place over
  // an operand that dies with it. A slot is free when it has no holder.
  std::vector<SymExpr> slotSize;
  std::vector<std::set<int>> slotHolders;
  std::map<int, int> slotOfBuffer;
  auto isFree = [&](size_t slot) { return slotHolders[slot].empty(); };
  for (size_t si = 0; si < p.steps.size(); ++si) {
    std::set<int> reads, writes;
    stepUses(p, p.steps[si], reads, writes);
    // Buffers first written here get memory.
    for (int b : writes) {
      Buffer& buf = p.buffers[static_cast<size_t>(b)];
      if (buf.role != BufferRole::kTemp || def[static_cast<size_t>(b)] != static_cast<int>(si) || slotOfBuffer.count(b))
        continue;
      const SymExpr need = bytesOf(buf);
      int chosen = -1;
      if (reuse) {
        // In place: an input of this loop-free kernel that dies here, of the same dtype and
        // size, and that holds its slot alone (each dying input takes at most one result: two
        // results of one step over the same memory would overwrite each other).
        const Step& s = p.steps[si];
        if (s.kind == Step::Kind::kLaunch) {
          const kernel::Kernel& k = p.kernels[static_cast<size_t>(s.launch.kernel)];
          const auto outArg = std::find(s.launch.args.begin(), s.launch.args.end(), b) - s.launch.args.begin();
          for (size_t ai = 0; ai < s.launch.args.size() && chosen < 0; ++ai) {
            const int ib = s.launch.args[ai];
            if (ib < 0 || ib == b || !slotOfBuffer.count(ib) || last[static_cast<size_t>(ib)] != static_cast<int>(si))
              continue;
            const Buffer& other = p.buffers[static_cast<size_t>(ib)];
            const int slot = slotOfBuffer[ib];
            if (slotHolders[static_cast<size_t>(slot)] != std::set<int>{ib}) continue;
            auto eq = ir::proveEQ(other.numel, buf.numel, as);
            if (other.dtype == buf.dtype && eq && *eq &&
                inPlaceLegal(k, static_cast<int>(ai), static_cast<int>(outArg))) {
              chosen = slot;
              ++st.inPlace;
            }
          }
        }
        // Otherwise the smallest free slot that provably fits, else a free one to grow.
        for (size_t s = 0; s < slotSize.size() && chosen < 0; ++s)
          if (isFree(s) && provedGE(slotSize[s], need, as) &&
              (chosen < 0 || provedGE(slotSize[static_cast<size_t>(chosen)], slotSize[s], as)))
            chosen = static_cast<int>(s);
        for (size_t s = 0; s < slotSize.size() && chosen < 0; ++s)
          if (isFree(s) && provedGE(need, slotSize[s], as)) {
            chosen = static_cast<int>(s);
            slotSize[s] = need;
          }
      }
      if (chosen < 0) {
        slotSize.push_back(need);
        slotHolders.emplace_back();
        chosen = static_cast<int>(slotSize.size() - 1);
      }
      slotHolders[static_cast<size_t>(chosen)].insert(b);
      slotOfBuffer[b] = chosen;
    }
    // Buffers last used here release their slot.
    std::set<int> touched = reads;
    touched.insert(writes.begin(), writes.end());
    for (int b : touched)
      if (slotOfBuffer.count(b) && last[static_cast<size_t>(b)] == static_cast<int>(si))
        slotHolders[static_cast<size_t>(slotOfBuffer[b])].erase(b);
  }
  // Temporaries no step touches still get a slot of their own.
  for (size_t b = 0; b < nb; ++b)
    if (p.buffers[b].role == BufferRole::kTemp && !slotOfBuffer.count(static_cast<int>(b))) {
      slotSize.push_back(bytesOf(p.buffers[b]));
      slotHolders.emplace_back();
      slotOfBuffer[static_cast<int>(b)] = static_cast<int>(slotSize.size() - 1);
    }
  std::vector<SymExpr> offsets;
  SymExpr total(0);
  for (const SymExpr& s : slotSize) {
    offsets.push_back(total);
    total = total + align64(s);
  }
  for (size_t b = 0; b < nb; ++b) {
    Buffer& buf = p.buffers[b];
    if (buf.role != BufferRole::kTemp) continue;
    ++st.tempBuffers;
    st.unplannedBytes = st.unplannedBytes + align64(bytesOf(buf));
    buf.slot = slotOfBuffer[static_cast<int>(b)];
    buf.offset = offsets[static_cast<size_t>(buf.slot)];
  }
  p.arenaBytes = total;
  st.plannedBytes = total;
  st.slots = static_cast<int>(slotSize.size());
  if (stats) *stats = st;
  return Status::ok();
}

}  // namespace plugsdk::sched
