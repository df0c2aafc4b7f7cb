// The recordings of one program's runs (run_recordings.h).
#include "core/plugin/run_recordings.h"

#include <algorithm>

namespace plugsdk::plugin {

const RunRecordings::Entry* RunRecordings::find(const RunKey& key) const {
  for (const Entry& e : kept_)
    if (e.key == key) return &e;
  return nullptr;
}

void RunRecordings::erase(const RunKey& key) {
  kept_.erase(std::remove_if(kept_.begin(), kept_.end(), [&](const Entry& e) { return e.key == key; }), kept_.end());
}

bool RunRecordings::repeated(const RunKey& key) {
  auto it = std::find(seen_.begin(), seen_.end(), key);
  const bool again = it != seen_.end();
  if (again) seen_.erase(it);
  seen_.push_back(key);
  while (seen_.size() > kKept) seen_.pop_front();
  return again;
}

void RunRecordings::keep(RunKey key, DeviceRecording recording, int imported, int copied) {
  erase(key);
  kept_.push_back(Entry{std::move(key), std::move(recording), imported, copied});
  while (kept_.size() > kKept) kept_.pop_front();
}

}  // namespace plugsdk::plugin
