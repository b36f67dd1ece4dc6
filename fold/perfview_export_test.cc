// The PerfView export's text (PerfScriptWriteOptions::perfview_spacing_ns):
// what PerfView's reader makes of it, by TraceEvent's own rules.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "fold/perf_script_writer.h"
#include "fold/perfview_gaps.h"
#include "fold/profile_test_util.h"
#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

using testing::ProfileMaker;

constexpr uint64_t kMs = 1000000;
constexpr uint64_t kSpacing = 10 * kMs;

// One sample as PerfView weighs it: TraceEvent's BlockedTimeAnalyzer
// (DoMetrics, EventKind.Cpu) gives each sample the time to the next sample
// on the same CPU and never adds a CPU's last sample. The header fields are
// read as LinuxPerfScriptEventParser reads them: comm, pid/tid, [cpu], time.
struct WeighedSample {
  std::string comm;
  int cpu = 0;
  double time_ms = 0;
  double weight_ms = 0;
};

std::vector<WeighedSample> WeighLikePerfView(absl::string_view text) {
  std::vector<WeighedSample> kept;
  std::map<int, WeighedSample> last_by_cpu;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '\t' || line[0] == '#') continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    WeighedSample sample;
    sample.comm = std::string(fields[0]);
    int cpu;
    double seconds;
    absl::string_view cpu_field = fields[2];
    EXPECT_TRUE(absl::ConsumePrefix(&cpu_field, "[") && absl::ConsumeSuffix(&cpu_field, "]"));
    EXPECT_TRUE(absl::SimpleAtoi(cpu_field, &cpu)) << line;
    EXPECT_TRUE(absl::SimpleAtod(absl::StripSuffix(fields[3], ":"), &seconds)) << line;
    sample.cpu = cpu;
    sample.time_ms = seconds * 1000;
    auto it = last_by_cpu.find(cpu);
    if (it != last_by_cpu.end()) {
      it->second.weight_ms = sample.time_ms - it->second.time_ms;
      kept.push_back(it->second);
    }
    last_by_cpu[cpu] = sample;
  }
  return kept;
}

// A thread that computes, sleeps 200 ms and computes again on CPU 0, and
// one sample of another process on CPU 1.
Profile MakeSleepyProfile() {
  ProfileMaker m;
  uint32_t work = m.Location(0x401000, false, "/usr/bin/app", {{"work", 0x10}});
  uint32_t syscall = m.Location(0xffffffff81000100, true, "[kernel.kallsyms]",
                                {{"do_nanosleep", 0x20}});
  m.Sample("app", 7, 7, 0, 1000 * kMs, kSpacing, "cpu-clock", {work});
  m.Sample("app", 7, 7, 0, 1010 * kMs, kSpacing, "cpu-clock", {syscall, work});  // then sleeps
  m.Sample("other", 9, 9, 1, 1012 * kMs, kSpacing, "cpu-clock", {work});
  m.Sample("app", 7, 7, 0, 1213 * kMs, kSpacing, "cpu-clock", {work});
  m.Sample("app", 7, 7, 0, 1223 * kMs, kSpacing, "cpu-clock", {work});
  return std::move(m.profile());
}

TEST(PerfViewExportTest, PerfViewWeighsEveryProfiledSampleOneInterval) {
  PerfScriptWriteOptions options;
  options.perfview_spacing_ns = kSpacing;
  const std::vector<WeighedSample> kept =
      WeighLikePerfView(FormatPerfScript(MakeSleepyProfile(), options));
  int profiled = 0;
  for (const WeighedSample& sample : kept) {
    if (sample.comm == "unprofiled") continue;
    ++profiled;
    EXPECT_NEAR(sample.weight_ms, 10, 0.002) << sample.comm << " at " << sample.time_ms;
  }
  EXPECT_EQ(profiled, 5);  // none dropped as its CPU's last
}

// Why: in perf's own text the sample before the sleep weighs the sleep, and
// each CPU's last sample is lost.
TEST(PerfViewExportTest, PerfsOwnTextIsWeighedByItsGaps) {
  const std::vector<WeighedSample> kept = WeighLikePerfView(FormatPerfScript(MakeSleepyProfile()));
  ASSERT_EQ(kept.size(), 3u);  // CPU 0's last and CPU 1's only sample are lost
  EXPECT_EQ(kept[1].time_ms, 1010);
  EXPECT_NEAR(kept[1].weight_ms, 203, 0.002);  // do_nanosleep weighs 20 samples' time
}

