#include "scripts/cli/collection_flags.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "collector/perf/event_spec.h"
#include "gtest/gtest.h"

namespace profcpu::cli {
namespace {

using collector::CollectionOptions;
using collector::ProfileMode;
using collector::SamplingBackend;

// collect's flags parsed from `args`; the parse itself must succeed.
FlagSet CollectFlags(const std::vector<std::string>& args) {
  FlagSet flags("collect", "", "");
  AddTargetFlags(&flags);
  AddSamplingFlags(&flags);
  absl::Status parsed = flags.Parse(args);
  EXPECT_TRUE(parsed.ok()) << parsed;
  return flags;
}

absl::Status ReadSampling(const std::vector<std::string>& args, CollectionOptions* options) {
  return ReadSamplingFlags(CollectFlags(args), options);
}

std::string SamplingError(const std::vector<std::string>& args) {
  CollectionOptions options;
  absl::Status status = ReadSampling(args, &options);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  return std::string(status.message());
}

TEST(CollectionFlagsTest, TheDefaults) {
  CollectionOptions options;
  ASSERT_TRUE(ReadSampling({}, &options).ok());
  EXPECT_EQ(options.sampler.rate, 99u);
  EXPECT_EQ(options.sampler.ring_buffer_pages, 256u);
  EXPECT_EQ(options.sampler.event.name, "cpu-clock");
  EXPECT_EQ(options.sampler.dwarf_stack_size, 0u);
  EXPECT_EQ(options.sampler.leaf_stack_size, 32768u);  // -callgraph fp+cfi
  EXPECT_TRUE(options.profile.leaf_copy);
  EXPECT_EQ(options.profile.mode, ProfileMode::kCpu);
  EXPECT_EQ(options.profile.backend, SamplingBackend::kPerf);
  EXPECT_FALSE(options.profile.timestamps);
  ASSERT_TRUE(ReadDotnetFlags(CollectFlags({}), &options).ok());
  EXPECT_TRUE(options.dotnet_events);
  EXPECT_TRUE(options.manage_dotnet_perfmaps);
}

TEST(CollectionFlagsTest, GoodValues) {
  CollectionOptions options;
  ASSERT_TRUE(ReadSampling({"-freq", "997", "-mmap-pages", "1024", "-event", "task-clock",
                            "-callgraph", "fp+cfi", "-mode", "wall", "-backend", "bpf",
                            "-timestamps"},
                           &options)
                  .ok());
  EXPECT_EQ(options.sampler.rate, 997u);
  EXPECT_EQ(options.sampler.ring_buffer_pages, 1024u);
  EXPECT_EQ(options.sampler.event.name, "task-clock");
  EXPECT_EQ(options.sampler.leaf_stack_size, 32768u);
  EXPECT_TRUE(options.profile.leaf_copy);
  EXPECT_EQ(options.profile.mode, ProfileMode::kWall);
  EXPECT_EQ(options.profile.backend, SamplingBackend::kBpf);
  EXPECT_TRUE(options.profile.timestamps);

  CollectionOptions dwarf;
  ASSERT_TRUE(ReadSampling({"-callgraph", "dwarf,4096"}, &dwarf).ok());
  EXPECT_EQ(dwarf.sampler.dwarf_stack_size, 4096u);
  EXPECT_FALSE(dwarf.profile.leaf_copy);
  CollectionOptions fp;
  ASSERT_TRUE(ReadSampling({"-callgraph", "fp"}, &fp).ok());
  EXPECT_EQ(fp.sampler.leaf_stack_size, 0u);
  EXPECT_FALSE(fp.profile.leaf_copy);

  ASSERT_TRUE(ReadDotnetFlags(CollectFlags({"-dotnet-events", "off", "-perfmap", "off"}),
                              &options)
                  .ok());
  EXPECT_FALSE(options.dotnet_events);
  EXPECT_FALSE(options.manage_dotnet_perfmaps);
}

TEST(CollectionFlagsTest, EachBadValueSaysWhatIsWrong) {
  EXPECT_EQ(SamplingError({"-freq", "0"}),
            absl::StrCat("-freq must be an integer from 1 to ", collector::KernelMaxSampleRate(),
                         ", got '0' (the kernel's limit is kernel.perf_event_max_sample_rate)"));
  EXPECT_EQ(SamplingError({"-mmap-pages", "100"}),
            "-mmap-pages must be a power of two, got '100'");
  EXPECT_EQ(SamplingError({"-mmap-pages", "x"}), "-mmap-pages must be a power of two, got 'x'");
  EXPECT_EQ(SamplingError({"-callgraph", "lbr"}),
            "-callgraph must be fp, fp+cfi[,BYTES] or dwarf[,BYTES] (BYTES a multiple of 8 up "
            "to 65528), got 'lbr'");
  EXPECT_TRUE(absl::StartsWith(SamplingError({"-event", "bogus"}), "unknown event 'bogus'; "));
  EXPECT_EQ(SamplingError({"-mode", "idle"}), "unknown mode 'idle'; modes: cpu, offcpu, wall");
  EXPECT_EQ(SamplingError({"-backend", "ebpf"}), "unknown backend 'ebpf'; backends: perf, bpf");

  CollectionOptions options;
  absl::Status status = ReadDotnetFlags(CollectFlags({"-dotnet-events", "yes"}), &options);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(), "-dotnet-events must be on or off, got 'yes'");
  status = ReadDotnetFlags(CollectFlags({"-perfmap", "on"}), &options);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(), "-perfmap must be auto or off, got 'on'");
}

