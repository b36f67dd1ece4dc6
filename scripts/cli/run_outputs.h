// What collect, record and postprocess write besides the standard outputs,
// and how: -format exports (pprof, PerfView's trace.zip), the flame graph's
// look (a subset of flamegraph.pl's flags), -threads, and postprocess's
// sample filters (-pid, -tid, -comm, -from/-to, -no-idle).
#ifndef PROFCPU_SCRIPTS_CLI_RUN_OUTPUTS_H_
#define PROFCPU_SCRIPTS_CLI_RUN_OUTPUTS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/run_log.h"
#include "fold/perf_script_writer.h"
#include "fold/profile.h"
#include "fold/profile_filter.h"
#include "fold/recording_summary.h"
#include "render/flamegraph_options.h"
#include "scripts/cli/flags.h"

namespace profcpu::cli {

inline constexpr char kPprofFile[] = "profile.pb.gz";

struct RunOutputOptions {
  bool pprof = false;     // -format pprof: profile.pb.gz
  bool perfview = false;  // -format perfview: NAME.trace.zip
  bool html = true;       // profile.html; -format no-html skips it
  bool threads = false;   // -threads: root frames "comm-PID/TID"
  // The graph flags as given, applied over the run's own defaults (title,
  // palette per mode) by ApplyGraphFlags.
  std::shared_ptr<const FlagSet> graph_flags;
  fold::ProfileFilter filter;  // postprocess only; start_ns set by the pipeline
};

// -format, -threads and the graph flags, for collect, record and postprocess.
void AddRunOutputFlags(FlagSet* flags);
// -pid, -tid, -comm, -from, -to, -no-idle, for postprocess.
void AddFilterFlags(FlagSet* flags);
// Read what those added. InvalidArgument naming the flag on a bad value.
absl::Status ReadRunOutputFlags(const FlagSet& flags, RunOutputOptions* outputs);
absl::Status ReadFilterFlags(const FlagSet& flags, fold::ProfileFilter* filter);

// Overrides `graph` (the run's defaults) with the graph flags given.
absl::Status ApplyGraphFlags(const RunOutputOptions& outputs, render::FlameGraphOptions* graph);

// The PerfView export's name: "NAME.trace.zip" after the run folder, as
// perfcollect names it after the trace.
std::string PerfViewArchiveName(const std::string& dir);

// Writes the -format exports into `dir` from the (filtered) profile, the one
// perf_script.out was written from, with its runtime events (the PerfView
// export carries them too). Appends the names written to *written.
absl::Status WriteExports(const RunOutputOptions& outputs, const std::string& dir,
                          const fold::RecordingSummary& summary, const fold::Profile& profile,
                          const std::vector<fold::PerfScriptEvent>& runtime_events,
                          base::RunLog* log, std::vector<std::string>* written);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_RUN_OUTPUTS_H_
