// Whether a .NET process is writing its perf map and jitdump right now. The
// environment only says what was configured at start: maps can be turned on
// and off at run time, the files stay behind when they are off, and the
// runtime silently stops its jitdump when a write fails (coreclr
// perfjitdump.cpp: FatalError), which happens at startup on .NET 10 when a
// stub block is not fully readable. What the runtime holds open is the truth.
#ifndef PROFCPU_COLLECTOR_DOTNET_PERFMAP_STATE_H_
#define PROFCPU_COLLECTOR_DOTNET_PERFMAP_STATE_H_

#include <sys/types.h>

#include <optional>
#include <string>

namespace profcpu::collector::dotnet {

struct PerfMapState {
  bool perf_map_open = false;  // perf-PID.map held open by the runtime
  bool jitdump_open = false;   // jit-PID.dump held open by the runtime
  // DOTNET_PerfMapEnabled (or COMPlus_) as set at start, if set.
  std::optional<std::string> configured;
};

// nullopt when the process's files cannot be inspected (gone, or no
// ptrace access).
std::optional<PerfMapState> ReadPerfMapState(pid_t pid, const std::string& proc = "/proc");

}  // namespace profcpu::collector::dotnet

#endif  // PROFCPU_COLLECTOR_DOTNET_PERFMAP_STATE_H_
