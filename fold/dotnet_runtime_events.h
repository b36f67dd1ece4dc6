// The run folder's .NET runtime events (dotnet/PID.nettrace): found, read
// and summarized again by every command that finishes a run, so postprocess
// of an archive gives the same "dotnet_events" and headline as the run did.
// profile.html's events lane is drawn from the same timelines
// (render/dotnet_page_events.h).
#ifndef PROFCPU_FOLD_DOTNET_RUNTIME_EVENTS_H_
#define PROFCPU_FOLD_DOTNET_RUNTIME_EVENTS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/run_log.h"
#include "fold/dotnet_events_summary.h"

namespace profcpu::fold {

struct DotnetEventsOutput {
  std::vector<std::string> files;  // relative to the run folder, by pid
  std::vector<DotnetEventsSummary> summaries;  // same order
};

// The run folder's saved streams, dotnet/PID.nettrace, as (pid, file name)
// sorted by pid; none when the folder has no dotnet/.
std::vector<std::pair<uint32_t, std::string>> DotnetEventFiles(const std::string& dir);

// Reads every dotnet/PID.nettrace of `dir`; a damaged file is warned about
// (its name and the offset) and summarized as far as it reads.
DotnetEventsOutput ReadDotnetEvents(const std::string& dir, base::RunLog* log);

// (pid, event) pairs of every process's timeline (GC pauses, bursts of
// exceptions), in time order; events of one time keep the processes' order.
// The pointers are into `events`.
std::vector<std::pair<uint32_t, const DotnetEventsSummary::TimelineEvent*>> MergedDotnetTimeline(
    const DotnetEventsOutput& events);

// One headline per process, "; "-joined, prefixed with the pid when several.
std::string DotnetEventsHeadlines(const DotnetEventsOutput& events);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_DOTNET_RUNTIME_EVENTS_H_
