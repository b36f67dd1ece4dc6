// What the outputs show of a named Profile: off-CPU stacks end where the
// thread slept, not in the probe that saw it; postprocess's filters (-pid,
// -tid, -comm, -from/-to, -no-idle) keep some samples only. Every output is
// written from the shaped profile; the symbol snapshot stays whole.
#ifndef PROFCPU_FOLD_PROFILE_SHAPING_H_
#define PROFCPU_FOLD_PROFILE_SHAPING_H_

#include "absl/status/statusor.h"
#include "base/run_log.h"
#include "fold/profile.h"
#include "fold/profile_filter.h"
#include "fold/recording_summary.h"

namespace profcpu::fold {

struct ShapeCounts {
  uint64_t probe_frames_trimmed = 0;  // off-CPU stacks that lost the probe's frames
  uint64_t kept = 0;                  // samples the filters kept (all without filters)
  uint64_t dropped = 0;               // samples they dropped
};

// Shapes `profile` (of the recording `summary` describes) for the outputs;
// says in `log` what it did and, with filters, in `summary->samples_kept`
// how many samples the outputs hold. `filter`'s times count from the
// recording's start. FailedPrecondition for -from/-to on samples counted in
// the kernel (-backend bpf without -timestamps): they carry no time of their
// own, and a slice of them would be empty or wrong without saying so.
absl::StatusOr<ShapeCounts> ShapeProfile(RecordingSummary* summary, ProfileFilter filter,
                                         Profile* profile, base::RunLog* log);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PROFILE_SHAPING_H_
