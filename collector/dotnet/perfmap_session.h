// `-perfmap auto`: makes the .NET processes of a run write perf maps and a
// jitdump while profcpu samples them, through their diagnostics sockets.
//  - Off: turned on for the run (the runtime replays what it compiled so far,
//    ReadyToRun code included, into the jitdump) and off again at the end.
//  - On, but the jitdump stopped (the runtime drops it after a failed write,
//    as .NET 10 does at startup): revived, which replays precompiled code;
//    left on, as configured.
// Processes are watched until their runtime answers (a command profcpu
// starts has no diagnostics socket for its first moments), and their jitdump
// is revived whenever the runtime drops it during the run (a new stub block
// can make it fail at any time). Without this, managed frames are [unknown].
#ifndef PROFCPU_COLLECTOR_DOTNET_PERFMAP_SESSION_H_
#define PROFCPU_COLLECTOR_DOTNET_PERFMAP_SESSION_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "base/run_log.h"
#include "collector/dotnet/diagnostics_client.h"
#include "collector/dotnet/runtime_facts.h"

namespace profcpu::collector::dotnet {

class PerfMapSession {
 public:
  // `facts` (may be null) learns each runtime's version and how its perf
  // maps came to be on.
  PerfMapSession(base::RunLog* log, RuntimeFacts* facts) : log_(log), facts_(facts) {}
  // Finishes (turns off what it turned on) if the owner did not.
  ~PerfMapSession() { Finish(); }
  PerfMapSession(const PerfMapSession&) = delete;
  PerfMapSession& operator=(const PerfMapSession&) = delete;
  // Considers `pid` now and on later polls until its runtime answers or
  // it shows no diagnostics socket for a while (not .NET).
  void Watch(pid_t pid);
  // Handles watched processes; cheap enough to call about once a second.
  void Poll();
  // Turns off what this session turned on. The files stay for symbolization.
  void Finish();

 private:
  struct Watched {
    uint64_t since_ns = 0;  // when first watched
    bool settled = false;   // nothing more to do
    std::optional<DiagnosticsTarget> runtime;  // once it answered
    int revivals = 0;
  };
  // Turns maps on or revives the jitdump as needed; true once settled.
  bool Handle(pid_t pid, Watched* watched);

  // Where `pid`'s perf maps stand: recording::DotnetRuntime::perf_maps.
  void Note(pid_t pid, const char* perf_maps);

  base::RunLog* log_;
  RuntimeFacts* facts_;
  std::map<pid_t, Watched> watched_;
  std::vector<DiagnosticsTarget> enabled_;
};

}  // namespace profcpu::collector::dotnet

#endif  // PROFCPU_COLLECTOR_DOTNET_PERFMAP_SESSION_H_
