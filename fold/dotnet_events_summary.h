// What a saved EventPipe stream (RUN/dotnet/PID.nettrace) says about its
// process: GC counts and pauses, exceptions by type, lock contention, JIT
// and thread-pool activity. Computed from the file alone, so postprocess of
// an archive elsewhere gives the same numbers (metadata.json "dotnet_events").
#ifndef PROFCPU_FOLD_DOTNET_EVENTS_SUMMARY_H_
#define PROFCPU_FOLD_DOTNET_EVENTS_SUMMARY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace profcpu::fold {

struct DotnetEventsSummary {
  uint32_t pid = 0;  // as profcpu saw it (the file's name)
  // From the session's start (the trace's sync time) to its last event.
  double window_ms = 0;
  struct Gc {
    uint64_t count = 0;
    uint64_t induced = 0;
    uint64_t by_generation[3] = {};
    std::map<std::string, uint64_t> by_reason;
    double pause_ms_total = 0;  // GCSuspendEEBegin to GCRestartEEEnd
    double pause_ms_max = 0;
    double heap_mb_after_last = 0;  // every generation, LOH and POH
  } gc;
  struct Exceptions {
    uint64_t count = 0;
    std::map<std::string, uint64_t> by_type;
  } exceptions;
  struct Contention {
    uint64_t count = 0;
    double wait_ms_total = 0;
  } contention;
  struct Jit {
    // Code loaded: MethodLoad (informational) or MethodLoadVerbose.
    uint64_t methods = 0;
    // MethodJittingStarted to its MethodLoadVerbose: both verbose (level 5),
    // so 0 at the informational level profcpu asks for.
    double ms_total = 0;
  } jit;
  struct ThreadPool {
    uint64_t worker_threads_started = 0;
    uint64_t worker_threads_stopped = 0;
    uint64_t adjustments = 0;
    uint64_t starvation_adjustments = 0;
    uint32_t max_worker_threads = 0;
  } threadpool;
  uint64_t events = 0;
  // What happened when, for the time axis (profile.html's events lane,
  // nowhere in perf_script.out, whose readers count every record as CPU),
  // in time order: each GC's pause and each thread's burst of exceptions.
  // Not in metadata.json.
  struct TimelineEvent {
    enum class Kind { kGcPause, kExceptions };
    Kind kind = Kind::kGcPause;
    uint64_t start_ns = 0;     // CLOCK_MONOTONIC, as the samples' times
    uint64_t duration_ns = 0;  // a GC's pause; a burst's first to last throw
    // The nettrace event's thread id: the thread that suspended the runtime
  // (a GC), or threw (a burst is one thread's). The runtime's own id, the
  // thread's tid in the process's pid namespace.
  uint64_t thread_id = 0;
    uint64_t count = 1;        // exceptions in a burst
    std::string label;  // "gen2 Induced GC, 3.2 ms paused", "3 x App.Error thrown"
  };
  std::vector<TimelineEvent> timeline;
  uint64_t timeline_dropped = 0;  // past kMaxTimelineEvents
  // Not OK when the file is damaged or cut short: the error names the
  // offset; the counts above are what was read before it.
  absl::Status read_error;
};

// Exceptions one thread throws each within this of its one before are one
// burst on the time axis (threads throwing at once are a burst each).
inline constexpr uint64_t kExceptionBurstGapNs = 10'000'000;
// The timeline's bound per process (the stream is the target's).
inline constexpr size_t kMaxTimelineEvents = 100'000;

// Reads `path` (bounded, as NettraceReader). Fails only when the file
// cannot be opened; a damaged stream gives its summary so far and
// read_error.
absl::Status SummarizeDotnetEvents(const std::string& path, uint32_t pid,
                                   DotnetEventsSummary* summary);

// GCStart's reason as the runtime names it (GcReason in ClrEtwAll.man).
std::string GcReasonName(uint32_t reason);

// "38 GCs, 412 ms paused (4.1%), 2,110 exceptions (mostly System.X)".
std::string DotnetEventsHeadline(const DotnetEventsSummary& summary);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_DOTNET_EVENTS_SUMMARY_H_
