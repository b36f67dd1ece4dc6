// One profiling run: attach to the target (a running process, or a command
// profcpu starts), sample until the duration passes, a signal arrives or the
// target exits, and write everything to a recording as it goes.
#ifndef PROFCPU_COLLECTOR_COLLECTION_H_
#define PROFCPU_COLLECTOR_COLLECTION_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/rooted_open.h"
#include "collector/collection_options.h"
#include "collector/monotonic_clock.h"  // MonotonicNowNs, which Collect stamps with
#include "collector/perf_map_tailer.h"
#include "collector/sampler.h"
#include "recording/records.h"

namespace profcpu::collector {

struct CollectionResult {
  SamplerCounters counters;
  std::string stop_reason;     // "duration", "signal", "target exited"
  int command_exit_code = -1;  // record mode: the command's exit code
  bool kernel_stacks = true;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  // facts worth a line in the log
  pid_t target_pid = 0;  // pid or command mode; 0 for a container or every process
  uint64_t start_time_ns = 0;
  uint64_t end_time_ns = 0;
  // The root directory of every process seen, opened while it lived, so its
  // files can be read after it exits (see base::RootDir).
  std::map<uint32_t, std::shared_ptr<base::RootDir>> roots;
  // How each process seen sees itself (also in the recording).
  std::vector<recording::ProcessInfo> processes;
  // The perf map of each process seen to run JIT code, as copied (or looked
  // for in vain) while it ran.
  std::vector<TailedPerfMap> perf_maps;
};

absl::StatusOr<CollectionResult> Collect(const CollectionOptions& options);

// Whether Collect's `error` came before any sample was taken (the target or
// the options were refused, or the machine cannot sample): nothing recorded
// is worth keeping then.
bool IsStartupError(const absl::Status& error);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_COLLECTION_H_
