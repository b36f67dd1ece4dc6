// How much of a .NET runtime's event stream profcpu keeps, event by event,
// so a long collection on a busy service stays within the file's cap
// (-dotnet-events' 256 MiB per process) and still has its end: the rundown
// that names the code loaded before the session.
//
// A token bucket refills at the rate that would fill the cap (less an
// eighth kept for the rundown) over the collection's -duration, or over
// kPlannedSeconds when it has none (until Ctrl-C), with kBurstSeconds of that
// rate banked. Each event is of one of three tiers:
//  - naming: what names managed frames and frames GCs (method and module
//    loads, JIT starts, the rundown, GCStart, the suspension and restart that
//    bound a pause, heap stats, thread-pool thread starts and stops, adjustments):
//    always kept, until the cap less the reserve (the rundown may use the reserve);
//  - counted: events the outputs count (ExceptionThrown, ContentionStart and
//    Stop): kept while the bucket holds tokens;
//  - bulk: everything else (GCAllocationTick, about 60% of a busy service's
//    stream, catch/finally events, thread-pool waits, ...): kept while the
//    bucket is more than half full.
// So a quiet app keeps everything; a busy one thins its bulk events first and
// its counted events next, never its names, and nothing is switched off for
// good: a kind is kept again as soon as the rate allows. Every dropped event
// is counted by kind with the time of the first (metadata.json's
// dotnet_runtimes[].events.dropped).
#ifndef PROFCPU_COLLECTOR_DOTNET_EVENT_BUDGET_H_
#define PROFCPU_COLLECTOR_DOTNET_EVENT_BUDGET_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "recording/records.h"

namespace profcpu::collector::dotnet {

// Without a -duration: a collection this long at the budget's rate fills the cap.
inline constexpr uint64_t kPlannedSeconds = 30 * 60;
// Bytes of the steady rate banked for bursts (start-up's JIT, a GC storm).
inline constexpr uint64_t kBurstSeconds = 60;

enum class EventTier { kNaming, kCounted, kBulk };

// The tier of an event by its provider and id (the runtime's and the
// rundown provider's ids, nettrace/runtime_events.h).
EventTier TierOf(absl::string_view provider, uint32_t event_id);
// A name for the kind in reports: "GCAllocationTick", else "PROVIDER/ID".
std::string EventKindName(absl::string_view provider, uint32_t event_id);

class EventBudget {
 public:
  // `max_bytes`: the file's cap; `planned_seconds`: the collection's
  // length (0: kPlannedSeconds).
  explicit EventBudget(uint64_t max_bytes, uint64_t planned_seconds = 0);

  // Whether to keep an event of `bytes` (its encoded size) of this kind, at
  // `time_ns` (CLOCK_MONOTONIC, non-decreasing in practice; an earlier time
  // refills nothing). Counts what it drops.
  bool Keep(absl::string_view provider, uint32_t event_id, uint64_t bytes, uint64_t time_ns);
  // Bytes of the stream kept whole, not event by event (its stack,
  // metadata and sequence-point blocks): they fill the file as events do.
  void Charge(uint64_t bytes);
  // The session is stopping: what follows is the rundown, kept whole while
  // the cap allows (the reserve is for it).
  void StartRundown() { rundown_ = true; }

  uint64_t kept_bytes() const { return kept_bytes_; }
  // Per kind, most events first.
  std::vector<recording::DotnetRuntime::Dropped> Dropped() const;

 private:
  uint64_t max_bytes_;
  uint64_t reserve_;         // kept for the rundown
  double rate_;              // bytes per second
  double capacity_;          // bucket size, bytes
  double tokens_;
  uint64_t last_ns_ = 0;
  bool rundown_ = false;
  uint64_t kept_bytes_ = 0;
  std::map<std::string, recording::DotnetRuntime::Dropped> dropped_;
};

}  // namespace profcpu::collector::dotnet

#endif  // PROFCPU_COLLECTOR_DOTNET_EVENT_BUDGET_H_
