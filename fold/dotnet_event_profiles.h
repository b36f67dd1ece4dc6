// The .NET runtimes' events that carry a managed stack, turned into profiles
// of their own beside the CPU profile: where the app allocates
// (GCAllocationTick, ~every 100 KB, weighted by the bytes since the last
// tick, the allocated type as the leaf frame), where its threads wait on
// locks (ContentionStart/Stop, weighted by the microseconds waited) and
// where it throws (ExceptionThrown, one per throw, the exception's type as
// the leaf frame).
//
// Read from the run folder alone (dotnet/PID.nettrace), so postprocess of an
// archive on a laptop rebuilds them. Each event's managed frames are named
// as the CPU samples' JIT frames are: each return address becomes a
// kProcess location of the event's process, its generation asked of the
// replay's JitCodeHistory at the event's time (perf map, jitdump or method
// events; time-correct), and the locations join the symbolizer's requests
// before the one naming pass. The leaf type frames are named by the profile
// itself (known_names), like the replay's synthetic frames.
//
//   ReadDotnetEventStacks(dir, jit, log)   after the replay, before symbols
//      -> DotnetEventProfiles (unnamed) + requests + known_names
//   profiles.SetSymbols(table)             after symbols: every profile named
//   render's WriteRunOutputs               alloc_stacks.out, lock_wait_stacks.out,
//                                          exception_stacks.out, profile.html's
//                                          switch, -format pprof's files
#ifndef PROFCPU_FOLD_DOTNET_EVENT_PROFILES_H_
#define PROFCPU_FOLD_DOTNET_EVENT_PROFILES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/run_log.h"
#include "fold/profile.h"
#include "recording/run_folder.h"
#include "recording/records.h"
#include "symbolize/code_location.h"
#include "symbolize/jit_history.h"
#include "symbolize/symbol_table.h"

namespace profcpu::fold {

enum class DotnetEventKind : uint8_t { kAlloc, kLockWait, kException };

// One profile per kind. Each sample is one event: time_ns (CLOCK_MONOTONIC,
// as CPU samples), pid (as recorded, the file's name), tid (the runtime's
// thread id, the tid in the process's own pid namespace), comm (the
// process's name from the recording), period (the weight, below), stack
// (outermost last, as the CPU profile's: Location ids, the leaf first).
struct DotnetEventProfile {
  DotnetEventKind kind = DotnetEventKind::kAlloc;
  // kAlloc: bytes (GCAllocationTick's amount since the previous tick on
  // that heap; not scaled for ticks the stream lost, see `dropped`);
  // kLockWait: microseconds waited (ContentionStop's duration, else Start
  // to Stop on the thread; at least 1), the sample's time the wait's start;
  // kException: 1 per throw. Each sample's event string is the kind's name.
  Profile profile;
  uint64_t events = 0;       // events with a stack that became samples
  uint64_t weight = 0;       // sum of the samples' periods
  uint64_t no_stack = 0;     // events of this kind whose stack was missing
  // Events of this kind the collector's budget dropped (the recording's
  // counts, CountDotnetEventsDropped); the weights above are not scaled
  // for them.
  uint64_t dropped = 0;
  // kLockWait: a ContentionStart without its Stop (the session ended, or
  // the thread started another wait) or a Stop without its Start and no
  // duration: no length to weigh.
  uint64_t unpaired = 0;
  // Events past the bound on samples held per kind (the stream is the
  // target's): not in `profile`.
  uint64_t over_limit = 0;
};

// The names profiles and files use: "alloc" / "lock_wait" / "exception",
// "alloc_stacks.out" / "lock_wait_stacks.out" / "exception_stacks.out", and
// the unit of a sample's period ("bytes", "microseconds", "throws").
// constexpr: render's tables of the outputs are built from them.
constexpr const char* DotnetEventKindName(DotnetEventKind kind) {
  switch (kind) {
    case DotnetEventKind::kAlloc: return "alloc";
    case DotnetEventKind::kLockWait: return "lock_wait";
    case DotnetEventKind::kException: return "exception";
  }
  return "";
}
constexpr const char* DotnetEventStacksFile(DotnetEventKind kind) {
  switch (kind) {
    case DotnetEventKind::kAlloc: return recording::kAllocStacksFile;
    case DotnetEventKind::kLockWait: return recording::kLockWaitStacksFile;
    case DotnetEventKind::kException: return recording::kExceptionStacksFile;
  }
  return "";
}
constexpr const char* DotnetEventUnit(DotnetEventKind kind) {
  switch (kind) {
    case DotnetEventKind::kAlloc: return "bytes";
    case DotnetEventKind::kLockWait: return "microseconds";
    case DotnetEventKind::kException: return "throws";
  }
  return "";
}

struct DotnetEventProfiles {
  // kAlloc, kLockWait, kException, in that order, each present (maybe
  // empty) when any dotnet/PID.nettrace was read; empty when none was.
  std::vector<DotnetEventProfile> profiles;
  // Locations the symbolizer must name (their CodeLocations, deduplicated,
  // with mapping names for hints) and the names the reading gave itself
  // (the leaf type frames).
  std::vector<symbolize::SymbolRequest> requests;
  symbolize::SymbolTable known_names;

  // After the naming pass: every profile's symbols from `table` (the run's
  // table, which holds `requests` and `known_names`).
  void SetSymbols(const symbolize::SymbolTable& table);
};

// Reads every dotnet/PID.nettrace of the run folder `dir` (bounded, as
// nettrace/reader.h); a damaged file is warned about once and read as far
// as it goes. `jit` (may be null) gives JIT generations at each event's
// time; `comm_of_pid` names each process's root frame (may return "").
DotnetEventProfiles ReadDotnetEventStacks(const std::string& dir, symbolize::JitCodeHistory* jit,
                                          const std::function<std::string(uint32_t)>& comm_of_pid,
                                          base::RunLog* log);

// Fills each profile's `dropped` from the recording's DotnetRuntime records
// (what the collector's volume budget left out, by event name):
// GCAllocationTick, ContentionStop (a wait whose length was lost),
// ExceptionThrown. Drops counted as "all" (past the hard cap) name no kind.
void CountDotnetEventsDropped(const std::vector<recording::DotnetRuntime>& runtimes,
                              DotnetEventProfiles* profiles);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_DOTNET_EVENT_PROFILES_H_
