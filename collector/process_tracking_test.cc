#include "collector/process_tracking.h"

#include <unistd.h>

#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

// Records as the orderer hands them on.
struct Sink {
  std::vector<recording::Record> records;
  RecordOrderer orderer{[this](const recording::Record& r) {
    records.push_back(r);
    return absl::OkStatus();
  }};
};

TEST(DescribeProcessTest, HowThisProcessSeesItself) {
  recording::ProcessInfo info = DescribeProcess(::getpid(), 77);
  EXPECT_EQ(info.time_ns, 77u);
  EXPECT_EQ(info.pid, static_cast<uint32_t>(::getpid()));
  ASSERT_FALSE(info.namespace_pids.empty());
  EXPECT_EQ(info.namespace_pids.back(), static_cast<uint32_t>(::getpid()));
  EXPECT_FALSE(info.command_line.empty());
}

TEST(SynthesizeExistingProcessTest, ItsSelfThreadsAndMappingsAsRecords) {
  Sink sink;
  std::vector<recording::ProcessInfo> processes;
  std::vector<std::string> warnings;
  ProcessRoots roots;
  SynthesizeExistingProcess(::getpid(), 1000, &sink.orderer, &processes, &warnings, &roots,
                            /*tailer=*/nullptr);
  ASSERT_TRUE(sink.orderer.Flush().ok());
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].pid, static_cast<uint32_t>(::getpid()));
  int comms = 0, mmaps = 0;
  for (const recording::Record& record : sink.records) {
    if (const auto* comm = std::get_if<recording::Comm>(&record)) {
      ++comms;
      EXPECT_TRUE(comm->synthesized);
      EXPECT_EQ(comm->time_ns, 1000u);
    }
    if (std::holds_alternative<recording::Mmap>(record)) ++mmaps;
  }
  EXPECT_GE(comms, 1);  // the main thread at least
  EXPECT_GE(mmaps, 1);  // this test binary's code
  // The files it maps are kept through its root.
  EXPECT_TRUE(roots.Contains(::getpid()));
}

TEST(SynthesizeExistingProcessTest, AProcessGoneSaysItsMappingsCouldNotBeRead) {
  Sink sink;
  std::vector<recording::ProcessInfo> processes;
  std::vector<std::string> warnings;
  ProcessRoots roots;
  SynthesizeExistingProcess(99999999, 1, &sink.orderer, &processes, &warnings, &roots, nullptr);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(warnings[0], "cannot read the mappings of process 99999999: "))
      << warnings[0];
}

TEST(KeepMappedFileTest, OnlyFilesAreKept) {
  ProcessRoots roots;
  recording::Mmap mmap;
  mmap.pid = static_cast<uint32_t>(::getpid());
  for (const char* name : {"", "//anon", "[vdso]", "/memfd:doublemapper (deleted)"}) {
    mmap.filename = name;
    KeepMappedFile(mmap, &roots);
    EXPECT_FALSE(roots.Contains(::getpid())) << name;
  }
  mmap.filename = "/proc/self/exe";
  KeepMappedFile(mmap, &roots);
  EXPECT_TRUE(roots.Contains(::getpid()));
}

TEST(TailPerfMapOfTest, WatchesProcessesThatMapJitCode) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/tracking_", ::getpid());
  PerfMapTailer tailer(dir, PerfMapTailer::Limits());
  ProcessRoots roots;
  recording::Mmap mmap;
  mmap.pid = static_cast<uint32_t>(::getpid());
  mmap.filename = "/usr/lib/libc.so.6";
  TailPerfMapOf(mmap, {}, 1, &roots, &tailer);
  EXPECT_FALSE(tailer.Knows(mmap.pid));
  mmap.filename = "//anon";
  TailPerfMapOf(mmap, {}, 1, &roots, &tailer);
  EXPECT_TRUE(tailer.Knows(mmap.pid));
  TailPerfMapOf(mmap, {}, 1, &roots, /*tailer=*/nullptr);  // no copies: nothing to do
}

}  // namespace
}  // namespace profcpu::collector
