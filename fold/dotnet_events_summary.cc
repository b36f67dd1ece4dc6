#include "fold/dotnet_events_summary.h"

#include <fcntl.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/unique_fd.h"
#include "nettrace/reader.h"
#include "nettrace/runtime_events.h"

namespace profcpu::fold {
namespace {

// `to - from` in ticks, in double: the timestamps are the stream's, and a
// hostile one's (a sync time near INT64_MIN) would overflow an int64
// difference (found by nettrace_summary_fuzzer).
double TicksBetween(int64_t from, int64_t to) {
  return static_cast<double>(to) - static_cast<double>(from);
}

using nettrace::DecodeContentionStop;
using nettrace::DecodeExceptionThrown;
using nettrace::DecodeGcHeapStats;
using nettrace::DecodeGcStart;
using nettrace::DecodeMethodJittingStarted;
using nettrace::DecodeMethodLoadVerbose;
using nettrace::DecodeThreadPoolAdjustment;
using nettrace::DecodeThreadPoolWorkerThread;
using nettrace::NettraceEvent;
using nettrace::NettraceEventMetadata;
using nettrace::NettraceFdSource;
using nettrace::NettraceReader;
using nettrace::NettraceTraceInfo;
using nettrace::RuntimeEventId;
using nettrace::kDotNetRuntimeProvider;

// A decoder's error is the event's, not the stream's: the event is skipped.
template <typename T>
std::optional<T> Ok(absl::StatusOr<T> decoded) {
  if (!decoded.ok()) return std::nullopt;
  return std::move(*decoded);
}

// 2110 -> "2,110", as the closing line prints counts.
std::string WithCommas(uint64_t n) {
  std::string digits = absl::StrCat(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

using TimelineEvent = DotnetEventsSummary::TimelineEvent;

// Appends to the summary's timeline, within its bound.
void AddToTimeline(TimelineEvent event, DotnetEventsSummary* summary) {
  if (summary->timeline.size() >= kMaxTimelineEvents) {
    ++summary->timeline_dropped;
    return;
  }
  summary->timeline.push_back(std::move(event));
}

// Exceptions one thread threw close together, gathered into one timeline
// event that names that thread.
class ExceptionBurst {
 public:
  // Adds a throw at `ns`; a gap since the last one closes the burst so far.
  void Add(uint64_t ns, uint64_t thread_id, const std::string& type,
           DotnetEventsSummary* summary) {
    if (count_ > 0 && ns >= last_ns_ && ns - last_ns_ > kExceptionBurstGapNs) Close(summary);
    if (count_ == 0) {
      first_ns_ = ns;
      thread_id_ = thread_id;
      by_type_.clear();
    }
    last_ns_ = std::max(last_ns_, ns);
    ++count_;
    // Names come from the target: a burst keeps a few.
    if (by_type_.size() < 16 || by_type_.contains(type)) ++by_type_[type];
  }

  void Close(DotnetEventsSummary* summary) {
    if (count_ == 0) return;
    TimelineEvent e;
    e.kind = TimelineEvent::Kind::kExceptions;
    e.start_ns = first_ns_;
    e.duration_ns = last_ns_ - first_ns_;
    e.thread_id = thread_id_;
    e.count = count_;
    std::pair<std::string, uint64_t> top;
    for (const auto& [type, n] : by_type_) {
      if (n > top.second || (n == top.second && type < top.first)) top = {type, n};
    }
    if (count_ == 1) {
      e.label = absl::StrCat(top.first, " thrown");
    } else if (top.second == count_) {
      e.label = absl::StrCat(WithCommas(count_), " x ", top.first, " thrown");
    } else {
      e.label = absl::StrCat(WithCommas(count_), " thrown, mostly ", top.first);
    }
    AddToTimeline(std::move(e), summary);
    count_ = 0;
    last_ns_ = 0;
  }

 private:
  uint64_t count_ = 0;
  uint64_t first_ns_ = 0;
  uint64_t last_ns_ = 0;
  uint64_t thread_id_ = 0;
  absl::flat_hash_map<std::string, uint64_t> by_type_;
};

// One burst per throwing thread: threads throwing at once are as many
// events, each naming its thread (a burst of one process would name only
// its first thrower).
class ExceptionBursts {
 public:
  void Add(uint64_t ns, uint64_t thread_id, const std::string& type,
           DotnetEventsSummary* summary) {
    // Thread ids come from the target: bound the bursts open at once.
    if (by_thread_.size() >= kMaxOpenBursts && !by_thread_.contains(thread_id)) {
      CloseAll(summary);
    }
    by_thread_[thread_id].Add(ns, thread_id, type, summary);
  }

  void CloseAll(DotnetEventsSummary* summary) {
    // In thread order: the timeline's order cannot depend on the map's.
    std::vector<uint64_t> threads;
    threads.reserve(by_thread_.size());
    for (const auto& [thread, burst] : by_thread_) threads.push_back(thread);
    std::sort(threads.begin(), threads.end());
    for (uint64_t thread : threads) by_thread_[thread].Close(summary);
    by_thread_.clear();
  }

 private:
  static constexpr size_t kMaxOpenBursts = 4096;
  absl::flat_hash_map<uint64_t, ExceptionBurst> by_thread_;
};

}  // namespace

std::string GcReasonName(uint32_t reason) {
  static constexpr const char* kNames[] = {
      "AllocSmall",    "Induced",         "LowMemory",          "Empty",
      "AllocLarge",    "OutOfSpaceSOH",   "OutOfSpaceLOH",      "InducedNotForced",
      "Internal",      "InducedLowMemory", "InducedCompacting", "LowMemoryHost",
      "PMFullGC",      "LowMemoryHostBlocking"};
  if (reason < std::size(kNames)) return kNames[reason];
  return absl::StrCat("reason ", reason);
}

absl::Status SummarizeDotnetEvents(const std::string& path, uint32_t pid,
                                   DotnetEventsSummary* summary) {
  *summary = DotnetEventsSummary();
  summary->pid = pid;
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  NettraceFdSource source(fd.get());
  NettraceReader reader(&source);
  if (absl::Status header = reader.ReadHeader(); !header.ok()) {
    summary->read_error = header;
    return absl::OkStatus();
  }
  const NettraceTraceInfo& trace = reader.trace();
  const double ms_per_tick =
      trace.qpc_frequency > 0 ? 1000.0 / static_cast<double>(trace.qpc_frequency) : 0;
  bool suspended = false;  // a GC suspension is under way, since suspended_at
  int64_t suspended_at = 0;
  uint64_t suspending_thread = 0;
  std::string gc_in_pause;  // the GC that started during the suspension
  ExceptionBursts bursts;
  absl::flat_hash_map<uint64_t, int64_t> jitting_since;  // by method id, bounded below
  constexpr size_t kMaxJittingAtOnce = 1 << 16;
  int64_t last_timestamp = trace.sync_time_qpc;
  NettraceEvent e;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&e);
    if (!more.ok()) {
      summary->read_error = more.status();
      break;
    }
    if (!*more) break;
    ++summary->events;
    last_timestamp = std::max(last_timestamp, e.timestamp);
    const NettraceEventMetadata& m = *e.metadata;
    if (m.provider != kDotNetRuntimeProvider) continue;
    switch (static_cast<RuntimeEventId>(m.event_id)) {
      case RuntimeEventId::kGcStart:
        if (auto gc = Ok(DecodeGcStart(e.payload, m.version))) {
          ++summary->gc.count;
          if (gc->reason == 1) ++summary->gc.induced;
          if (gc->depth < 3) ++summary->gc.by_generation[gc->depth];
          ++summary->gc.by_reason[GcReasonName(gc->reason)];
          if (suspended) {
            gc_in_pause = absl::StrCat("gen", gc->depth, " ", GcReasonName(gc->reason), " GC");
          }
        }
        break;
      case RuntimeEventId::kGcSuspendEeBegin:
        suspended = true;
        suspended_at = e.timestamp;
        suspending_thread = e.thread_id;
        gc_in_pause.clear();
        break;
      case RuntimeEventId::kGcRestartEeEnd:
        if (suspended && e.timestamp >= suspended_at) {
          double pause = TicksBetween(suspended_at, e.timestamp) * ms_per_tick;
          summary->gc.pause_ms_total += pause;
          summary->gc.pause_ms_max = std::max(summary->gc.pause_ms_max, pause);
          TimelineEvent event;
          event.start_ns = reader.ToMonotonicNs(suspended_at);
          event.duration_ns = reader.ToMonotonicNs(e.timestamp) - event.start_ns;
          event.thread_id = suspending_thread;
          // A suspension without a GC (a debugger's, a rejit's) pauses too.
          event.label = absl::StrFormat("%s, %.1f ms paused",
                                        gc_in_pause.empty() ? "runtime suspension" : gc_in_pause,
                                        pause);
          AddToTimeline(std::move(event), summary);
        }
        suspended = false;
        break;
      case RuntimeEventId::kGcHeapStats:
        if (auto stats = Ok(DecodeGcHeapStats(e.payload, m.version))) {
          uint64_t bytes = 0;
          for (uint64_t size : stats->generation_size) bytes += size;
          summary->gc.heap_mb_after_last = static_cast<double>(bytes) / (1024.0 * 1024.0);
        }
        break;
      case RuntimeEventId::kExceptionThrown:
        if (auto ex = Ok(DecodeExceptionThrown(e.payload, m.version, trace.pointer_size))) {
          ++summary->exceptions.count;
          bursts.Add(reader.ToMonotonicNs(e.timestamp), e.thread_id, ex->type, summary);
          // Type names come from the target: bound how many are kept.
          if (summary->exceptions.by_type.size() < 1000 ||
              summary->exceptions.by_type.count(ex->type) > 0) {
            ++summary->exceptions.by_type[ex->type];
          }
        }
        break;
      case RuntimeEventId::kContentionStart:
        ++summary->contention.count;
        break;
      case RuntimeEventId::kContentionStop:
        if (auto c = Ok(DecodeContentionStop(e.payload, m.version))) {
          summary->contention.wait_ms_total += c->duration_ns / 1e6;
        }
        break;
      case RuntimeEventId::kMethodJittingStarted:
        if (auto method = Ok(DecodeMethodJittingStarted(e.payload, m.version))) {
          if (jitting_since.size() < kMaxJittingAtOnce) {
            jitting_since[method->method_id] = e.timestamp;
          }
        }
        break;
      case RuntimeEventId::kMethodLoad:
        ++summary->jit.methods;
        break;
      case RuntimeEventId::kMethodLoadVerbose:
        ++summary->jit.methods;
        if (auto method = Ok(DecodeMethodLoadVerbose(e.payload, m.version))) {
          auto it = jitting_since.find(method->method_id);
          if (it != jitting_since.end()) {
            if (e.timestamp >= it->second) {
              summary->jit.ms_total += TicksBetween(it->second, e.timestamp) * ms_per_tick;
            }
            jitting_since.erase(it);
          }
        }
        break;
      case RuntimeEventId::kThreadPoolWorkerThreadStart:
      case RuntimeEventId::kThreadPoolWorkerThreadStop:
        if (auto t = Ok(DecodeThreadPoolWorkerThread(e.payload, m.version))) {
          if (m.event_id == static_cast<uint32_t>(RuntimeEventId::kThreadPoolWorkerThreadStart)) {
            ++summary->threadpool.worker_threads_started;
          } else {
            ++summary->threadpool.worker_threads_stopped;
          }
          summary->threadpool.max_worker_threads =
              std::max(summary->threadpool.max_worker_threads, t->active_worker_thread_count);
        }
        break;
      case RuntimeEventId::kThreadPoolWorkerThreadAdjustmentAdjustment:
        if (auto a = Ok(DecodeThreadPoolAdjustment(e.payload, m.version))) {
          ++summary->threadpool.adjustments;
          if (a->reason == 6) ++summary->threadpool.starvation_adjustments;
          summary->threadpool.max_worker_threads =
              std::max(summary->threadpool.max_worker_threads, a->new_worker_thread_count);
        }
        break;
      default:
        break;
    }
  }
  bursts.CloseAll(summary);
  // Bursts close when their thread's next throw comes, GC pauses when they end: keep
  // the lane in time order.
  std::stable_sort(summary->timeline.begin(), summary->timeline.end(),
                   [](const TimelineEvent& a, const TimelineEvent& b) {
                     return a.start_ns < b.start_ns;
                   });
  summary->window_ms = TicksBetween(trace.sync_time_qpc, last_timestamp) * ms_per_tick;
  return absl::OkStatus();
}

std::string DotnetEventsHeadline(const DotnetEventsSummary& s) {
  std::string line = absl::StrCat(WithCommas(s.gc.count), s.gc.count == 1 ? " GC, " : " GCs, ",
                                   WithCommas(static_cast<uint64_t>(s.gc.pause_ms_total + 0.5)),
                                   " ms paused");
  if (s.window_ms > 0) {
    absl::StrAppendFormat(&line, " (%.1f%%)", 100.0 * s.gc.pause_ms_total / s.window_ms);
  }
  absl::StrAppend(&line, ", ", WithCommas(s.exceptions.count),
                  s.exceptions.count == 1 ? " exception" : " exceptions");
  if (!s.exceptions.by_type.empty()) {
    auto most = std::max_element(s.exceptions.by_type.begin(), s.exceptions.by_type.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    absl::StrAppend(&line, s.exceptions.by_type.size() == 1 ? " (all " : " (mostly ",
                    most->first, ")");
  }
  return line;
}

}  // namespace profcpu::fold
