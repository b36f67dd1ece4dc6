// The flags that say what collect, record and postprocess write besides the
// standard outputs, and how: -format exports (pprof, PerfView's trace.zip),
// the flame graph's look (a subset of flamegraph.pl's flags), -threads, and
// postprocess's sample filters (-pid, -tid, -comm, -from/-to, -no-idle).
// Parsed once, into the typed values the stages take.
#ifndef PROFCPU_SCRIPTS_CLI_OUTPUT_FLAGS_H_
#define PROFCPU_SCRIPTS_CLI_OUTPUT_FLAGS_H_

#include "absl/status/status.h"
#include "fold/profile_filter.h"
#include "render/run_outputs.h"
#include "scripts/cli/flags.h"

namespace profcpu::cli {

// -format, -threads and the graph flags, for collect, record and postprocess.
void AddRunOutputFlags(FlagSet* flags);
// -pid, -tid, -comm, -from, -to, -no-idle, for postprocess.
void AddFilterFlags(FlagSet* flags);
// Read what those added. InvalidArgument naming the flag on a bad value.
absl::Status ReadRunOutputFlags(const FlagSet& flags, render::RunOutputOptions* outputs);
absl::Status ReadFilterFlags(const FlagSet& flags, fold::ProfileFilter* filter);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_OUTPUT_FLAGS_H_
