#include "symbolize/perf_map.h"

#include <fcntl.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "symbolize/test_util.h"

namespace profcpu::symbolize {
namespace {

using ::testing::HasSubstr;

std::string NameAt(const PerfMap& map, uint64_t address) {
  auto match = map.Lookup(address);
  return match.has_value() ? std::string(match->name) : "<none>";
}

TEST(PerfMapTest, ParsesBothAddressStyles) {
  // Older CoreCLR: 16 upper-case digits, no 0x; newer: "%p" gives 0x...
  PerfMap map = PerfMap::Parse(
      "00007F1234560000 40 OldStyle\n"
      "0x7f1234570000 0x20 NewStyle\n");
  EXPECT_EQ(map.stats().entries, 2u);
  auto match = map.Lookup(0x7f1234560010);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->name, "OldStyle");
  EXPECT_EQ(match->offset, 0x10u);
  EXPECT_EQ(NameAt(map, 0x7f123456003f), "OldStyle");
  EXPECT_EQ(NameAt(map, 0x7f1234560040), "<none>");  // [START, START+SIZE)
  EXPECT_EQ(NameAt(map, 0x7f1234570000), "NewStyle");
  EXPECT_EQ(NameAt(map, 0x7f1234570020), "<none>");
}

TEST(PerfMapTest, NameIsTheRestOfTheLineSpacesIncluded) {
  PerfMap map = PerfMap::Parse(
      "7f0000001000 100 instance int32 [System.Private.CoreLib] "
      "System.Collections.Generic.List`1[System.__Canon]::get_Count()[OptimizedTier1]\r\n"
      "7f0000002000 10 JS:*fib [eval]:1:13\n"
      "7f0000003000\t10\tstub<1> AllocateTemporaryEntryPoints<PreStubWorker>\n");
  EXPECT_EQ(NameAt(map, 0x7f0000001004),
            "instance int32 [System.Private.CoreLib] "
            "System.Collections.Generic.List`1[System.__Canon]::get_Count()[OptimizedTier1]");
  EXPECT_EQ(NameAt(map, 0x7f0000002000), "JS:*fib [eval]:1:13");
  EXPECT_EQ(NameAt(map, 0x7f0000003000), "stub<1> AllocateTemporaryEntryPoints<PreStubWorker>");
}

TEST(PerfMapTest, LaterLineWinsForIdenticalRanges) {
  PerfMap map = PerfMap::Parse(
      "1000 100 Foo()[QuickJitted]\n"
      "1000 100 Foo()[OptimizedTier1]\n");
  EXPECT_EQ(NameAt(map, 0x1050), "Foo()[OptimizedTier1]");
}

TEST(PerfMapTest, LaterLineWinsOnlyWhereItOverlaps) {
  PerfMap map = PerfMap::Parse(
      "1000 300 Old\n"
      "1100 100 New\n"
      "1180 200 Newest\n");
  EXPECT_EQ(NameAt(map, 0x1000), "Old");
  EXPECT_EQ(NameAt(map, 0x10ff), "Old");
  EXPECT_EQ(NameAt(map, 0x1100), "New");
  EXPECT_EQ(NameAt(map, 0x117f), "New");
  EXPECT_EQ(NameAt(map, 0x1180), "Newest");
  EXPECT_EQ(NameAt(map, 0x137f), "Newest");
  EXPECT_EQ(NameAt(map, 0x1380), "<none>");
  // Offsets count from the winning entry's own start.
  auto match = map.Lookup(0x1200);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->offset, 0x80u);
}

TEST(PerfMapTest, EarlierLineStillWinsWhereTheLaterDoesNotReach) {
  // A later, smaller entry inside an earlier one splits it in two.
  PerfMap map = PerfMap::Parse(
      "1000 100 Outer\n"
      "1040 10 Inner\n");
  EXPECT_EQ(NameAt(map, 0x103f), "Outer");
  EXPECT_EQ(NameAt(map, 0x1040), "Inner");
  EXPECT_EQ(NameAt(map, 0x1050), "Outer");
  auto match = map.Lookup(0x1050);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->offset, 0x50u);
}

TEST(PerfMapTest, MalformedLinesAreSkippedAndCounted) {
  PerfMap map = PerfMap::Parse(
      "1000 10 Good\n"
      "zz 10 BadStart\n"
      "2000 qq BadSize\n"
      "3000 10\n"
      "3000\n"
      "-4000 10 Negative\n"
      "0x 10 EmptyHex\n"
      "ffffffffffffffff 10 Overflows\n"
      "10000000000000000 1 TooBig\n"
      "\n"
      "5000 0 Empty\n"
      "6000 10 AlsoGood\n");
  EXPECT_EQ(map.stats().entries, 2u);
  EXPECT_EQ(map.stats().malformed, 8u);
  EXPECT_EQ(map.stats().empty_ranges, 1u);
  EXPECT_EQ(NameAt(map, 0x6000), "AlsoGood");
  auto warnings = map.Warnings("/tmp/perf-1.map");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("/tmp/perf-1.map: skipped 8 malformed line(s)"));
}

