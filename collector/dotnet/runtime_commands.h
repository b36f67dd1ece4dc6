// The diagnostics commands profcpu sends a .NET runtime: who are you
// (ProcessInfo2), and turn perf maps on or off (.NET 8+).
#ifndef PROFCPU_COLLECTOR_DOTNET_RUNTIME_COMMANDS_H_
#define PROFCPU_COLLECTOR_DOTNET_RUNTIME_COMMANDS_H_

#include "absl/status/statusor.h"
#include "collector/dotnet/diagnostics_client.h"
#include "collector/dotnet/ipc_protocol.h"

namespace profcpu::collector::dotnet {

absl::StatusOr<ProcessInfo2> QueryProcessInfo(const DiagnosticsTarget& target);

// Starts writing perf-PID.map and/or jit-PID.dump and replays every method
// already compiled (and, for jitdump, every precompiled ReadyToRun method)
// into them. Unimplemented on runtimes before .NET 8, with what to do instead.
absl::Status EnablePerfMap(const DiagnosticsTarget& target, PerfMapType type);
absl::Status DisablePerfMap(const DiagnosticsTarget& target);

// Parses "all", "jitdump", "perfmap".
absl::StatusOr<PerfMapType> ParsePerfMapType(absl::string_view name);

}  // namespace profcpu::collector::dotnet

#endif  // PROFCPU_COLLECTOR_DOTNET_RUNTIME_COMMANDS_H_
