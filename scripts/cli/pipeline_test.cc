#include "scripts/cli/pipeline.h"

#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/file_io.h"
#include "fold/recording_summary.h"
#include "fold/stack_ends.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recording/run_folder.h"

namespace profcpu::cli {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// The small real recordings test_output_stability keeps (README.md there).
std::string Recording(const char* name) {
  return absl::StrCat(PROFCPU_SOURCE_DIR, "/tests/testdata/output_stability/", name);
}

class PipelineTest : public ::testing::Test {
 protected:
  // A copy of a recording's run folder, as postprocess finds it.
  std::string CopyOf(const char* name) {
    char dir[] = "/tmp/pipeline_test.XXXXXX";
    EXPECT_NE(::mkdtemp(dir), nullptr);
    parent_ = dir;
    const std::string run = absl::StrCat(parent_, "/run");
    EXPECT_EQ(std::system(absl::StrCat("cp -r ", Recording(name), " ", run).c_str()), 0);
    return run;
  }
  void TearDown() override {
    if (!parent_.empty()) (void)std::system(absl::StrCat("rm -rf ", parent_).c_str());
  }
  std::string Read(const std::string& dir, const char* name) {
    return base::ReadFileBounded(absl::StrCat(dir, "/", name), 1 << 26).value_or("");
  }
  // Lines of folded_stacks.out's counts summed.
  uint64_t FoldedSamples(const std::string& dir) {
    uint64_t total = 0;
    for (absl::string_view line : absl::StrSplit(Read(dir, recording::kFoldedFile), '\n',
                                                 absl::SkipEmpty())) {
      total += std::stoull(std::string(line.substr(line.rfind(' ') + 1)));
    }
    return total;
  }

  // Records as FlameScope splits the text: a non-comment line after a blank
  // line (or first) starts one, whatever its event.
  static uint64_t RecordsAsFlameScopeCounts(const std::string& script) {
    uint64_t records = 0;
    bool at_start = true;
    for (absl::string_view line : absl::StrSplit(script, '\n')) {
      if (line.empty()) {
        at_start = true;
      } else if (at_start && line[0] != '#') {
        ++records;
        at_start = false;
      }
    }
    return records;
  }

  std::string parent_;
};

TEST_F(PipelineTest, ARecordingBecomesEveryOutput) {
  const std::string dir = CopyOf("demo_workload");
  base::RunLog log;
  PipelineOptions options;
  options.dir = dir;
  auto result = RebuildOutputs(options, &log);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->summary.samples, 6525u);
  EXPECT_EQ(result->symbols.requested, result->symbols.resolved + result->symbols.unknown);
  for (const char* name : {recording::kSymbolsFile, recording::kFoldedFile,
                           recording::kPerfScriptFile, recording::kFlameGraphFile,
                           recording::kProfilePageFile}) {
    EXPECT_THAT(result->files_written, Contains(name));
    EXPECT_FALSE(Read(dir, name).empty()) << name;
  }
  EXPECT_TRUE(result->exports.empty());
  EXPECT_EQ(FoldedSamples(dir), 6525u);
  // The demo's workers and its logger, named from the snapshot.
  EXPECT_THAT(Read(dir, recording::kFoldedFile), HasSubstr(";worker_thread;handle_request"));
  EXPECT_THAT(Read(dir, recording::kFlameGraphFile), HasSubstr("logger_thread"));
  EXPECT_TRUE(result->dotnet_events.summaries.empty());
}

TEST_F(PipelineTest, FiltersAndExportsTravelAsTypedOptions) {
  const std::string dir = CopyOf("demo_workload");
  base::RunLog log;
  PipelineOptions options;
  options.dir = dir;
  options.outputs.pprof = true;
  options.outputs.html = false;
  options.outputs.graph.title = "Only the first second";
  options.filter.to_s = 1.0;
  auto result = RebuildOutputs(options, &log);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->summary.samples_kept.has_value());
  const uint64_t kept = *result->summary.samples_kept;
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, 6525u);
  EXPECT_EQ(FoldedSamples(dir), kept);
  EXPECT_THAT(result->exports, Contains("profile.pb.gz"));
  EXPECT_THAT(result->files_written, Not(Contains(recording::kProfilePageFile)));
  EXPECT_THAT(Read(dir, recording::kFlameGraphFile), HasSubstr("Only the first second"));
}

TEST_F(PipelineTest, TheDotnetRuntimesEventsStayOutOfPerfScriptOut) {
  const std::string dir = CopyOf("dotnet_events");
  base::RunLog log;
  PipelineOptions options;
  options.dir = dir;
  auto result = RebuildOutputs(options, &log);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->dotnet_events.summaries.size(), 1u);
  EXPECT_GT(result->dotnet_events.summaries[0].gc.count, 0u);
  // perf_script.out holds the CPU samples alone: FlameScope, speedscope and
  // stackcollapse-perf.pl count every record (each header line, the first
  // line after a blank one) as a sample, so a runtime event there would
  // weigh as CPU time. The events stay in profile.html's lane.
  const std::string script = Read(dir, recording::kPerfScriptFile);
  EXPECT_EQ(RecordsAsFlameScopeCounts(script), result->summary.samples);
  EXPECT_FALSE(absl::StrContains(script, "dotnet:"));
  EXPECT_FALSE(absl::StrContains(script, "[.NET "));
  EXPECT_THAT(Read(dir, recording::kProfilePageFile), HasSubstr("Induced GC"));
  // Stacks short of their thread's root are said apart from losses: most
  // chains of this run end at start_thread or __libc_start_call_main.
  const fold::StackEnds& ends = result->summary.stack_ends;
  EXPECT_EQ(ends.samples, 237u);
  EXPECT_EQ(ends.cut_short, 18u);
  ASSERT_FALSE(ends.cut_by_module.empty());
  EXPECT_TRUE(absl::EndsWith(ends.cut_by_module[0].first, "/libcoreclr.so"));
  EXPECT_EQ(ends.cut_by_module[0].second, 9u);
  EXPECT_EQ(result->summary.stacks_repaired, 44u);
  EXPECT_THAT(fold::SummaryLine(result->summary, result->unknown_frames),
              HasSubstr(", 0 lost, 18 stacks cut short (9 in libcoreclr.so, 6 in [unknown], 3 "
                        "elsewhere), 44 repaired, "));
  EXPECT_THAT(script, HasSubstr("\n# stacks cut short (outermost frame not a thread root) : 18 ("));
  EXPECT_FALSE(absl::StrContains(script, "truncated"));
  // JIT frames named from the run folder's copies of the jitdump.
  EXPECT_THAT(Read(dir, recording::kFoldedFile), HasSubstr("EventsApp"));
  EXPECT_THAT(result->jit_files, Contains(::testing::StartsWith("jit/")));
}

TEST_F(PipelineTest, AMissingRecordingIsAnError) {
  char dir[] = "/tmp/pipeline_test_empty.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  base::RunLog log;
  PipelineOptions options;
  options.dir = dir;
  EXPECT_FALSE(RebuildOutputs(options, &log).ok());
  ::rmdir(dir);
}

}  // namespace
}  // namespace profcpu::cli
