#include "fold/profile_shaping.h"

#include "absl/strings/str_cat.h"
#include "fold/probe_frames.h"

namespace profcpu::fold {

ShapeCounts ShapeProfile(const RecordingSummary& summary, ProfileFilter filter, Profile* profile,
                         base::RunLog* log) {
  ShapeCounts counts;
  if (summary.mode != "cpu") {
    counts.probe_frames_trimmed = TrimProbeFrames(summary.mode == "offcpu", profile);
    if (counts.probe_frames_trimmed > 0) {
      log->Info(absl::StrCat("dropped the scheduler probe's frames from ",
                             counts.probe_frames_trimmed, " off-CPU stacks"));
    }
  }
  counts.kept = profile->samples().size();
  if (filter.empty()) return counts;
  filter.start_ns = summary.header.start_time_ns;
  const ProfileFilterStats kept = FilterProfile(filter, profile);
  counts.kept = kept.kept;
  counts.dropped = kept.dropped;
  log->Info(absl::StrCat("filters kept ", kept.kept, " samples of ", kept.kept + kept.dropped));
  if (kept.kept == 0) log->Warn("the filters kept no sample: the outputs are empty");
  return counts;
}

}  // namespace profcpu::fold
