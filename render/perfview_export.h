// -format perfview: NAME.trace.zip as perfcollect lays it out, NAME.trace/
// holding perf.data.txt, the perf script text PerfView parses (its first
// entry ending in .data.txt). Not perf_script.out as it is: PerfView weighs
// samples by time, not period, and misreads perf-map frames
// (fold/perfview_gaps.h, FrameDialect).
#ifndef PROFCPU_RENDER_PERFVIEW_EXPORT_H_
#define PROFCPU_RENDER_PERFVIEW_EXPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "base/run_log.h"
#include "fold/profile.h"
#include "fold/recording_summary.h"

namespace profcpu::render {

// "NAME.trace.zip" after the run folder, as perfcollect names it after the
// trace ("profcpu.trace.zip" when the folder has no usable name).
std::string PerfViewArchiveName(const std::string& dir);

// Writes the export into `dir` from the (shaped) profile: its samples
// alone, as perf_script.out (PerfView opens dotnet/PID.nettrace for the
// runtime's events). Returns its file name.
absl::StatusOr<std::string> WritePerfViewExport(const std::string& dir,
                                                const fold::RecordingSummary& summary,
                                                const fold::Profile& profile, base::RunLog* log);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_PERFVIEW_EXPORT_H_
