// What the outputs show of a named Profile: off-CPU stacks end where the
// thread slept, not in the probe that saw it; postprocess's filters (-pid,
// -tid, -comm, -from/-to, -no-idle) keep some samples only. Every output is
// written from the shaped profile; the symbol snapshot stays whole.
#ifndef PROFCPU_FOLD_PROFILE_SHAPING_H_
#define PROFCPU_FOLD_PROFILE_SHAPING_H_

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
// says in `log` what it did. `filter`'s times count from the recording's start.
ShapeCounts ShapeProfile(const RecordingSummary& summary, ProfileFilter filter, Profile* profile,
                         base::RunLog* log);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PROFILE_SHAPING_H_
