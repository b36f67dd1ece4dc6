// A process's environment (/proc/PID/environ): where a .NET runtime writes
// its perf map, jitdump and diagnostics socket depends on variables it was
// started with (DOTNET_PerfMapJitDumpPath, TMPDIR), not on ours.
#ifndef PROFCPU_COLLECTOR_PROC_PROCESS_ENVIRONMENT_H_
#define PROFCPU_COLLECTOR_PROC_PROCESS_ENVIRONMENT_H_

#include <sys/types.h>

#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::collector {

class ProcessEnvironment {
 public:
  // Parses NUL-separated NAME=VALUE entries; entries without '=' are ignored.
  static ProcessEnvironment Parse(absl::string_view environ_text);
  // Reads /proc/PID/environ (needs ptrace access to the process, i.e.
  // CAP_SYS_PTRACE for another user's process). At most 1 MiB is read.
  static absl::StatusOr<ProcessEnvironment> Read(pid_t pid, const std::string& proc = "/proc");

  std::optional<std::string> Get(absl::string_view name) const;

  // The directory the .NET runtime writes perf-PID.map and jit-PID.dump to:
  // DOTNET_PerfMapJitDumpPath (or COMPlus_...), else /tmp (coreclr perfmap.cpp).
  std::string DotnetPerfMapDirectory() const;
  // The directory of the diagnostics socket: $TMPDIR, else /tmp
  // (dotnet/diagnostics ipc-protocol.md).
  std::string TempDirectory() const;
  // DOTNET_PerfMapEnabled (or COMPlus_PerfMapEnabled) as set at start, if set.
  std::optional<std::string> DotnetPerfMapEnabled() const;

 private:
  absl::flat_hash_map<std::string, std::string> variables_;
};

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_PROC_PROCESS_ENVIRONMENT_H_
