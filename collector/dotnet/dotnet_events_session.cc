#include "collector/dotnet/dotnet_events_session.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collector/dotnet/diagnostics_client.h"
#include "nettrace/runtime_events.h"

namespace profcpu::collector::dotnet {
namespace {

// As PerfMapSession: a runtime creates its socket within milliseconds, a
// process without one after this long is not .NET.
constexpr uint64_t kNotDotnetAfterNs = 10'000'000'000;

uint64_t EventsClockNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

EventPipeConfig DotnetEventsConfig(uint64_t max_bytes) {
  EventPipeConfig config;
  config.providers.push_back(
      {std::string(nettrace::kDotNetRuntimeProvider), kDotnetEventsKeywords, kDotnetEventsLevel, ""});
  config.max_bytes = max_bytes;
  // At the session's end the runtime lists every method whose code is still
  // loaded (MethodDCEndVerbose) and every module (ModuleDCEnd): the names of
  // code compiled before the session began.
  config.request_rundown = true;
  // Each event with the managed stack of the thread that raised it: what
  // allocations, lock waits and exceptions are profiled by
  // (fold/dotnet_event_profiles.h). On by default in every runtime; only
  // CollectTracing3 (.NET 8+) could turn it off.
  config.request_stackwalk = true;
  return config;
}

void DotnetEventsSession::Watch(pid_t pid) {
  if (stopping_) return;
  auto [it, inserted] = watched_.try_emplace(pid);
  if (!inserted) return;
  it->second.since_ns = EventsClockNs();
  it->second.settled = Handle(pid);
}

void DotnetEventsSession::Poll() {
  if (stopping_) return;
  uint64_t now = EventsClockNs();
  for (auto& [pid, watched] : watched_) {
    if (watched.settled) continue;
    watched.settled = Handle(pid) || now - watched.since_ns > kNotDotnetAfterNs;
  }
}

bool DotnetEventsSession::Handle(pid_t pid) {
  auto target = FindDiagnosticsTarget(pid);
  if (absl::IsNotFound(target.status())) return false;  // not (yet) a .NET runtime
  if (!target.ok()) {
    // Out of reach (another user's process, under -a): whether it runs .NET
    // cannot be told, and the perf-map session already warns about it.
    log_->Info(absl::StrCat("no .NET runtime events for process ", pid, ": ",
                            target.status().message()));
    return true;
  }
  auto running = std::make_unique<Running>();
  running->path = absl::StrCat(dir_, "/", pid, ".nettrace");
  running->out = base::UniqueFd(
      ::open(running->path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!running->out.valid()) {
    log_->Warn(absl::StrCat("no .NET runtime events for process ", pid, ": cannot create ",
                            running->path));
    return true;
  }
  auto session = EventPipeSession::Start(*target, DotnetEventsConfig(max_bytes_));
  if (!session.ok()) {
    ::unlink(running->path.c_str());
    // Refused connection: the runtime has bound its socket but is not
    // listening yet (it is starting); asked again on the next poll until the
    // not-.NET deadline.
    if (absl::IsUnavailable(session.status())) return false;
    // The CPU profile goes on; only the runtime's events are missing.
    log_->Warn(absl::StrCat("no .NET runtime events for process ", pid,
                            " (the CPU profile is not affected): ", session.status().message()));
    return true;
  }
  running->session = std::move(*session);
  running->budget = std::make_unique<EventBudget>(max_bytes_, planned_seconds_);
  EventBudget* budget = running->budget.get();
  running->filter = std::make_unique<nettrace::NettraceStreamFilter>(
      [budget](const nettrace::NettraceEventMetadata& metadata, const nettrace::NettraceEvent&,
               size_t bytes, uint64_t time_ns) {
        return budget->Keep(metadata.provider, metadata.event_id, bytes, time_ns);
      });
  // Each event's stack comes in the stream's stack blocks, which pass whole.
  running->filter->set_on_pass([budget](size_t bytes) { budget->Charge(bytes); });
  running->session->set_filter(running->filter.get());
  if (facts_ != nullptr) facts_->NoteVersion(*target);
  log_->Info(absl::StrCat("started EventPipe session ", running->session->session_id(),
                          " on .NET process ", pid, " (GC, loader, JIT, contention, exception, "
                          "thread-pool events) into ", running->path));
  Running* raw = running.get();
  running->thread = std::thread([this, raw] { Copy(raw); });
  running_[pid] = std::move(running);
  return true;
}

void DotnetEventsSession::Copy(Running* running) {
  while (!stopping_) {
    auto ended = running->session->Pump(running->out.get(), absl::Now() + absl::Milliseconds(200));
    if (!ended.ok()) {
      running->status = ended.status();
      return;
    }
    if (*ended) {
      running->process_ended = true;
      break;
    }
  }
  // What follows StopTracing is the rundown: the reserve is for it.
  running->budget->StartRundown();
  running->status = running->session->Stop(running->out.get());
}

void DotnetEventsSession::Finish() {
  stopping_ = true;
  for (auto& [pid, running] : running_) {
    if (running->thread.joinable()) running->thread.join();
    const EventPipeSession& s = *running->session;
    std::vector<recording::DotnetRuntime::Dropped> dropped = running->budget->Dropped();
    if (facts_ != nullptr) {
      facts_->Of(pid).events_bytes = s.bytes_written();
      facts_->Of(pid).events_dropped = dropped;
    }
    if (!dropped.empty()) {
      std::string kinds;
      for (const auto& d : dropped) {
        absl::StrAppend(&kinds, kinds.empty() ? "" : ", ", d.kind, " ", d.count);
      }
      log_->Info(absl::StrCat("the .NET runtime events of process ", pid, " were thinned to stay "
                              "within ", max_bytes_, " bytes (", running->filter->events_dropped(),
                              " of ", running->filter->events_dropped() +
                                          running->filter->events_kept(),
                              " events dropped: ", kinds, "); metadata.json says from when"));
    }
    if (!s.filter_error().ok()) {
      log_->Warn(absl::StrCat("the .NET runtime events of process ", pid, " end early in ",
                              running->path, ": the stream could not be read on (",
                              s.filter_error().message(), ")"));
    }
    std::string size = absl::StrCat(s.bytes_written(), " bytes");
    if (!running->status.ok()) {
      log_->Warn(absl::StrCat("the .NET runtime events of process ", pid, " may be incomplete (",
                              size, " in ", running->path, "): ", running->status.message()));
    } else if (s.truncated()) {
      log_->Warn(absl::StrCat("the .NET runtime events of process ", pid, " were cut at ", size,
                              " (the cap) of ", s.bytes_read(), " in ", running->path));
    } else {
      log_->Info(absl::StrCat("saved the .NET runtime events of process ", pid, ": ", size,
                              " in ", running->path,
                              running->process_ended ? " (the process exited)" : ""));
    }
  }
  running_.clear();
  watched_.clear();
}

}  // namespace profcpu::collector::dotnet
