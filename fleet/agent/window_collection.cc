#include "fleet/agent/window_collection.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/run_log.h"
#include "base/status_macros.h"
#include "collector/collection.h"
#include "fleet/agent/window_profile.h"
#include "fleet/store/stable_id.h"
#include "recording/run_folder.h"
#include "symbolize/rooted_process_files.h"

namespace profcpu::fleet {

absl::Duration WindowLength(absl::Time start, absl::Duration window) {
  constexpr int64_t kDayNs = int64_t{86400} * 1'000'000'000;
  const int64_t since_midnight_ns = absl::ToUnixNanos(start) % kDayNs;
  return std::min(window, absl::Nanoseconds(kDayNs - since_midnight_ns));
}

namespace {

// The processes running now: what the symbol cache keeps perf maps for.
absl::flat_hash_set<uint32_t> LivePids() {
  absl::flat_hash_set<uint32_t> pids;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    uint32_t pid = 0;
    if (absl::SimpleAtoi(entry.path().filename().string(), &pid)) pids.insert(pid);
  }
  return pids;
}

// Removes the window's folder however the window ended.
class FolderGuard {
 public:
  explicit FolderGuard(std::string folder) : folder_(std::move(folder)) {}
  ~FolderGuard() {
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
  }

 private:
  std::string folder_;
};

}  // namespace

absl::StatusOr<TakenWindow> TakeWindow(const collector::CollectionOptions& base,
                                       absl::Duration window, const std::string& folder,
                                       const std::string& node, ProcessLabelCache* labels,
                                       symbolize::LoadedSymbolCache* symbols) {
  if (::mkdir(folder.c_str(), 0700) != 0) {
    return absl::InternalError(absl::StrCat("create ", folder, ": ", std::strerror(errno)));
  }
  FolderGuard guard(folder);
  collector::CollectionOptions options = base;
  const absl::Time start = absl::Now();
  options.duration = WindowLength(start, window);
  options.recording_path = absl::StrCat(folder, "/", recording::kRecordingFile);
  // No copies of perf maps per window: naming reads them in place, and the
  // symbol cache continues each map from where the last window stopped (a
  // copy per window would cost what the map has grown to since start).
  options.jit_copy_dir.clear();
  base::RunLog log;  // kept in memory: the window's warnings are returned
  log.set_echo_warnings(false);
  options.log = &log;
  PROFCPU_ASSIGN_OR_RETURN(collector::CollectionResult collected, collector::Collect(options));
  TakenWindow taken;
  taken.collected = absl::Now() - start;
  taken.stopped = collected.stop_reason == "signal";
  taken.window_id = StableId({node, absl::StrCat(absl::ToUnixNanos(start))});

  const absl::Time naming = absl::Now();
  symbolize::RootedProcessFiles files(collected.roots, nullptr, collected.processes);
  absl::flat_hash_set<uint32_t> perf_map_never_seen;
  for (const collector::TailedPerfMap& map : collected.perf_maps) {
    if (!map.found && map.problem.empty()) perf_map_never_seen.insert(map.pid);
  }
  files.SetPerfMapNeverSeen(std::move(perf_map_never_seen));
  PROFCPU_ASSIGN_OR_RETURN(NamedWindow named, NameWindow(folder, &files, symbols, &log));
  symbols->EndRun(LivePids());
  taken.samples = named.summary.samples;
  taken.lost = named.summary.lost_ring_buffer + named.summary.lost_dropped +
               named.summary.lost_bpf_ring_buffer + named.summary.lost_bpf_map_full;
  WindowClock clock{named.summary.header.start_time_ns, named.summary.header.start_realtime_ns,
                    named.summary.weighted};
  taken.rows = BuildWindowRows(named.profile, clock, [&](uint32_t pid, const std::string& comm) {
    ProcessLabels known = *labels->Get(static_cast<pid_t>(pid));
    known.node = node;
    if (known.comm.empty()) known.comm = comm;  // gone before it was read
    return known;
  });
  taken.named = absl::Now() - naming;
  taken.warnings = log.warnings();
  return taken;
}

}  // namespace profcpu::fleet
