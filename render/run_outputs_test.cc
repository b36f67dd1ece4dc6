#include "render/run_outputs.h"

#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "fold/profile_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "render/testing_dotnet_event_profiles.h"
#include "render/perfview_export.h"
#include "render/run_page.h"

namespace profcpu::render {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class RunOutputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/run_outputs_test.XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    fold::testing::ProfileMaker maker;
    const uint32_t main = maker.Location(0x1000, false, "/app", {{"main"}});
    const uint32_t work = maker.Location(0x2000, false, "/app", {{"do_work"}});
    for (int i = 0; i < 3; ++i) {
      maker.Sample("app", 7, 7, 0, 1'000'000'000 + i * 10'000'000, 1, "cpu-clock", {work, main});
    }
    maker.Sample("app", 7, 8, 1, 1'050'000'000, 1, "cpu-clock", {main});
    profile_ = std::move(maker.profile());
    summary_.header.start_time_ns = 1'000'000'000;
    summary_.header.target = "pid 7";
    summary_.samples = 4;
  }
  void TearDown() override { (void)std::system(absl::StrCat("rm -rf ", dir_).c_str()); }

  std::string Read(const std::string& name) {
    return base::ReadFileBounded(absl::StrCat(dir_, "/", name), 1 << 24).value_or("");
  }

  absl::StatusOr<WrittenOutputs> Write(const RunOutputOptions& options,
                                       const fold::DotnetEventProfiles* events = nullptr,
                                       std::string* log_text = nullptr) {
    RunOutputsInput input;
    input.dotnet_event_profiles = events;
    input.dir = dir_;
    input.summary = &summary_;
    input.profile = &profile_;
    input.page_events = {{0.02, 0.001, "gc", 7, "GC gen0"}};
    input.generator = "profcpu test";
    base::StageTimes times;
    base::RunLog log;
    absl::StatusOr<WrittenOutputs> written = WriteRunOutputs(input, options, &times, &log);
    if (log_text != nullptr) {
      const std::string path = absl::StrCat(dir_, "/profcpu.log");
      EXPECT_TRUE(log.Open(path));
      log.Close();
      *log_text = Read("profcpu.log");
    }
    return written;
  }

  std::string dir_;
  fold::Profile profile_;
  fold::RecordingSummary summary_;
};

// bench/end_of_run.py reads this line to project the page's time on 16 cores.
TEST_F(RunOutputsTest, LogsTheParallelPageLine) {
  std::string log;
  ASSERT_TRUE(Write({}, nullptr, &log).ok());
  EXPECT_THAT(log, ::testing::ContainsRegex(
                       "parallel profile\\.html: [0-9]+\\.[0-9]{3} s wall, serial [0-9]+\\.[0-9]{3} s, "
                       "1 tasks on 1 threads, longest task [0-9]+\\.[0-9]{3} s, "
                       "task CPU [0-9]+\\.[0-9]{3} s\n"));
}

TEST(ParallelPageLineTest, SerialIsTheWallTimeButTheCompression) {
  PageWriteTimes times;
  times.wall_s = 2.5;
  times.work.deflate = {12, 4, 0.5, 0.25, 1.75};
  EXPECT_EQ(ParallelPageLine(times),
            "parallel profile.html: 2.500 s wall, serial 2.000 s, 12 tasks on 4 threads, "
            "longest task 0.250 s, task CPU 1.750 s");
}

TEST_F(RunOutputsTest, WritesTheStandardOutputsFromTheProfile) {
  auto written = Write({});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_THAT(written->files, ElementsAre("folded_stacks.out", "perf_script.out",
                                          "flamegraph.svg", "profile.html"));
  EXPECT_TRUE(written->exports.empty());
  EXPECT_EQ(Read("folded_stacks.out"), "app;main 1\napp;main;do_work 3\n");
  EXPECT_THAT(Read("flamegraph.svg"), HasSubstr("do_work (3 samples, 75.00%)"));
  // The runtime's events are on the page's lane, never among the samples.
  EXPECT_THAT(Read("perf_script.out"), Not(HasSubstr("GC gen0")));
  EXPECT_THAT(Read("profile.html"), HasSubstr("GC gen0"));
  EXPECT_THAT(Read("profile.html"), HasSubstr("profcpu test"));
}

TEST_F(RunOutputsTest, GraphOverridesAndThreadsAndNoHtml) {
  RunOutputOptions options;
  options.html = false;
  options.threads = true;
  options.graph.title = "My title";
  auto written = Write(options);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_THAT(written->files, Not(::testing::Contains("profile.html")));
  EXPECT_THAT(Read("flamegraph.svg"), HasSubstr("My title"));
  EXPECT_THAT(Read("folded_stacks.out"), HasSubstr("app-7/8;main 1"));
}

TEST_F(RunOutputsTest, BadGraphOverridesFailBeforeAnyExport) {
  RunOutputOptions options;
  options.pprof = true;
  options.graph.width = 1;
  auto written = Write(options);
  EXPECT_TRUE(absl::IsInvalidArgument(written.status())) << written.status();
  EXPECT_EQ(::access(absl::StrCat(dir_, "/", kPprofFile).c_str(), F_OK), -1);
}

TEST_F(RunOutputsTest, ExportsAreListedApart) {
  RunOutputOptions options;
  options.pprof = options.perfview = true;
  auto written = Write(options);
  ASSERT_TRUE(written.ok()) << written.status();
  const std::string zip = PerfViewArchiveName(dir_);
  EXPECT_THAT(written->exports, ElementsAre(kPprofFile, zip));
  EXPECT_EQ(written->files.back(), zip);
  EXPECT_FALSE(Read(kPprofFile).empty());
  EXPECT_FALSE(Read(zip).empty());
}

// Each .NET event profile with samples: its folded stacks among the files,
// its pprof file among the exports, a view in profile.html; the CPU outputs
// as without them.
TEST_F(RunOutputsTest, DotnetEventProfilesWithSamplesGetTheirOutputs) {
  const fold::DotnetEventProfiles events = testing::MakeDotnetEventProfiles(false);
  RunOutputOptions options;
  options.pprof = true;
  auto written = Write(options, &events);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_THAT(written->files,
              ElementsAre("folded_stacks.out", "perf_script.out", "flamegraph.svg",
                          "alloc_stacks.out", "lock_wait_stacks.out", "profile.html",
                          "profile.pb.gz", "alloc.pb.gz", "lock_wait.pb.gz"));
  EXPECT_THAT(written->exports, ElementsAre("profile.pb.gz", "alloc.pb.gz", "lock_wait.pb.gz"));
  EXPECT_EQ(Read("folded_stacks.out"), "app;main 1\napp;main;do_work 3\n");
  EXPECT_THAT(Read("lock_wait_stacks.out"), HasSubstr("EventsApp.Worker::Run;"));
  const std::string page = Read("profile.html");
  EXPECT_THAT(page, HasSubstr("id=\"profcpu-data-alloc\""));
  EXPECT_THAT(page, HasSubstr("id=\"profcpu-data-lock_wait\""));
  EXPECT_THAT(page, Not(HasSubstr("profcpu-data-exception")));
  EXPECT_THAT(page, HasSubstr("\"label\":\"Lock waits\""));
}

TEST_F(RunOutputsTest, NoEventSamplesNoEventOutputs) {
  fold::DotnetEventProfiles events;
  events.profiles.resize(3);
  RunOutputOptions options;
  options.pprof = true;
  auto written = Write(options, &events);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_THAT(written->exports, ElementsAre("profile.pb.gz"));
  EXPECT_THAT(Read("profile.html"), Not(HasSubstr("\"profiles\":[")));
}

TEST(PerfViewExportTest, ArchiveIsNamedAfterTheRunFolder) {
  EXPECT_EQ(PerfViewArchiveName("profilings/10-00-00_2026-11-24/"),
            "10-00-00_2026-11-24.trace.zip");
  EXPECT_EQ(PerfViewArchiveName("run"), "run.trace.zip");
  EXPECT_EQ(PerfViewArchiveName("/"), "profcpu.trace.zip");
  EXPECT_EQ(PerfViewArchiveName("a/.."), "profcpu.trace.zip");
}

}  // namespace
}  // namespace profcpu::render
