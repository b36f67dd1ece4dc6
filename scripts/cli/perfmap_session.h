// `-perfmap auto`: makes the .NET processes of a run write perf maps and a
// jitdump while profcpu samples them, through their diagnostics sockets.
//  - Off: turned on for the run (the runtime replays what it compiled so far,
//    ReadyToRun code included, into the jitdump) and off again at the end.
//  - On, but the jitdump stopped (the runtime drops it after a failed write,
//    as .NET 10 does at startup): revived, which replays precompiled code;
//    left on, as configured.
// Processes are watched until their runtime answers (a command profcpu
// starts has no diagnostics socket for its first moments). Without this,
// managed frames are [unknown].
#ifndef PROFCPU_SCRIPTS_CLI_PERFMAP_SESSION_H_
#define PROFCPU_SCRIPTS_CLI_PERFMAP_SESSION_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <vector>

#include "collector/dotnet/diagnostics_client.h"
#include "scripts/cli/run_log.h"

namespace profcpu::cli {

class PerfMapSession {
 public:
  explicit PerfMapSession(RunLog* log) : log_(log) {}
  // Considers `pid` now and on later polls until its runtime answers or
  // it shows no diagnostics socket for a while (not .NET).
  void Watch(pid_t pid);
  // Handles watched processes; cheap enough to call about once a second.
  void Poll();
  // Turns off what this session turned on. The files stay for symbolization.
  void Finish();

 private:
  // True once the process needs no more attention.
  bool Handle(pid_t pid);

  RunLog* log_;
  std::map<pid_t, uint64_t> watched_;  // pid -> when first watched (monotonic ns)
  std::vector<collector::dotnet::DiagnosticsTarget> enabled_;
};

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_PERFMAP_SESSION_H_
