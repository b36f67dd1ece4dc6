// What a collection does for the JIT code in the target's processes, beside
// sampling them: turns .NET perf maps on for the run, streams the .NET
// runtime's events, and copies the perf map of any process running JIT code
// while it runs. Each is optional (CollectionOptions); the sampling loop
// gives them time through Tick.
#ifndef PROFCPU_COLLECTOR_RUNTIME_WATCH_H_
#define PROFCPU_COLLECTOR_RUNTIME_WATCH_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collector/collection_options.h"
#include "collector/dotnet/dotnet_events_session.h"
#include "collector/dotnet/perfmap_session.h"
#include "collector/perf_map_tailer.h"
#include "collector/dotnet/runtime_facts.h"
#include "recording/records.h"

namespace profcpu::collector {

class RuntimeWatch {
 public:
  // Starts nothing yet; `options` must outlive it.
  explicit RuntimeWatch(const CollectionOptions& options) : options_(options) {}
  RuntimeWatch(const RuntimeWatch&) = delete;
  RuntimeWatch& operator=(const RuntimeWatch&) = delete;

  // The .NET sessions the options ask for, watching the target's processes
  // as they stand now (`existing`); a started command is watched once it
  // runs (WatchStartedCommand).
  void StartDotnetSessions(const std::vector<pid_t>& existing);
  // Perf maps are copied to options.jit_copy_dir, when set, from now on.
  void StartPerfMapCopies();
  // nullptr when perf maps are not copied.
  PerfMapTailer* tailer() { return tailer_ ? &*tailer_ : nullptr; }

  // A started command becomes a .NET runtime some moments after it starts.
  void WatchStartedCommand(pid_t pid);
  // A process forked during collection: its events session starts at the
  // next Tick, not here (called from the sampler's callback, and starting a
  // session talks to the runtime).
  void NoteNewProcess(pid_t pid);
  // Called on every turn of the sampling loop; each chore runs at its own
  // interval.
  void Tick(uint64_t now_ns);

  // Turns off what the sessions turned on; the files stay for symbolization.
  // Returns what they learned of each .NET runtime, stamped `time_ns`, for
  // the recording.
  std::vector<recording::DotnetRuntime> StopSessions(uint64_t time_ns);
  // After the last mmap record (every JIT process is watched by then): the
  // perf maps as copied, with the copier's warnings and a note for each map.
  void FinishPerfMapCopies(std::vector<TailedPerfMap>* perf_maps,
                           std::vector<std::string>* warnings, std::vector<std::string>* notes);

 private:
  const CollectionOptions& options_;
  dotnet::RuntimeFacts facts_;
  std::optional<dotnet::PerfMapSession> perfmaps_;
  std::optional<dotnet::DotnetEventsSession> dotnet_events_;
  std::vector<pid_t> new_processes_;  // forked since the last Tick
  std::optional<PerfMapTailer> tailer_;
  // When each chore last ran; 0: never, so each runs at the first Tick.
  uint64_t last_perfmap_poll_ns_ = 0;
  uint64_t last_dotnet_events_poll_ns_ = 0;
  uint64_t last_perfmap_tail_ns_ = 0;
};

// Whether `interval_ns` has passed since `*last_ns`; if so, `*last_ns`
// becomes `now_ns`. For chores of the sampling loop.
bool Due(uint64_t now_ns, uint64_t interval_ns, uint64_t* last_ns);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_RUNTIME_WATCH_H_
