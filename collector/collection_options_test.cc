#include "collector/collection_options.h"

#include <stdlib.h>

#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

CollectionOptions WithEvent(const char* event) {
  CollectionOptions options;
  options.sampler.event.name = event;
  return options;
}

TEST(ValidateCollectionOptionsTest, TheDefaultsAndEachModeOnItsOwnAreFine) {
  EXPECT_TRUE(ValidateCollectionOptions(WithEvent("cpu-clock")).ok());
  for (ProfileMode mode : {ProfileMode::kCpu, ProfileMode::kOffCpu, ProfileMode::kWall}) {
    for (SamplingBackend backend : {SamplingBackend::kPerf, SamplingBackend::kBpf}) {
      CollectionOptions options = WithEvent("task-clock");
      options.profile.mode = mode;
      options.profile.backend = backend;
      EXPECT_TRUE(ValidateCollectionOptions(options).ok())
          << ProfileModeName(mode) << " " << SamplingBackendName(backend);
    }
  }
}

TEST(ValidateCollectionOptionsTest, TimestampsGoWithTheBpfBackend) {
  CollectionOptions options = WithEvent("cpu-clock");
  options.profile.timestamps = true;
  absl::Status status = ValidateCollectionOptions(options);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(),
            "-timestamps goes with -backend bpf (the perf backend always keeps timestamps)");
  options.profile.backend = SamplingBackend::kBpf;
  EXPECT_TRUE(ValidateCollectionOptions(options).ok());
}

TEST(ValidateCollectionOptionsTest, WallModeNeedsAnEventThatCountsTime) {
  CollectionOptions options = WithEvent("cycles");
  options.profile.mode = ProfileMode::kWall;
  absl::Status status = ValidateCollectionOptions(options);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(),
            "-mode wall weighs on-CPU samples by their time, which 'cycles' does not count: use "
            "-event cpu-clock (the default) or task-clock");
  options.profile.mode = ProfileMode::kCpu;
  EXPECT_TRUE(ValidateCollectionOptions(options).ok());
}

TEST(ValidateCollectionOptionsTest, DwarfGoesWithThePerfBackendInCpuMode) {
  const char* message =
      "-callgraph dwarf copies stacks with perf events: it goes with -backend perf and -mode cpu";
  CollectionOptions options = WithEvent("cpu-clock");
  options.sampler.dwarf_stack_size = 8192;
  EXPECT_TRUE(ValidateCollectionOptions(options).ok());
  options.profile.backend = SamplingBackend::kBpf;
  EXPECT_EQ(ValidateCollectionOptions(options).message(), message);
  options.profile.backend = SamplingBackend::kPerf;
  for (ProfileMode mode : {ProfileMode::kOffCpu, ProfileMode::kWall}) {
    options.profile.mode = mode;
    absl::Status status = ValidateCollectionOptions(options);
    EXPECT_TRUE(absl::IsInvalidArgument(status));
    EXPECT_EQ(status.message(), message);
  }
}

TEST(PerfMapCopyCapFromEnvTest, OnlyLowersTheCap) {
  ::unsetenv("PROFCPU_PERF_MAP_MAX_BYTES");
  EXPECT_EQ(PerfMapCopyCapFromEnv(), 0u);
  ::setenv("PROFCPU_PERF_MAP_MAX_BYTES", "4096", 1);
  EXPECT_EQ(PerfMapCopyCapFromEnv(), 4096u);
  ::setenv("PROFCPU_PERF_MAP_MAX_BYTES", "4k", 1);
  EXPECT_EQ(PerfMapCopyCapFromEnv(), 0u);
  ::setenv("PROFCPU_PERF_MAP_MAX_BYTES", "-1", 1);
  EXPECT_EQ(PerfMapCopyCapFromEnv(), 0u);
  // The default cap (1 GiB) and above are no override.
  ::setenv("PROFCPU_PERF_MAP_MAX_BYTES", "1073741824", 1);
  EXPECT_EQ(PerfMapCopyCapFromEnv(), 0u);
  ::setenv("PROFCPU_PERF_MAP_MAX_BYTES", "1073741823", 1);
  EXPECT_EQ(PerfMapCopyCapFromEnv(), 1073741823u);
  ::unsetenv("PROFCPU_PERF_MAP_MAX_BYTES");
}

}  // namespace
}  // namespace profcpu::collector

namespace profcpu::collector {
namespace {

TEST(DotnetEventsCapFromEnvTest, OnlyLowersTheCap) {
  ::unsetenv("PROFCPU_DOTNET_EVENTS_MAX_BYTES");
  EXPECT_EQ(DotnetEventsCapFromEnv(), 0u);
  ::setenv("PROFCPU_DOTNET_EVENTS_MAX_BYTES", "2097152", 1);
  EXPECT_EQ(DotnetEventsCapFromEnv(), 2097152u);
  ::setenv("PROFCPU_DOTNET_EVENTS_MAX_BYTES", "2M", 1);
  EXPECT_EQ(DotnetEventsCapFromEnv(), 0u);
  ::setenv("PROFCPU_DOTNET_EVENTS_MAX_BYTES", "268435456", 1);  // the default
  EXPECT_EQ(DotnetEventsCapFromEnv(), 0u);
  ::unsetenv("PROFCPU_DOTNET_EVENTS_MAX_BYTES");
}

}  // namespace
}  // namespace profcpu::collector
