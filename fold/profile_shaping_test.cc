#include "fold/profile_shaping.h"

#include "fold/profile_test_util.h"
#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

using testing::ProfileMaker;

// An off-CPU sample whose stack starts in the scheduler probe, and an on-CPU
// one, 1 s and 3 s after the recording's start.
Profile OffCpuProfile(RecordingSummary* summary) {
  summary->header.start_time_ns = 10'000'000'000;
  ProfileMaker maker;
  const uint32_t probe =
      maker.Location(0xffff1000, true, "[kernel.kallsyms]", {{"__traceiter_sched_switch"}});
  const uint32_t schedule = maker.Location(0xffff2000, true, "[kernel.kallsyms]", {{"__schedule"}});
  const uint32_t main = maker.Location(0x1000, false, "/app", {{"main"}});
  maker.Sample("app", 10, 10, 0, 11'000'000'000, 1, "offcpu-time", {probe, schedule, main});
  maker.Sample("app", 10, 11, 0, 13'000'000'000, 1, "offcpu-time", {schedule, main});
  return std::move(maker.profile());
}

TEST(ProfileShapingTest, OffCpuStacksLoseTheProbeFrames) {
  RecordingSummary summary;
  summary.mode = "offcpu";
  Profile profile = OffCpuProfile(&summary);
  base::RunLog log;
  const ShapeCounts counts = *ShapeProfile(&summary, {}, &profile, &log);
  EXPECT_EQ(counts.probe_frames_trimmed, 1u);
  EXPECT_EQ(counts.kept, 2u);
  EXPECT_EQ(profile.stack(profile.samples()[0].stack).size(), 2u);
}

TEST(ProfileShapingTest, OnCpuProfilesKeepTheirFrames) {
  RecordingSummary summary;  // mode "cpu": a probe frame there was really sampled
  Profile profile = OffCpuProfile(&summary);
  base::RunLog log;
  EXPECT_EQ(ShapeProfile(&summary, {}, &profile, &log)->probe_frames_trimmed, 0u);
  EXPECT_EQ(profile.stack(profile.samples()[0].stack).size(), 3u);
}

TEST(ProfileShapingTest, TimeFiltersCountFromTheRecordingsStart) {
  RecordingSummary summary;
  summary.mode = "offcpu";
  Profile profile = OffCpuProfile(&summary);
  ProfileFilter filter;
  filter.from_s = 2;  // keeps the sample at 3 s, not the one at 1 s
  base::RunLog log;
  const ShapeCounts counts = *ShapeProfile(&summary, filter, &profile, &log);
  EXPECT_EQ(counts.kept, 1u);
  EXPECT_EQ(counts.dropped, 1u);
  EXPECT_EQ(summary.samples_kept, 1u);  // for metadata.json and the closing line
  ASSERT_EQ(profile.samples().size(), 1u);
  EXPECT_EQ(profile.samples()[0].tid, 11u);

  filter.from_s = 100;
  EXPECT_EQ(ShapeProfile(&summary, filter, &profile, &log)->kept, 0u);
  ASSERT_EQ(log.warnings().size(), 1u);  // an empty result is said, not silent
}

TEST(ProfileShapingTest, WithoutFiltersNothingIsSaidKept) {
  RecordingSummary summary;
  Profile profile = OffCpuProfile(&summary);
  base::RunLog log;
  ASSERT_TRUE(ShapeProfile(&summary, {}, &profile, &log).ok());
  EXPECT_FALSE(summary.samples_kept.has_value());
}

TEST(ProfileShapingTest, CountedBpfSamplesCountTheirCountAndCannotBeSlicedByTime) {
  RecordingSummary summary;
  summary.header.backend = "bpf";
  Profile profile = OffCpuProfile(&summary);  // two entries of 1 sample each
  profile.mutable_samples()[1].period = 40;   // counted in the kernel: 40 samples
  ProfileFilter filter;
  filter.tids = {11};
  base::RunLog log;
  ASSERT_TRUE(ShapeProfile(&summary, filter, &profile, &log).ok());
  EXPECT_EQ(summary.samples_kept, 40u);

  summary.header.counted_interval_ns = 1'000'000'000;  // -backend bpf without -timestamps
  filter = {};
  filter.to_s = 2;
  absl::StatusOr<ShapeCounts> sliced = ShapeProfile(&summary, filter, &profile, &log);
  EXPECT_EQ(sliced.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(sliced.status().message().find("-timestamps"), std::string::npos);
  filter = {};
  filter.tids = {11};  // other filters need no times
  EXPECT_TRUE(ShapeProfile(&summary, filter, &profile, &log).ok());
}

}  // namespace
}  // namespace profcpu::fold
