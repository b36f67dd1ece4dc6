// Puts records from several per-CPU ring buffers into time order before they
// are written. Records are drained in rounds; any record with a timestamp up to
// the newest one seen in round N-1 has certainly been drained by the end of
// round N (it was in a buffer before round N began), so it is safe to emit
// then. This is the scheme perf uses with its FINISHED_ROUND events
// (tools/perf/util/ordered-events.c), and it holds at most two rounds in memory.
#ifndef PROFCPU_COLLECTOR_RECORD_ORDERER_H_
#define PROFCPU_COLLECTOR_RECORD_ORDERER_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "recording/records.h"

namespace profcpu::collector {

class RecordOrderer {
 public:
  using Sink = std::function<absl::Status(const recording::Record&)>;
  explicit RecordOrderer(Sink sink) : sink_(std::move(sink)) {}

  void Add(recording::Record record);
  // Ends a drain round: emits every pending record old enough to be final.
  absl::Status EndRound();
  // Emits everything (collection is over).
  absl::Status Flush();

  size_t pending() const { return pending_.size(); }

 private:
  absl::Status EmitUpTo(uint64_t time_ns);

  Sink sink_;
  std::vector<recording::Record> pending_;
  uint64_t round_max_ = 0;
  uint64_t previous_round_max_ = 0;
};

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_RECORD_ORDERER_H_
