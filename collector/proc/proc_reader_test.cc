#include "collector/proc/proc_reader.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

TEST(ProcReaderTest, ParsesExecutableMappingsOnly) {
  const char* maps =
      "55d0c6e4b000-55d0c6e4c000 r--p 00000000 08:01 1234    /usr/bin/app\n"
      "55d0c6e4c000-55d0c6e4d000 r-xp 00001000 08:01 1234    /usr/bin/app\n"
      "7f0000000000-7f0000100000 rwxp 00000000 00:00 0 \n"
      "7f1000000000-7f1000001000 r-xp 00002000 00:05 99     /path with spaces/lib.so (deleted)\n"
      "garbage line\n"
      "7ffc00000000-7ffc00001000 r-xp 00000000 00:00 0       [vdso]\n";
  auto mappings = ParseProcMaps(maps, 42, 1000);
  ASSERT_EQ(mappings.size(), 4u);
  EXPECT_EQ(mappings[0].filename, "/usr/bin/app");
  EXPECT_EQ(mappings[0].start, 0x55d0c6e4c000u);
  EXPECT_EQ(mappings[0].length, 0x1000u);
  EXPECT_EQ(mappings[0].file_offset, 0x1000u);
  EXPECT_EQ(mappings[0].dev_major, 8u);
  EXPECT_EQ(mappings[0].inode, 1234u);
  EXPECT_TRUE(mappings[0].prot & PROT_EXEC);
  EXPECT_TRUE(mappings[0].synthesized);
  EXPECT_EQ(mappings[1].filename, "//anon");
  EXPECT_EQ(mappings[2].filename, "/path with spaces/lib.so (deleted)");
  EXPECT_EQ(mappings[3].filename, "[vdso]");
  EXPECT_EQ(mappings[3].pid, 42u);
}

TEST(ProcReaderTest, NamespacePidsFromStatus) {
  EXPECT_EQ(ParseNamespacePids("Name:\tx\nNStgid:\t4242\t1\nNSpid:\t4242\t1\n"),
            (std::vector<uint32_t>{4242, 1}));
  EXPECT_TRUE(ParseNamespacePids("Name:\tx\n").empty());
  EXPECT_TRUE(ParseNamespacePids("NStgid:\tabc\n").empty());
}

// Found by tests/fuzz/proc_fuzzer: repeated NStgid lines added up past what a
// recording can hold, which would have made the recording unreadable.
TEST(ProcReaderTest, NamespacePidsAreBounded) {
  EXPECT_EQ(ParseNamespacePids("NStgid:\t7\t1\nNStgid:\t8\t2\n"), (std::vector<uint32_t>{7, 1}));
  std::string deep = "NStgid:";
  for (int i = 0; i < 65; ++i) deep += " 1";
  EXPECT_TRUE(ParseNamespacePids(deep).empty());
}

TEST(ProcReaderTest, ReadsThisProcess) {
  std::thread t([] { ::usleep(200000); });
  auto tids = ListThreads(::getpid());
  ASSERT_TRUE(tids.ok());
  EXPECT_GE(tids->size(), 2u);
  auto maps = ReadProcMaps(::getpid(), 0);
  ASSERT_TRUE(maps.ok());
  EXPECT_FALSE(maps->empty());
  auto ns = ReadNamespacePids(::getpid());
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(ns->front(), static_cast<uint32_t>(::getpid()));
  auto cmdline = ReadCommandLine(::getpid());
  ASSERT_TRUE(cmdline.ok());
  EXPECT_NE(cmdline->find("collector_test"), std::string::npos);
  t.join();
}

TEST(ProcReaderTest, ThreadGroupOfAThreadIsItsProcess) {
  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  std::thread t([&] {
    tid = ::gettid();
    while (!done) ::usleep(1000);
  });
  while (tid == 0) ::usleep(1000);
  EXPECT_EQ(ReadThreadGroupId(tid).value_or(0), ::getpid());
  EXPECT_EQ(ReadThreadGroupId(::getpid()).value_or(0), ::getpid());
  done = true;
  t.join();
  EXPECT_FALSE(ReadThreadGroupId(999999999).ok());
}

TEST(ProcReaderTest, MissingProcessIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(ListThreads(999999999).status()));
}

}  // namespace
}  // namespace profcpu::collector
