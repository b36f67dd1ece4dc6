#include "fold/recording_summary.h"

#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

RecordingSummary Summary(const std::string& mode, const std::string& backend) {
  RecordingSummary s;
  s.mode = mode;
  s.header.backend = backend;
  s.header.event_name = "cpu-clock";
  s.header.sample_rate = 99;
  s.header.target = "pid 42";
  s.header.hostname = "box";
  s.header.kernel_release = "6.1.0";
  s.samples = 1000;
  s.lost_ring_buffer = 3;
  s.lost_stacks = 2;
  return s;
}

TEST(RecordingSummaryTest, DescribesWhatEachModeMeasures) {
  EXPECT_EQ(ModeDescription(Summary("cpu", "perf")), "cpu-clock, 99 Hz");
  EXPECT_NE(ModeDescription(Summary("cpu", "bpf")).find("BPF backend: period = samples"),
            std::string::npos);
  EXPECT_EQ(ModeDescription(Summary("offcpu", "perf")).rfind("offcpu-time", 0), 0u);
  EXPECT_EQ(ModeDescription(Summary("wall", "bpf")).rfind("wall-time: on-CPU samples (cpu-clock, "
                                                          "99 Hz, BPF backend)", 0),
            0u);
}

TEST(RecordingSummaryTest, PerfScriptHeaderListsBpfLossesOnlyWhereBpfTookPart) {
  const PerfScriptHeader perf = PerfScriptHeaderFor(Summary("cpu", "perf"));
  EXPECT_EQ(perf.target, "pid 42");
  EXPECT_EQ(perf.event, "cpu-clock, 99 Hz");
  EXPECT_EQ(perf.samples, 1000u);
  ASSERT_EQ(perf.losses.size(), 2u);
  EXPECT_EQ(perf.losses[0], (std::pair<std::string, uint64_t>{"ring buffer full", 3}));
  const PerfScriptHeader bpf = PerfScriptHeaderFor(Summary("cpu", "bpf"));
  ASSERT_EQ(bpf.losses.size(), 6u);
  EXPECT_EQ(bpf.losses[3], (std::pair<std::string, uint64_t>{"stacks lost (BPF)", 2}));
  EXPECT_EQ(PerfScriptHeaderFor(Summary("offcpu", "perf")).losses.size(), 6u);
  EXPECT_EQ(bpf.extra.at(1), (std::pair<std::string, std::string>{"hostname", "box"}));
}

TEST(RecordingSummaryTest, SummaryLineSaysSamplesLossesAndUnknownFrames) {
  RecordingSummary s = Summary("cpu", "perf");
  UnknownFrames unknown;
  unknown.total = 10;
  unknown.by_module = {{"/usr/lib/libstdc++.so.6.0.30", 10}};
  EXPECT_EQ(SummaryLine(s, unknown),
            "1000 samples, 3 lost, 2 stacks lost, 10 unknown frames (all in libstdc++.so.6.0.30)");
  unknown.samples = 1000;
  unknown.top_samples = 10;
  unknown.top_most_in_a_sample = 1;
  EXPECT_EQ(SummaryLine(s, unknown),
            "1000 samples, 3 lost, 2 stacks lost, 10 unknown frames (one in 10 of 1000 samples, "
            "all in libstdc++.so.6.0.30, which has no symbols here: profcpu.log says how to name "
            "it)");
  s.offcpu_samples = 5;
  s.offcpu_ns = 1'500'000'000;
  s.stack_ends.cut_short = 4;
  s.stack_ends.cut_by_module = {{"/usr/lib/libcoreclr.so", 3}, {"[unknown]", 1}};
  EXPECT_EQ(SummaryLine(s, {}),
            "1000 samples, 3 lost (5 off-CPU, 1.5 s blocked), 2 stacks lost, 4 stacks cut short "
            "(3 in libcoreclr.so, 1 in [unknown]), 0 unknown frames");
  // postprocess's filters: what the outputs hold, of how many.
  s.samples_kept = 250;
  EXPECT_EQ(SummaryLine(s, {}),
            "250 of 1000 samples kept by the filters, 3 lost (5 off-CPU, 1.5 s blocked), 2 stacks "
            "lost, 4 stacks cut short (3 in libcoreclr.so, 1 in [unknown]), 0 unknown frames");
  EXPECT_EQ(PerfScriptHeaderFor(s).samples, 250u);
}

// Stacks short of their thread's root are all present: nothing calls them
// lost. Those whose leaf was repaired are said apart.
TEST(RecordingSummaryTest, StacksCutShortAndRepairedAreNotLosses) {
  RecordingSummary s = Summary("cpu", "perf");
  s.header.callgraph = "fp+cfi";
  s.lost_stacks = 0;
  s.depth_limit_stacks = 2;
  s.stacks_repaired = 1151;
  s.stack_ends.samples = 1000;
  s.stack_ends.cut_short = 40;
  s.stack_ends.cut_by_module = {
      {"/usr/share/dotnet/libcoreclr.so", 25}, {"[unknown]", 9}, {"/tmp/perf-1.map", 4},
      {"/usr/lib/libc.so.6", 2}};
  const PerfScriptHeader header = PerfScriptHeaderFor(s);
  for (const auto& [reason, count] : header.losses) {
    EXPECT_EQ(reason.find("stack"), std::string::npos) << reason;
  }
  EXPECT_EQ(header.extra.at(0),
            (std::pair<std::string, std::string>{
                "stacks cut short (outermost frame not a thread root)",
                "40 (25 in /usr/share/dotnet/libcoreclr.so, 9 in [unknown], 4 in /tmp/perf-1.map)"}));
  EXPECT_EQ(header.extra.at(1), (std::pair<std::string, std::string>{
                                    "stacks repaired from their stack copy", "1151"}));
  EXPECT_EQ(SummaryLine(s, {}),
            "1000 samples, 3 lost, 40 stacks cut short (25 in libcoreclr.so, 9 in [unknown], 6 "
            "elsewhere), 1151 repaired, 0 unknown frames");
  const std::string text = FormatPerfScript(Profile(), {header});
  EXPECT_EQ(text.find("lost (truncated"), std::string::npos) << text;
  EXPECT_NE(text.find("# stacks cut short (outermost frame not a thread root) : 40 ("),
            std::string::npos) << text;
}

}  // namespace
}  // namespace profcpu::fold
