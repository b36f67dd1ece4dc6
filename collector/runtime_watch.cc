#include "collector/runtime_watch.h"

#include <utility>

namespace profcpu::collector {
namespace {

// How often the .NET perf-map session looks at the processes it watches.
constexpr uint64_t kPerfMapPollIntervalNs = 1'000'000'000;
// A started .NET command's events begin once its diagnostics socket shows:
// looked for more often than perf maps, so few of its first events are lost.
constexpr uint64_t kDotnetEventsPollIntervalNs = 200'000'000;
// How often perf maps are looked for and their growth copied: a process that
// writes its map and removes it within one interval is missed.
constexpr uint64_t kPerfMapTailIntervalNs = 100'000'000;

}  // namespace

bool Due(uint64_t now_ns, uint64_t interval_ns, uint64_t* last_ns) {
  if (now_ns - *last_ns < interval_ns) return false;
  *last_ns = now_ns;
  return true;
}

void RuntimeWatch::StartDotnetSessions(const std::vector<pid_t>& existing) {
  if (options_.manage_dotnet_perfmaps && options_.log != nullptr) {
    perfmaps_.emplace(options_.log, &facts_);
    for (pid_t process : existing) perfmaps_->Watch(process);
  }
  if (options_.dotnet_events && !options_.dotnet_events_dir.empty() && options_.log != nullptr) {
    dotnet_events_.emplace(options_.dotnet_events_dir, options_.dotnet_events_max_bytes,
                           options_.log, &facts_,
                           static_cast<uint64_t>(absl::ToInt64Seconds(options_.duration)));
    for (pid_t process : existing) dotnet_events_->Watch(process);
  }
}

void RuntimeWatch::StartPerfMapCopies() {
  if (options_.jit_copy_dir.empty()) return;
  PerfMapTailer::Limits limits;
  if (options_.perf_map_copy_max_bytes > 0) {
    limits.max_file_bytes = options_.perf_map_copy_max_bytes;
  }
  tailer_.emplace(options_.jit_copy_dir, limits);
}

void RuntimeWatch::WatchStartedCommand(pid_t pid) {
  if (perfmaps_) perfmaps_->Watch(pid);
  if (dotnet_events_) dotnet_events_->Watch(pid);
}

void RuntimeWatch::NoteNewProcess(pid_t pid) {
  if (dotnet_events_) new_processes_.push_back(pid);
}

void RuntimeWatch::Tick(uint64_t now_ns) {
  if (perfmaps_ && Due(now_ns, kPerfMapPollIntervalNs, &last_perfmap_poll_ns_)) perfmaps_->Poll();
  if (dotnet_events_) {
    for (pid_t started : new_processes_) dotnet_events_->Watch(started);
    new_processes_.clear();
    if (Due(now_ns, kDotnetEventsPollIntervalNs, &last_dotnet_events_poll_ns_)) {
      dotnet_events_->Poll();
    }
  }
  if (tailer_ && Due(now_ns, kPerfMapTailIntervalNs, &last_perfmap_tail_ns_)) tailer_->Tick();
}

std::vector<recording::DotnetRuntime> RuntimeWatch::StopSessions(uint64_t time_ns) {
  if (perfmaps_) perfmaps_->Finish();
  if (dotnet_events_) dotnet_events_->Finish();
  std::vector<recording::DotnetRuntime> runtimes = facts_.Records(time_ns);
  // -perfmap off: profcpu neither looked nor touched them.
  for (recording::DotnetRuntime& runtime : runtimes) {
    if (!perfmaps_ && runtime.perf_maps.empty()) runtime.perf_maps = "not_managed";
  }
  return runtimes;
}

void RuntimeWatch::FinishPerfMapCopies(std::vector<TailedPerfMap>* perf_maps,
                                       std::vector<std::string>* warnings,
                                       std::vector<std::string>* notes) {
  if (!tailer_) return;
  *perf_maps = tailer_->Finish();
  for (std::string& w : tailer_->TakeWarnings()) warnings->push_back(std::move(w));
  for (const TailedPerfMap& map : *perf_maps) notes->push_back(DescribeTailedPerfMap(map));
}

}  // namespace profcpu::collector