TEST(PerfViewExportTest, FillersCloseEachSampleInTimeOrder) {
  ProfileMaker m;
  uint32_t work = m.Location(0x401000, false, "/usr/bin/app", {{"work", 0x10}});
  m.Sample("app", 7, 7, 0, 1000 * kMs, kSpacing, "cpu-clock", {work});
  m.Sample("app", 7, 8, 1, 1005 * kMs, kSpacing, "cpu-clock", {work});
  m.Sample("app", 7, 7, 0, 1030 * kMs, kSpacing, "cpu-clock", {work});
  PerfScriptWriteOptions options;
  options.perfview_spacing_ns = kSpacing;
  EXPECT_EQ(FormatPerfScript(m.profile(), options),
            "app     7/7     [000]     1.000000:   10000000 cpu-clock: \n"
            "\t          401000 work (/usr/bin/app)\n"
            "\n"
            "app     7/8     [001]     1.005000:   10000000 cpu-clock: \n"
            "\t          401000 work (/usr/bin/app)\n"
            "\n"
            "unprofiled     0/0     [000]     1.010000:   10000000 cpu-clock: \n"
            "\t               0 [cpu time outside the profiled processes] ([profcpu])\n"
            "\n"
            "unprofiled     0/0     [001]     1.015000:   10000000 cpu-clock: \n"
            "\t               0 [cpu time outside the profiled processes] ([profcpu])\n"
            "\n"
            "app     7/7     [000]     1.030000:   10000000 cpu-clock: \n"
            "\t          401000 work (/usr/bin/app)\n"
            "\n"
            "unprofiled     0/0     [000]     1.040000:   10000000 cpu-clock: \n"
            "\t               0 [cpu time outside the profiled processes] ([profcpu])\n"
            "\n");
}

// PerfView strips "+0x.." only at a name's end and reads perf-map frames
// ("*.map" modules) as "[MODULE] function": V8's names would lose the
// function and keep the offset, one JS function becoming many.
TEST(PerfViewExportTest, FramesHaveNoOffsetsAndPerfMapFramesAModuleWord) {
  ProfileMaker m;
  uint32_t js = m.Location(0x7f0000001000, false, "/tmp/perf-42.map",
                           {{"JS:*fib /app/a.js:6:28", 0x1c}});
  uint32_t dotnet = m.Location(0x7f0000002000, false, "/tmp/perf-42.map",
                               {{"void [System.Runtime] N.C::M()[Optimized]", 0x20}});
  uint32_t native = m.Location(0x55d0c0de1234, false, "/usr/bin/node",
                               {{"inner_fn", 0x10, true}, {"outer_fn(int)", 0x33}}, 1);
  uint32_t kernel = m.Location(0xffffffff81000100, true, "[kernel.kallsyms]",
                               {{"clear_page_erms", 0x7}});
  uint32_t unknown = m.Location(0x7f0000003000, false, "/tmp/perf-42.map", {});
  m.Sample("node", 42, 42, 0, 1000 * kMs, kSpacing, "cpu-clock",
           {kernel, js, dotnet, native, unknown});
  PerfScriptWriteOptions options;
  options.perfview_spacing_ns = kSpacing;
  const std::string text = FormatPerfScript(m.profile(), options);
  EXPECT_FALSE(absl::StrContains(text, "+0x")) << text;
  EXPECT_TRUE(absl::StrContains(
      text,
      "\tffffffff81000100 clear_page_erms ([kernel.kallsyms])\n"
      "\t    7f0000001000 [perf-42.map] JS:*fib /app/a.js:6:28 (/tmp/perf-42.map)\n"
      "\t    7f0000002000 void [System.Runtime] N.C::M()[Optimized] (/tmp/perf-42.map)\n"
      "\t    55d0c0de1234 inner_fn (inlined)\n"
      "\t    55d0c0de1234 outer_fn(int) (/usr/bin/node)\n"
      "\t    7f0000003000 [unknown] (/tmp/perf-42.map)\n"))
      << text;
}

// profcpu's .NET names end with the assembly ("N.C::M() [App]"); PerfView
// takes the first bracketed word for the module and the rest for the method,
// so its export puts the assembly back first (PerfView shows "App!N.C::M()").
TEST(PerfViewExportTest, DotnetAssemblyGoesFirstForPerfView) {
  ProfileMaker m;
  uint32_t dotnet = m.Location(0x7f0000002000, false, "/tmp/perf-42.map",
                               {{"N.C::M(int32)[OptimizedTier1] [App]", 0x20}});
  m.Sample("app", 42, 42, 0, 1000 * kMs, kSpacing, "cpu-clock", {dotnet});
  PerfScriptWriteOptions options;
  options.perfview_spacing_ns = kSpacing;
  const std::string perfview = FormatPerfScript(m.profile(), options);
  EXPECT_TRUE(absl::StrContains(
      perfview, "\t    7f0000002000 [App] N.C::M(int32)[OptimizedTier1] (/tmp/perf-42.map)\n"))
      << perfview;
  // perf_script.out keeps profcpu's form.
  const std::string script = FormatPerfScript(m.profile(), {});
  EXPECT_TRUE(absl::StrContains(
      script, "\t    7f0000002000 N.C::M(int32)[OptimizedTier1] [App]+0x20 (/tmp/perf-42.map)\n"))
      << script;
}

TEST(PerfViewExportTest, SpacingIsOneSampleOfTheRecording) {
  recording::Header header;
  header.frequency_mode = true;
  header.sample_rate = 99;
  EXPECT_EQ(PerfViewSampleSpacingNs(header), 10101010u);
  header.frequency_mode = false;
  header.event_name = "cpu-clock";
  header.sample_rate = 250000;
  EXPECT_EQ(PerfViewSampleSpacingNs(header), 250000u);
  header.event_name = "cycles";
  EXPECT_EQ(PerfViewSampleSpacingNs(header), 1000000u);
}

}  // namespace
}  // namespace profcpu::fold
