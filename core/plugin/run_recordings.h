// The recordings of one program's runs (ABI 1.9 recordings): a run on a caller's stream is
// keyed by what its launches depend on besides the program -- every tensor's address, memory
// kind and strides, the size symbols' values and the arena in use -- and recorded the second
// time its key comes within the last few runs, then replayed whenever the key comes again.
// (`y = f(x)` in a loop holds the last output while the next call allocates its own, so the
// keys of such calls alternate between two output addresses.) A replay is one
// plugin call in place of an import per tensor and a launch per step (a graph of the
// device's own, replayed whole). The kept recordings are few and the oldest goes first.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/plugin/device.h"

namespace plugsdk::plugin {

/// What a run's launches depend on besides the program.
using RunKey = std::vector<uint64_t>;

class RunRecordings {
 public:
  /// Recordings kept per program: a program called with a few address sets in turn (a
  /// training step's forward under two batch sizes) keeps one for each.
  static constexpr size_t kKept = 4;

  /// A recording and what its run did with the tensors (reported again by each replay).
  struct Entry {
    RunKey key;
    DeviceRecording recording;
    int imported = 0, copied = 0;
  };

  /// The recording of runs with `key`, or null.
  const Entry* find(const RunKey& key) const;
  /// Drops the recording of `key` (it could not be replayed).
  void erase(const RunKey& key);
  /// Whether one of the last kKept runs had `key` too (this run is due for recording);
  /// remembers it.
  bool repeated(const RunKey& key);
  /// Keeps `recording` for `key`, dropping the oldest past kKept.
  void keep(RunKey key, DeviceRecording recording, int imported, int copied);
  /// Stops recording this program, for `reason` (recording_end refused its work).
  void turnOff(std::string reason) {
    off_ = std::move(reason);
    kept_.clear();
  }
  /// Why this program is not recorded ("" while it is).
  const std::string& off() const { return off_; }
  size_t size() const { return kept_.size(); }
  /// Counts (tests, logs): recordings made, and runs replayed.
  uint64_t recorded = 0, replayed = 0;

 private:
  std::deque<RunKey> seen_;  ///< the keys of the last kKept runs, newest last
  std::deque<Entry> kept_;
  std::string off_;
};

}  // namespace plugsdk::plugin
