#include "symbolize/jitdump.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>

#include "base/unique_fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "symbolize/test_util.h"
#include "symbolize/testing_jitdump.h"

namespace profcpu::symbolize {
namespace {

using ::testing::HasSubstr;
using testing::JitdumpBuilder;

std::string NameAt(const Jitdump& dump, uint64_t address, uint64_t time) {
  auto match = dump.Lookup(dump.Generation(address, time), address);
  return match.has_value() ? std::string(match->name) : "";
}

// Code at 0x1000 is reused: A is loaded, then B over it; A' is loaded at
// 0x3000 and moved to 0x5000.
std::string History(bool swap = false) {
  return JitdumpBuilder(swap)
      .Load(100, 0x1000, 0x100, "int32 [App] App::A()[OptimizedTier1]")
      .Load(200, 0x3000, 0x40, "JS:*moved app.js:3")
      .Load(300, 0x1000, 0x80, "int32 [App] App::B()[QuickJitted]")
      .Move(400, 0x3000, 0x5000, 0x40)
      .bytes();
}

TEST(JitdumpTest, SampleNamesTheCodeAtItsAddressAtItsTime) {
  auto dump = Jitdump::Parse(History());
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_EQ(dump->region_count(), 4u);
  // Before any record: the first code logged there (a replay logs code
  // after it ran; code cannot run before it was written).
  EXPECT_EQ(NameAt(*dump, 0x1010, 50), "int32 [App] App::A()[OptimizedTier1]");
  EXPECT_EQ(NameAt(*dump, 0x1010, 150), "int32 [App] App::A()[OptimizedTier1]");
  EXPECT_EQ(NameAt(*dump, 0x1010, 350), "int32 [App] App::B()[QuickJitted]");
  // B is shorter than A: past B's end, A's last bytes are A's again.
  EXPECT_EQ(NameAt(*dump, 0x10f0, 350), "int32 [App] App::A()[OptimizedTier1]");
  EXPECT_NE(dump->Generation(0x1010, 150), dump->Generation(0x1010, 350));
  EXPECT_NE(dump->Generation(0x1010, 50) & Jitdump::kLoggedLater, 0u);
  EXPECT_EQ(dump->Generation(0x1010, 150) & Jitdump::kLoggedLater, 0u);
  auto match = dump->Lookup(dump->Generation(0x1010, 350), 0x1010);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->offset, 0x10u);
}

// .NET's EnablePerfMap replays code that ran long before, stamped with the
// replay's time: samples taken before it must still be named.
TEST(JitdumpTest, ReplayedCodeNamesSamplesTakenBeforeTheReplay) {
  auto dump = Jitdump::Parse(JitdumpBuilder(false)
                                 .Load(1000, 0x7000, 0x100, "void [Lib] Lib::Run()[PreJIT]")
                                 .bytes());
  ASSERT_TRUE(dump.ok());
  EXPECT_EQ(NameAt(*dump, 0x7010, 10), "void [Lib] Lib::Run()[PreJIT]");
  EXPECT_EQ(NameAt(*dump, 0x7200, 10), "");  // outside every record
}

TEST(JitdumpTest, MovedCodeLeavesItsOldPlaceAtTheMove) {
  auto dump = Jitdump::Parse(History());
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_EQ(NameAt(*dump, 0x3010, 350), "JS:*moved app.js:3");
  EXPECT_EQ(NameAt(*dump, 0x3010, 450), "");
  EXPECT_EQ(NameAt(*dump, 0x5010, 350), "");
  EXPECT_EQ(NameAt(*dump, 0x5010, 450), "JS:*moved app.js:3");
  EXPECT_EQ(dump->stats().code_moves, 1u);
}

TEST(JitdumpTest, ByteSwappedFileReadsTheSame) {
  auto dump = Jitdump::Parse(History(/*swap=*/true));
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_TRUE(dump->stats().byte_swapped);
  EXPECT_EQ(dump->header_pid(), 4242u);
  EXPECT_EQ(NameAt(*dump, 0x1010, 150), "int32 [App] App::A()[OptimizedTier1]");
  EXPECT_EQ(NameAt(*dump, 0x1010, 350), "int32 [App] App::B()[QuickJitted]");
  EXPECT_EQ(NameAt(*dump, 0x5010, 450), "JS:*moved app.js:3");
}

TEST(JitdumpTest, DebugInfoGivesSourceLinesAndFollowsMoves) {
  std::string bytes = JitdumpBuilder()
                          .Debug(99, 0x1000, {{0x1000, 10, "app.js"},
                                              {0x1020, 12, "\xff"},
                                              {0x1040, 30, "lib.js"}})
                          .Load(100, 0x1000, 0x100, "JS:*work app.js:10")
                          .Move(200, 0x1000, 0x9000, 0x100)
                          .bytes();
  auto dump = Jitdump::Parse(bytes);
  ASSERT_TRUE(dump.ok()) << dump.status();
  auto at = [&](uint64_t address, uint64_t time) {
    auto m = dump->Lookup(dump->Generation(address, time), address);
    return m.has_value() ? std::string(m->source_file) + ":" + std::to_string(m->line) : "";
  };
  EXPECT_EQ(at(0x1004, 150), "app.js:10");
  EXPECT_EQ(at(0x1024, 150), "app.js:12");  // "\xff": the previous entry's file
  EXPECT_EQ(at(0x10ff, 150), "lib.js:30");
  EXPECT_EQ(at(0x9024, 250), "app.js:12");
  EXPECT_EQ(dump->stats().debug_infos, 1u);
}

TEST(JitdumpTest, UnwindingInfoAndUnknownRecordsAreSkipped) {
  std::string bytes = JitdumpBuilder()
                          .Unwinding(50, 32, 16, 32)
                          .Raw(77, 60, std::string(24, 'z'))
                          .Load(100, 0x1000, 0x10, "after")
                          .bytes();
  auto dump = Jitdump::Parse(bytes);
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_EQ(dump->stats().unwinding_infos, 1u);
  EXPECT_EQ(dump->stats().unknown_records, 1u);
  EXPECT_EQ(NameAt(*dump, 0x1000, 100), "after");
  EXPECT_TRUE(dump->stats().stopped_because.empty());
}

TEST(JitdumpTest, InconsistentUnwindingInfoStopsTheParse) {
  std::string bytes = JitdumpBuilder()
                          .Load(10, 0x1000, 0x10, "before")
                          .Unwinding(50, 1 << 20, 16, 8)  // claims more than it holds
                          .Load(100, 0x2000, 0x10, "after")
                          .bytes();
  auto dump = Jitdump::Parse(bytes);
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_EQ(NameAt(*dump, 0x1000, 100), "before");
  EXPECT_EQ(NameAt(*dump, 0x2000, 100), "");
  EXPECT_THAT(dump->Warnings("jit-1.dump")[0], HasSubstr("UNWINDING_INFO"));
}

TEST(JitdumpTest, TruncatedLastRecordIsToleratedAtEveryCut) {
  std::string full = JitdumpBuilder()
                         .Load(100, 0x1000, 0x10, "first")
                         .Load(200, 0x2000, 0x10, "second")
                         .bytes();
  const size_t last_record = full.size() - (16 + 40 + 7 + 0x10);
  for (size_t cut = last_record; cut < full.size(); ++cut) {
    auto dump = Jitdump::Parse(full.substr(0, cut));
    ASSERT_TRUE(dump.ok()) << "cut at " << cut << ": " << dump.status();
    EXPECT_EQ(NameAt(*dump, 0x1000, 300), "first") << cut;
    EXPECT_TRUE(dump->stats().truncated || cut == last_record) << cut;
    EXPECT_TRUE(dump->stats().stopped_because.empty()) << cut;
  }
}

TEST(JitdumpTest, CodeCloseEndsTheFile) {
  std::string bytes =
      JitdumpBuilder().Load(1, 0x1000, 8, "kept").Close(2).Load(3, 0x2000, 8, "ignored").bytes();
  auto dump = Jitdump::Parse(bytes);
  ASSERT_TRUE(dump.ok());
  EXPECT_TRUE(dump->stats().closed);
  EXPECT_EQ(dump->region_count(), 1u);
}

TEST(JitdumpTest, ArchitectureTimestampsUseTheLatestDefinition) {
  std::string bytes = JitdumpBuilder(false, /*flags=*/1)
                          .Load(900, 0x1000, 0x10, "old")
                          .Load(100, 0x1000, 0x10, "new")
                          .bytes();
  auto dump = Jitdump::Parse(bytes);
  ASSERT_TRUE(dump.ok());
  EXPECT_EQ(NameAt(*dump, 0x1000, 0), "new");
  EXPECT_THAT(dump->Warnings("x")[0], HasSubstr("architecture clock"));
}

TEST(JitdumpTest, BadHeadersAreErrors) {
  std::string good = JitdumpBuilder().bytes();
  EXPECT_FALSE(Jitdump::Parse("short").ok());
  std::string magic = good;
  magic[0] = 'X';
  EXPECT_THAT(Jitdump::Parse(magic).status().message(), HasSubstr("magic"));
  std::string version = good;
  version[4] = 2;
  EXPECT_THAT(Jitdump::Parse(version).status().message(), HasSubstr("version 2"));
  EXPECT_THAT(Jitdump::Parse(JitdumpBuilder(false, 2).bytes()).status().message(),
              HasSubstr("flags"));
  std::string size = good;
  size[8] = 8;  // header smaller than itself
  EXPECT_FALSE(Jitdump::Parse(size).ok());
}

TEST(JitdumpTest, LimitsBoundWhatIsKept) {
  JitdumpBuilder builder;
  for (int i = 0; i < 100; ++i) builder.Load(i, 0x1000 + 0x100 * i, 0x10, "m");
  JitdumpLimits limits;
  limits.max_regions = 10;
  auto dump = Jitdump::Parse(builder.bytes(), limits);
  ASSERT_TRUE(dump.ok());
  EXPECT_EQ(dump->region_count(), 10u);
  EXPECT_TRUE(dump->stats().limit_hit);
}

// Hundreds of definitions of one address: the index keeps the latest ones.
TEST(JitdumpTest, HeavyReuseStaysBoundedAndNamesTheLatest) {
  JitdumpBuilder builder;
  for (int i = 0; i < 500; ++i) builder.Load(1000 + i, 0x1000, 0x10, "m" + std::to_string(i));
  auto dump = Jitdump::Parse(builder.bytes());
  ASSERT_TRUE(dump.ok());
  EXPECT_EQ(NameAt(*dump, 0x1000, 5000), "m499");
  EXPECT_EQ(NameAt(*dump, 0x1000, 1480), "m480");
}

TEST(JitdumpTest, ReadsFromAFile) {
  testing::ScratchDir dir;
  std::string path = dir.Write("jit-4242.dump", History());
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  auto dump = Jitdump::Read(fd.get(), path);
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_EQ(NameAt(*dump, 0x5010, 450), "JS:*moved app.js:3");
}

TEST(JitdumpTest, CorruptBytesNeverCrash) {
  const std::string base = JitdumpBuilder()
                               .Debug(1, 0x1000, {{0x1000, 1, "a"}, {0x1004, 2, "\xff"}})
                               .Load(2, 0x1000, 0x20, "x")
                               .Move(3, 0x1000, 0x2000, 0x20)
                               .Unwinding(4, 16, 8, 16)
                               .bytes();
  std::mt19937 rng(7);
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = base;
    int flips = 1 + round % 4;
    for (int f = 0; f < flips; ++f) {
      size_t at = 40 + rng() % (bytes.size() - 40);
      bytes[at] = static_cast<char>(rng());
    }
    if (round % 5 == 0) bytes.resize(40 + rng() % (bytes.size() - 40));
    auto dump = Jitdump::Parse(bytes);
    if (!dump.ok()) continue;
    for (uint64_t a : {0x1000ull, 0x1010ull, 0x2008ull}) {
      (void)dump->Lookup(dump->Generation(a, 10), a);
    }
  }
}

}  // namespace
}  // namespace profcpu::symbolize
