// What a collection is asked to do (collection.h runs it), and the
// combinations it refuses before anything starts.
#ifndef PROFCPU_COLLECTOR_COLLECTION_OPTIONS_H_
#define PROFCPU_COLLECTOR_COLLECTION_OPTIONS_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/run_log.h"
#include "collector/bpf_collection.h"
#include "collector/sampler.h"

namespace profcpu::collector {

struct Progress {
  absl::Duration elapsed;
  absl::Duration duration;  // zero: until the target exits
  uint64_t samples = 0;
  uint64_t lost = 0;
  pid_t target_pid = 0;  // the process or started command; 0 for containers and -a
};

struct CollectionOptions {
  SamplerOptions sampler;
  // What to measure (-mode) and who samples (-backend); see bpf_collection.h.
  BpfCollectionOptions profile;
  // The target: exactly one of these (collection_target.h).
  pid_t pid = 0;                      // a running process and its threads ...
  std::vector<std::string> command;   // ... a command profcpu starts ...
  std::string cgroup_dir;             // ... a container's cgroup v2 directory ...
  std::string container_id;           //     (its id, for messages)
  bool all_processes = false;         // ... or every process on the machine
  absl::Duration duration = absl::ZeroDuration();  // zero: no limit
  std::string recording_path;
  std::string profcpu_version;
  std::string command_line;           // profcpu's own, for the header
  // -perfmap auto: the target's .NET processes (those it starts too) write
  // perf maps and a jitdump for the run (dotnet/perfmap_session.h).
  bool manage_dotnet_perfmaps = false;
  // -dotnet-events on: the target's .NET processes (those it starts too)
  // stream their runtime's events, each saved as dotnet_events_dir/PID.nettrace
  // (dotnet/dotnet_events_session.h).
  bool dotnet_events = false;
  std::string dotnet_events_dir;
  // The most saved of one process's stream.
  uint64_t dotnet_events_max_bytes = uint64_t{256} << 20;
  // Where the perf maps of processes that run JIT code are copied while they
  // run (the run folder's jit/, perf_map_tailer.h); empty: not copied.
  std::string jit_copy_dir;
  // The most copied of one perf map; 0: PerfMapTailer's default (1 GiB).
  uint64_t perf_map_copy_max_bytes = 0;
  // Where the perf-map session says what it turned on and what failed.
  base::RunLog* log = nullptr;
  // Called about four times a second with the live counts.
  std::function<void(const Progress&)> on_progress;
  // Set from a signal handler to stop collection early (outputs still written).
  const std::atomic<bool>* stop_requested = nullptr;
  // Forwarded to a started command when stop_requested is set.
  const std::atomic<int>* stop_signal = nullptr;
};

// InvalidArgument, saying which flags clash, when `options` combine what a
// collection cannot do: -timestamps without -backend bpf, -mode wall on an
// event that does not count time, -callgraph dwarf off -backend perf -mode cpu.
absl::Status ValidateCollectionOptions(const CollectionOptions& options);

// The perf_map_copy_max_bytes that PROFCPU_PERF_MAP_MAX_BYTES asks for: it
// lowers the most copied of one perf map while the target runs (tests reach
// the cap without writing a gigabyte) and never raises it. 0 (the default)
// when unset, unreadable or not lower.
uint64_t PerfMapCopyCapFromEnv();

// The dotnet_events_max_bytes that PROFCPU_DOTNET_EVENTS_MAX_BYTES asks for:
// lowers the cap of each .NET process's event stream (tests see the budget
// thin a stream within seconds), never raises it; 0 when unset, unreadable
// or not lower than the default.
uint64_t DotnetEventsCapFromEnv();

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_COLLECTION_OPTIONS_H_
