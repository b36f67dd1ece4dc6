// The .NET event profiles' place in a run's pipeline, between fold's
// replay and the one naming pass, and after postprocess's filters: what
// scripts/cli/pipeline.cc calls so the command layer only wires.
#ifndef PROFCPU_FOLD_DOTNET_EVENT_STACKS_OF_RUN_H_
#define PROFCPU_FOLD_DOTNET_EVENT_STACKS_OF_RUN_H_

#include <string>

#include "base/run_log.h"
#include "fold/dotnet_event_profiles.h"
#include "fold/profile_builder.h"
#include "fold/profile_filter.h"
#include "fold/recording_summary.h"
#include "symbolize/jit_history.h"

namespace profcpu::fold {

// The .NET runtimes' event stacks (allocations, lock waits, exceptions)
// from the run folder's dotnet/PID.nettrace, each frame a location of its
// process at the event's time, each process rooted at the name the CPU
// profile's folded stacks give it. Their locations join the replay's
// requests (those not there already) and their type frames' names its known
// names, so the one naming pass names both; drops come from the recording.
DotnetEventProfiles ReadDotnetEventStacksOfRun(const std::string& dir,
                                               symbolize::JitCodeHistory* jit, BuiltProfile* built,
                                               base::RunLog* log);

// postprocess's -pid and -from/-to apply to the event profiles as to the
// CPU profile. -tid and -comm do not: the runtime's thread ids are its own
// pid namespace's, and the profiles' comm is the process's name.
void FilterDotnetEventProfiles(const ProfileFilter& filter, const RecordingSummary& summary,
                               DotnetEventProfiles* stacks);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_DOTNET_EVENT_STACKS_OF_RUN_H_