// The collector's rules (collection_options.h), reached through the flags.
TEST(CollectionFlagsTest, FlagsThatDoNotGoTogether) {
  EXPECT_EQ(SamplingError({"-timestamps"}),
            "-timestamps goes with -backend bpf (the perf backend always keeps timestamps)");
  EXPECT_EQ(SamplingError({"-mode", "wall", "-event", "cycles"}),
            "-mode wall weighs on-CPU samples by their time, which 'cycles' does not count: use "
            "-event cpu-clock (the default) or task-clock");
  const char* dwarf =
      "-callgraph dwarf copies stacks with perf events: it goes with -backend perf and -mode cpu";
  EXPECT_EQ(SamplingError({"-callgraph", "dwarf", "-backend", "bpf"}), dwarf);
  EXPECT_EQ(SamplingError({"-callgraph", "dwarf", "-mode", "offcpu"}), dwarf);
}

TEST(CollectionFlagsTest, ExactlyOneTarget) {
  CollectionOptions options;
  ASSERT_TRUE(ReadTargetFlags(CollectFlags({"-pid", "42", "-duration", "2.5"}), &options).ok());
  EXPECT_EQ(options.pid, 42);
  EXPECT_EQ(options.duration, absl::Milliseconds(2500));
  EXPECT_FALSE(options.all_processes);

  CollectionOptions all;
  ASSERT_TRUE(ReadTargetFlags(CollectFlags({"-a"}), &all).ok());
  EXPECT_TRUE(all.all_processes);
  EXPECT_EQ(all.pid, 0);
  EXPECT_EQ(all.duration, absl::Seconds(30));

  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-pid", "1", "-a"}, {"-pid", "1", "-container", "x"}, {"-container", "x", "-a"}}) {
    absl::Status status = ReadTargetFlags(CollectFlags(args), &options);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << args[0];
    EXPECT_EQ(status.message(), "give only one of -pid, -container and -a");
  }
  absl::Status status = ReadTargetFlags(CollectFlags({}), &options);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(), "collect needs -pid PID, -container ID or -a");
  status = ReadTargetFlags(CollectFlags({"-pid", "0"}), &options);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(), "-pid must be an integer from 1 to 1073741823, got '0'");
  status = ReadTargetFlags(CollectFlags({"-a", "-duration", "soon"}), &options);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message(), "-duration must be a number of seconds, got 'soon'");
}

}  // namespace
}  // namespace profcpu::cli
