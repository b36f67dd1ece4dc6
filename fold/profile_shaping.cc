#include "fold/profile_shaping.h"

#include "absl/strings/str_cat.h"
#include "fold/probe_frames.h"

namespace profcpu::fold {
namespace {

// The samples `profile` holds, counted as RecordingSummary::samples counts
// them: on-CPU BPF entries stand for their count (their period) of samples;
// every other entry is one sample or one off-CPU stay. (In -mode wall with
// -backend bpf, a counted on-CPU entry's period is its time: it counts one.)
uint64_t SamplesIn(const RecordingSummary& summary, const Profile& profile) {
  const bool counted = summary.header.backend == "bpf" && summary.mode == "cpu";
  if (!counted) return profile.samples().size();
  uint64_t samples = 0;
  for (const Sample& sample : profile.samples()) samples += sample.period;
  return samples;
}

}  // namespace

absl::StatusOr<ShapeCounts> ShapeProfile(RecordingSummary* summary_out, ProfileFilter filter,
                                         Profile* profile, base::RunLog* log) {
  const RecordingSummary& summary = *summary_out;
  if ((filter.from_s || filter.to_s) && summary.header.counted_interval_ns > 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "-from/-to cannot slice this run: it was recorded with -backend bpf without "
        "-timestamps, so its on-CPU samples were counted in the kernel and carry no time of "
        "their own (only the end of each ",
        absl::SixDigits(static_cast<double>(summary.header.counted_interval_ns) / 1e9),
        " s interval); record with -timestamps to slice by time"));
  }
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
  summary_out->samples_kept = SamplesIn(summary, *profile);
  log->Info(absl::StrCat("filters kept ", kept.kept, " samples of ", kept.kept + kept.dropped));
  if (kept.kept == 0) log->Warn("the filters kept no sample: the outputs are empty");
  return counts;
}

}  // namespace profcpu::fold
