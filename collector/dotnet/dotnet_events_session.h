// `-dotnet-events on` (the default): one EventPipe session per .NET process of
// a run, with the runtime provider's GC, loader, JIT, contention, exception
// and thread-pool keywords, each stream saved as it arrives to
// DIR/PID.nettrace (docs/nettrace.md). A thread per session copies the
// stream so a busy runtime never waits on profcpu's sampling loop; the
// owner's thread only starts sessions (Watch/Poll) and stops them (Finish).
// A runtime that refuses (or is too old) gets one log line and no file; the
// CPU profile is not affected.
#ifndef PROFCPU_COLLECTOR_DOTNET_DOTNET_EVENTS_SESSION_H_
#define PROFCPU_COLLECTOR_DOTNET_DOTNET_EVENTS_SESSION_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "base/run_log.h"
#include "base/unique_fd.h"
#include "collector/dotnet/event_budget.h"
#include "collector/dotnet/eventpipe_session.h"
#include "collector/dotnet/runtime_facts.h"

namespace profcpu::collector::dotnet {

// The runtime provider's keywords profcpu asks for: GC 0x1, Loader 0x8,
// JIT 0x10, Contention 0x4000, Exception 0x8000, Threading 0x10000.
inline constexpr uint64_t kDotnetEventsKeywords = 0x1 | 0x8 | 0x10 | 0x4000 | 0x8000 | 0x10000;
// Verbose: the JIT keyword's MethodLoadVerbose and MethodJittingStarted (each
// JIT'd method's name, code range and compile time, what names managed frames
// without perf maps) come only at this level, as perfcollect enables them.
// What it adds beside them is GCAllocationTick, one event per ~100 KB
// allocated (docs/dotnet-events-cost.md measures the cost).
inline constexpr uint32_t kDotnetEventsLevel = 5;

EventPipeConfig DotnetEventsConfig(uint64_t max_bytes);

class DotnetEventsSession {
 public:
  // `dir` must exist; `max_bytes` caps each process's file, which the
  // budget spreads over `planned_seconds` (the -duration; 0: none given).
  // `facts` (may be null) learns each runtime's version and what its stream
  // kept and dropped.
  DotnetEventsSession(std::string dir, uint64_t max_bytes, base::RunLog* log,
                      RuntimeFacts* facts = nullptr, uint64_t planned_seconds = 0)
      : dir_(std::move(dir)),
        max_bytes_(max_bytes),
        planned_seconds_(planned_seconds),
        log_(log),
        facts_(facts) {}
  ~DotnetEventsSession() { Finish(); }
  DotnetEventsSession(const DotnetEventsSession&) = delete;
  DotnetEventsSession& operator=(const DotnetEventsSession&) = delete;

  // Considers `pid` now and on later polls until its runtime answers or it
  // shows no diagnostics socket for a while (not .NET).
  void Watch(pid_t pid);
  void Poll();
  // Stops every session (StopTracing, the rest of the stream copied) and
  // joins the threads; logs how each ended. The files stay.
  void Finish();

 private:
  struct Running {
    std::unique_ptr<EventBudget> budget;
    std::unique_ptr<nettrace::NettraceStreamFilter> filter;
    std::unique_ptr<EventPipeSession> session;
    base::UniqueFd out;
    std::string path;
    std::thread thread;
    absl::Status status;       // written by the thread, read after join
    bool process_ended = false;
  };
  struct Watched {
    uint64_t since_ns = 0;
    bool settled = false;
  };
  bool Handle(pid_t pid);
  void Copy(Running* running);

  std::string dir_;
  uint64_t max_bytes_;
  uint64_t planned_seconds_;
  base::RunLog* log_;
  RuntimeFacts* facts_;
  std::map<pid_t, Watched> watched_;
  std::map<pid_t, std::unique_ptr<Running>> running_;
  std::atomic<bool> stopping_{false};
};

}  // namespace profcpu::collector::dotnet

#endif  // PROFCPU_COLLECTOR_DOTNET_DOTNET_EVENTS_SESSION_H_
