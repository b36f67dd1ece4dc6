// `collect -perfmap auto`: a .NET 8+ target started without perf maps gets
// them turned on for the run (through its diagnostics socket; the runtime
// replays every method compiled so far, and logs ReadyToRun code into the
// jitdump as it is first called) and off again afterwards. Without it every
// managed frame would be [unknown].
#ifndef PROFCPU_SCRIPTS_CLI_PERFMAP_SESSION_H_
#define PROFCPU_SCRIPTS_CLI_PERFMAP_SESSION_H_

#include <sys/types.h>

#include <vector>

#include "collector/dotnet/diagnostics_client.h"
#include "scripts/cli/run_log.h"

namespace profcpu::cli {

class PerfMapSession {
 public:
  // Turns perf maps on for each .NET process in `pids` that lacks them, and
  // logs (with the fix) where that is impossible.
  static PerfMapSession Start(const std::vector<pid_t>& pids, RunLog* log);
  // Turns off what Start turned on. The files stay for symbolization.
  void Finish(RunLog* log);

 private:
  std::vector<collector::dotnet::DiagnosticsTarget> enabled_;
};

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_PERFMAP_SESSION_H_
