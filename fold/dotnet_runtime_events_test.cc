#include "fold/dotnet_runtime_events.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "base/run_log.h"
#include "nettrace/runtime_events.h"
#include "nettrace/test_writer.h"
#include "gtest/gtest.h"

namespace profcpu::fold {
namespace {

using nettrace::kDotNetRuntimeProvider;
using nettrace::testing_nettrace::BlockHeader;
using nettrace::testing_nettrace::CompressedBlob;
using nettrace::testing_nettrace::ExceptionPayload;
using nettrace::testing_nettrace::GcStartPayload;
using nettrace::testing_nettrace::MetadataPayload;
using nettrace::testing_nettrace::Writer;

// One process's stream: a gen2 induced GC paused 3.1 ms from `gc_ns`, then
// one `exception` thrown at `exception_ns` (after the pause).
std::string ProcessStream(uint64_t gc_ns, uint64_t exception_ns, absl::string_view exception) {
  Writer w;
  std::string meta = BlockHeader(true);
  meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                         MetadataPayload(1, kDotNetRuntimeProvider, 9, "GCSuspendEEBegin", 1));
  meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                         MetadataPayload(2, kDotNetRuntimeProvider, 1, "GCStart", 2));
  meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                         MetadataPayload(3, kDotNetRuntimeProvider, 3, "GCRestartEEEnd", 1));
  meta += CompressedBlob(0x80, 0, 0, 0, 0, 0,
                         MetadataPayload(4, kDotNetRuntimeProvider, 80, "ExceptionThrown", 1));
  w.Block("MetadataBlock", meta);
  std::string events = BlockHeader(true);
  constexpr uint8_t kAll = 0x1 | 0x4 | 0x80;  // metadata id, thread, payload size
  events += CompressedBlob(kAll | 0x2, 1, 1, 501, 501, gc_ns, "");
  events += CompressedBlob(kAll, 2, 0, 0, 501, 100'000, GcStartPayload(1, 2, 1));
  events += CompressedBlob(kAll, 3, 0, 0, 501, 3'000'000, "");
  events += CompressedBlob(kAll, 4, 0, 0, 777, exception_ns - gc_ns - 3'100'000,
                           ExceptionPayload(exception, "message"));
  w.Block("EventBlock", events);
  w.End();
  return w.bytes();
}

class DotnetRuntimeEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/profcpu-dotnet-events-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    ASSERT_EQ(::mkdir((dir_ + "/dotnet").c_str(), 0755), 0);
  }
  void TearDown() override { ASSERT_EQ(std::system(("rm -rf " + dir_).c_str()), 0); }

  void Write(absl::string_view name, const std::string& bytes) {
    ASSERT_TRUE(base::WriteFile(absl::StrCat(dir_, "/dotnet/", name), bytes).ok());
  }

  std::string dir_;
};

TEST_F(DotnetRuntimeEventsTest, ReadsEachProcessInPidOrderAndMergesTheirTimelines) {
  Write("42.nettrace", ProcessStream(2'000'000, 20'000'000, "App.A"));
  Write("7.nettrace", ProcessStream(10'000'000, 30'000'000, "App.B"));
  Write("notes.txt", "not a stream");
  Write("x.nettrace", "not a pid");
  base::RunLog log;
  DotnetEventsOutput out = ReadDotnetEvents(dir_, &log);
  EXPECT_TRUE(log.warnings().empty());
  ASSERT_EQ(out.files, (std::vector<std::string>{"dotnet/7.nettrace", "dotnet/42.nettrace"}));
  ASSERT_EQ(out.summaries.size(), 2u);
  EXPECT_EQ(out.summaries[0].pid, 7u);
  EXPECT_EQ(out.summaries[1].pid, 42u);

  std::vector<std::pair<uint32_t, const DotnetEventsSummary::TimelineEvent*>> merged =
      MergedDotnetTimeline(out);
  ASSERT_EQ(merged.size(), 4u);
  EXPECT_EQ(merged[0].second->start_ns, 2'000'000u);
  EXPECT_EQ(merged[0].first, 42u);
  EXPECT_EQ(merged[0].second->label, "gen2 Induced GC, 3.1 ms paused");
  EXPECT_EQ(merged[1].second->start_ns, 10'000'000u);
  EXPECT_EQ(merged[1].first, 7u);
  EXPECT_EQ(merged[2].second->start_ns, 20'000'000u);
  EXPECT_EQ(merged[2].first, 42u);
  EXPECT_EQ(merged[2].second->label, "App.A thrown");
  EXPECT_EQ(merged[3].first, 7u);
  EXPECT_EQ(merged[3].second->label, "App.B thrown");

  EXPECT_EQ(DotnetEventsHeadlines(out),
            absl::StrCat("process 7: ", DotnetEventsHeadline(out.summaries[0]),
                         "; process 42: ", DotnetEventsHeadline(out.summaries[1])));
  out.summaries.pop_back();
  EXPECT_EQ(DotnetEventsHeadlines(out), DotnetEventsHeadline(out.summaries[0]));
}

TEST_F(DotnetRuntimeEventsTest, ADamagedStreamIsWarnedAboutAndKept) {
  std::string cut = ProcessStream(2'000'000, 20'000'000, "App.A");
  cut.pop_back();  // no end-of-stream tag
  Write("5.nettrace", cut);
  base::RunLog log;
  DotnetEventsOutput out = ReadDotnetEvents(dir_, &log);
  ASSERT_EQ(out.files, std::vector<std::string>{"dotnet/5.nettrace"});
  EXPECT_FALSE(out.summaries[0].read_error.ok());
  EXPECT_EQ(out.summaries[0].gc.count, 1u);
  ASSERT_EQ(log.warnings().size(), 1u);
  EXPECT_NE(log.warnings()[0].find("dotnet/5.nettrace is damaged or cut short"), std::string::npos)
      << log.warnings()[0];
}

TEST_F(DotnetRuntimeEventsTest, NoEventsFolderNoProcesses) {
  base::RunLog log;
  DotnetEventsOutput out = ReadDotnetEvents(dir_ + "/elsewhere", &log);
  EXPECT_TRUE(out.files.empty());
  EXPECT_TRUE(DotnetEventsHeadlines(out).empty());
  EXPECT_TRUE(MergedDotnetTimeline(out).empty());
}

}  // namespace
}  // namespace profcpu::fold
