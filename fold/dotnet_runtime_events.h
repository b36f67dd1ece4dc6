// The run folder's .NET runtime events (dotnet/PID.nettrace): found, read
// and summarized again by every command that finishes a run, so postprocess
// of an archive gives the same "dotnet_events" and headline as the run did.
#ifndef PROFCPU_SCRIPTS_CLI_DOTNET_EVENTS_OUTPUT_H_
#define PROFCPU_SCRIPTS_CLI_DOTNET_EVENTS_OUTPUT_H_

#include <string>
#include <vector>

#include "base/run_log.h"
#include "collector/dotnet/dotnet_events_summary.h"
#include "fold/perf_script_writer.h"
#include "render/profile_page_writer.h"

namespace profcpu::cli {

struct DotnetEventsOutput {
  std::vector<std::string> files;  // relative to the run folder, by pid
  std::vector<collector::dotnet::DotnetEventsSummary> summaries;  // same order
};

// Reads every dotnet/PID.nettrace of `dir`; a damaged file is warned about
// (its name and the offset) and summarized as far as it reads.
DotnetEventsOutput ReadDotnetEvents(const std::string& dir, base::RunLog* log);

// Every process's timeline (GC pauses, bursts of exceptions), in time order:
// as perf_script.out's events ("dotnet:gc", "dotnet:exceptions") and as
// profile.html's events lane, in seconds from `start_ns` (time 0; earlier
// events are left out).
std::vector<fold::PerfScriptEvent> PerfScriptEventsOf(const DotnetEventsOutput& events);
std::vector<render::PageEvent> PageEventsOf(const DotnetEventsOutput& events, uint64_t start_ns);

// One headline per process, "; "-joined, prefixed with the pid when several.
std::string DotnetEventsHeadlines(const DotnetEventsOutput& events);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_DOTNET_EVENTS_OUTPUT_H_