TEST(PerfMapTest, LastLineNeedsNoNewline) {
  PerfMap map = PerfMap::Parse("1000 10 First\n2000 10 Last");
  EXPECT_EQ(NameAt(map, 0x2000), "Last");
}

TEST(PerfMapTest, OverlongLinesAreMalformed) {
  PerfMapLimits limits;
  limits.max_line = 64;
  PerfMap map =
      PerfMap::Parse(absl::StrCat("1000 10 ", std::string(100, 'x'), "\n2000 10 Short\n"), limits);
  EXPECT_EQ(map.stats().malformed, 1u);
  EXPECT_EQ(NameAt(map, 0x1000), "<none>");
  EXPECT_EQ(NameAt(map, 0x2000), "Short");
}

TEST(PerfMapTest, ByteCapTruncatesAtALineAndWarns) {
  PerfMapLimits limits;
  limits.max_bytes = 20;  // "1000 10 First\n" is 14 bytes; the second line is cut
  PerfMap map = PerfMap::Parse("1000 10 First\n2000 10 SecondLine\n", limits);
  EXPECT_TRUE(map.stats().truncated_bytes);
  EXPECT_EQ(NameAt(map, 0x1000), "First");
  EXPECT_EQ(NameAt(map, 0x2000), "<none>");
  EXPECT_EQ(map.stats().malformed, 0u);  // the cut line is not blamed on the file
  auto warnings = map.Warnings("m");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("size limit"));
}

TEST(PerfMapTest, EntryCapStopsAndWarns) {
  PerfMapLimits limits;
  limits.max_entries = 2;
  PerfMap map = PerfMap::Parse("1000 10 A\n2000 10 B\n3000 10 C\n", limits);
  EXPECT_TRUE(map.stats().truncated_entries);
  EXPECT_EQ(NameAt(map, 0x2000), "B");
  EXPECT_EQ(NameAt(map, 0x3000), "<none>");
  EXPECT_THAT(map.Warnings("m").back(), HasSubstr("entry limit"));
}

class PerfMapReadTest : public ::testing::Test {
 protected:
  absl::StatusOr<PerfMap> ReadFile(absl::string_view contents, const PerfMapLimits& limits = {}) {
    std::string path = dir_.Write("perf-1.map", contents);
    base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    EXPECT_TRUE(fd.valid());
    return PerfMap::Read(fd.get(), path, limits);
  }
  testing::ScratchDir dir_;
};

TEST_F(PerfMapReadTest, StreamsLinesAcrossChunkBoundaries) {
  // ~1.5 MB: many 64 KiB chunk boundaries fall inside lines.
  std::string text;
  constexpr int kEntries = 30000;
  for (int i = 0; i < kEntries; ++i) {
    absl::StrAppend(&text, "0x", absl::Hex(0x100000 + i * 0x40), " 40 Method", i,
                    "(int32, string)[OptimizedTier1]\n");
  }
  auto map = ReadFile(text);
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->stats().entries, static_cast<uint64_t>(kEntries));
  EXPECT_EQ(map->stats().malformed, 0u);
  for (int i = 0; i < kEntries; i += 997) {
    EXPECT_EQ(NameAt(*map, 0x100000 + i * 0x40 + 0x3f),
              absl::StrCat("Method", i, "(int32, string)[OptimizedTier1]"));
  }
}

TEST_F(PerfMapReadTest, ByteCapWhileStreaming) {
  std::string text;
  for (int i = 0; i < 10000; ++i)
    absl::StrAppend(&text, absl::Hex(0x1000 + i * 16), " 10 M", i, "\n");
  PerfMapLimits limits;
  limits.max_bytes = 100000;
  auto map = ReadFile(text, limits);
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_TRUE(map->stats().truncated_bytes);
  EXPECT_EQ(map->stats().bytes, 100000u);
  EXPECT_EQ(map->stats().malformed, 0u);
  EXPECT_EQ(NameAt(*map, 0x1000), "M0");
  EXPECT_EQ(NameAt(*map, 0x1000 + 9999 * 16), "<none>");
}

TEST_F(PerfMapReadTest, ExactlyAtTheCapIsNotTruncated) {
  PerfMapLimits limits;
  limits.max_bytes = 14;
  auto map = ReadFile("1000 10 First\n", limits);
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_FALSE(map->stats().truncated_bytes);
  EXPECT_EQ(NameAt(*map, 0x1000), "First");
}

}  // namespace
}  // namespace profcpu::symbolize
