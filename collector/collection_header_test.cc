#include "collector/collection_header.h"

#include <time.h>

#include "collector/perf/perf_record_parser.h"
#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

CollectionOptions Options() {
  CollectionOptions options;
  options.profcpu_version = "1.2.3";
  options.command_line = "profcpu collect -pid 42";
  options.sampler.rate = 99;
  options.sampler.event.name = "cpu-clock";
  return options;
}

TEST(MakeCollectionHeaderTest, SaysWhatWasSampledAndWhere) {
  const CollectionOptions options = Options();
  SamplerOptions sampler = options.sampler;
  sampler.event.name = "dummy";  // as the BPF half may have changed it
  recording::Header h = MakeCollectionHeader(options, sampler, "pid 42", 1234);
  EXPECT_EQ(h.profcpu_version, "1.2.3");
  EXPECT_EQ(h.event_name, "dummy");
  EXPECT_EQ(h.sample_rate, 99u);
  EXPECT_EQ(h.clock_id, CLOCK_MONOTONIC);
  EXPECT_EQ(h.start_time_ns, 1234u);
  EXPECT_GT(h.start_realtime_ns, 0);
  EXPECT_GT(h.cpu_count, 0u);
  EXPECT_EQ(h.target, "pid 42");
  EXPECT_EQ(h.command_line, "profcpu collect -pid 42");
  EXPECT_EQ(h.mode, "cpu");
  EXPECT_EQ(h.backend, "perf");
  EXPECT_EQ(h.callgraph, "fp");
  EXPECT_EQ(h.user_stack_size, 0u);
  EXPECT_EQ(h.counted_interval_ns, 0u);
}

TEST(MakeCollectionHeaderTest, StackCopiesOfEachCallgraph) {
  const CollectionOptions options = Options();
  SamplerOptions sampler = options.sampler;
  sampler.dwarf_stack_size = 8192;
  recording::Header h = MakeCollectionHeader(options, sampler, "", 0);
  EXPECT_EQ(h.callgraph, "dwarf");
  EXPECT_EQ(h.user_regs_mask, kDwarfRegsMask);
  EXPECT_EQ(h.user_stack_size, 8192u);
  sampler.dwarf_stack_size = 0;
  sampler.leaf_stack_size = 512;
  h = MakeCollectionHeader(options, sampler, "", 0);
  EXPECT_EQ(h.callgraph, "fp+cfi");
  EXPECT_EQ(h.user_regs_mask, kLeafRegsMask);
  EXPECT_EQ(h.user_stack_size, 512u);
}

TEST(MakeCollectionHeaderTest, CountedSamplesOnlyWithBpfOnCpuAndNoTimestamps) {
  CollectionOptions options = Options();
  options.profile.backend = SamplingBackend::kBpf;
  recording::Header h = MakeCollectionHeader(options, options.sampler, "", 0);
  EXPECT_EQ(h.backend, "bpf");
  EXPECT_EQ(h.counted_interval_ns, kCountIntervalNs);
  options.profile.mode = ProfileMode::kWall;
  EXPECT_EQ(MakeCollectionHeader(options, options.sampler, "", 0).counted_interval_ns,
            kCountIntervalNs);
  options.profile.timestamps = true;
  EXPECT_EQ(MakeCollectionHeader(options, options.sampler, "", 0).counted_interval_ns, 0u);
  options.profile.timestamps = false;
  options.profile.mode = ProfileMode::kOffCpu;
  h = MakeCollectionHeader(options, options.sampler, "", 0);
  EXPECT_EQ(h.mode, "offcpu");
  EXPECT_EQ(h.counted_interval_ns, 0u);
}

}  // namespace
}  // namespace profcpu::collector
