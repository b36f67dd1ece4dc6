// The run folder's .NET runtime events (dotnet/PID.nettrace): found, read
// and summarized again by every command that finishes a run, so postprocess
// of an archive gives the same "dotnet_events" and headline as the run did.
#ifndef PROFCPU_SCRIPTS_CLI_DOTNET_EVENTS_OUTPUT_H_
#define PROFCPU_SCRIPTS_CLI_DOTNET_EVENTS_OUTPUT_H_

#include <string>
#include <vector>

#include "base/run_log.h"
#include "collector/dotnet/dotnet_events_summary.h"

namespace profcpu::cli {

struct DotnetEventsOutput {
  std::vector<std::string> files;  // relative to the run folder, by pid
  std::vector<collector::dotnet::DotnetEventsSummary> summaries;  // same order
};

// Reads every dotnet/PID.nettrace of `dir`; a damaged file is warned about
// (its name and the offset) and summarized as far as it reads.
DotnetEventsOutput ReadDotnetEvents(const std::string& dir, base::RunLog* log);

// One headline per process, "; "-joined, prefixed with the pid when several.
std::string DotnetEventsHeadlines(const DotnetEventsOutput& events);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_DOTNET_EVENTS_OUTPUT_H_
