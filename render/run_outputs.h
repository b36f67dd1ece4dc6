// A run's outputs, written side by side from its shaped, named Profile:
// folded_stacks.out and flamegraph.svg on the caller's thread, perf_script.out
// (the largest by far) and profile.html (its data is deflated, in pieces on
// the usable cores: base::WorkerThreads()) each on a thread of their own (they only read the Profile), then the -format exports
// (profile.pb.gz, NAME.trace.zip). Beside them, the .NET event profiles'
// (dotnet_event_outputs.h): their folded stacks, their pprof files and
// profile.html's switch to them. The one entry collect, record and
// postprocess call once the profile is named.
#ifndef PROFCPU_RENDER_RUN_OUTPUTS_H_
#define PROFCPU_RENDER_RUN_OUTPUTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/run_log.h"
#include "base/stage_times.h"
#include "fold/dotnet_event_profiles.h"
#include "fold/perf_script_writer.h"
#include "fold/profile.h"
#include "fold/recording_summary.h"
#include "render/graph_overrides.h"
#include "render/profile_page_writer.h"

namespace profcpu::render {

inline constexpr char kPprofFile[] = "profile.pb.gz";

// What the user asked of the outputs (-format, -threads, the graph flags),
// parsed once when the command starts.
struct RunOutputOptions {
  bool pprof = false;     // -format pprof: profile.pb.gz
  bool perfview = false;  // -format perfview: NAME.trace.zip
  bool html = true;       // profile.html; -format no-html skips it
  bool threads = false;   // -threads: root frames "comm-PID/TID"
  // Applied over the run's own defaults (title, palette per mode).
  GraphOverrides graph;
};

struct RunOutputsInput {
  std::string dir;  // the run folder
  const fold::RecordingSummary* summary = nullptr;
  const fold::Profile* profile = nullptr;  // shaped and named
  // The runtimes' timeline (GC pauses, bursts of exceptions): profile.html's
  // events lane (in seconds from the recording's start). Not in
  // perf_script.out or the PerfView export: their readers count every
  // record as a CPU sample.
  std::vector<PageEvent> page_events;
  std::string generator;  // "profcpu VERSION", in profile.html
  // The .NET allocations, lock waits and exceptions by stack, named (may be
  // null): each kind with samples gets its folded stacks, its pprof file
  // (-format pprof) and a view in profile.html.
  const fold::DotnetEventProfiles* dotnet_event_profiles = nullptr;
};

struct WrittenOutputs {
  std::vector<std::string> files;    // names in the run folder, exports included
  std::vector<std::string> exports;  // the -format exports alone, for the archive
};

// Writes every output into input.dir; `times` gets a stage per output.
absl::StatusOr<WrittenOutputs> WriteRunOutputs(const RunOutputsInput& input,
                                               const RunOutputOptions& options,
                                               base::StageTimes* times, base::RunLog* log);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_RUN_OUTPUTS_H_
