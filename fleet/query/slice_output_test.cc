#include "fleet/query/slice_output.h"

#include <string>

#include "base/file_io.h"
#include "fleet/query/slice_merge.h"
#include "fleet/query/slice_profile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

using ::testing::HasSubstr;

MergedSlice Slice(uint64_t count7, uint64_t max_stacks) {
  SliceMerger merger;
  const std::string totals = "1\t7\t" + std::to_string(count7) +
                             "\tapi\tapi\n1\t9\t3\tcron\tcron\n0\t0\t2\tapi\tapi\n";
  const std::string buckets = "7\t[100]\t[" + std::to_string(count7) +
                              "]\n9\t[100]\t[3]\n0\t[160]\t[2]\n";
  EXPECT_TRUE(merger.AddShardAnswer(0, "a", {totals, buckets}).ok());
  return std::move(merger).Finish(max_stacks);
}

StackNames Names() {
  StackNames names;
  EXPECT_TRUE(names.AddStacksAnswer("a", "7\t[1,2]\n").ok());  // 9 missing
  EXPECT_TRUE(names.AddFramesAnswer("a", "1\tmain\t/srv/api\n2\tschedule\t[kernel.kallsyms]\n").ok());
  return names;
}

std::string Read(const std::string& path) {
  absl::StatusOr<std::string> text = base::ReadFileBounded(path, 1 << 24);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

std::string TempPath(const std::string& name) {
  return std::string(::testing::TempDir()) + "/" + name;
}

TEST(SliceOutput, FoldedNamesRootsAndOther) {
  MergedSlice slice = Slice(5, 10);
  StackNames names = Names();
  SliceProfileStats stats;
  fold::Profile profile = BuildSliceProfile({&slice}, names, &stats);
  EXPECT_EQ(stats.stacks_without_names, 1u);
  const std::string path = TempPath("slice.folded");
  ASSERT_TRUE(WriteSliceOutput(profile, {}, path).ok());
  EXPECT_EQ(Read(path),
            "[other] 2\n"
            "api;main;schedule 5\n"
            "cron;[stack not in store] 3\n");
}

TEST(SliceOutput, SvgHtmlPprof) {
  MergedSlice slice = Slice(5, 10);
  StackNames names = Names();
  SliceProfileStats stats;
  fold::Profile profile = BuildSliceProfile({&slice}, names, &stats);
  SliceOutputInfo info;
  info.subtitle = "namespace=shop";
  info.axis = {100, 220};
  info.bucket_seconds = 60;
  ASSERT_TRUE(WriteSliceOutput(profile, info, TempPath("s.svg")).ok());
  std::string svg = Read(TempPath("s.svg"));
  EXPECT_THAT(svg, HasSubstr("main (5 samples, 50.00%)"));
  ASSERT_TRUE(WriteSliceOutput(profile, info, TempPath("s.html")).ok());
  std::string html = Read(TempPath("s.html"));
  EXPECT_THAT(html, HasSubstr("\"time_resolution_s\":60"));
  EXPECT_THAT(html, HasSubstr("\"start_realtime_ns\":\"100000000000\""));
  ASSERT_TRUE(WriteSliceOutput(profile, info, TempPath("s.pb.gz")).ok());
  std::string pprof = Read(TempPath("s.pb.gz"));
  ASSERT_GE(pprof.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(pprof[0]), 0x1f);  // gzip
  EXPECT_FALSE(WriteSliceOutput(profile, info, TempPath("s.txt")).ok());
}

TEST(SliceOutput, DiffFoldedAndSvg) {
  MergedSlice before = Slice(5, 10), after = Slice(8, 10);
  StackNames names = Names();
  SliceProfileStats stats;
  fold::Profile a = BuildSliceProfile({&before}, names, &stats);
  fold::Profile b = BuildSliceProfile({&after}, names, &stats);
  ASSERT_TRUE(WriteDiffOutput(a, b, {}, TempPath("d.folded")).ok());
  EXPECT_THAT(Read(TempPath("d.folded")), HasSubstr("api;main;schedule 5 8\n"));
  ASSERT_TRUE(WriteDiffOutput(a, b, {}, TempPath("d.svg")).ok());
  EXPECT_FALSE(WriteDiffOutput(a, b, {}, TempPath("d.pb.gz")).ok());
  EXPECT_FALSE(WriteDiffOutput(a, b, {}, TempPath("d.html")).ok());
}

TEST(SliceOutput, PathForValue) {
  EXPECT_EQ(PathForValue("out/flame.svg", "api-1"), "out/flame.api-1.svg");
  EXPECT_EQ(PathForValue("p.pb.gz", "a/../b"), "p.a_.._b.pb.gz");
  EXPECT_EQ(PathForValue("p.html", ""), "p._empty.html");
  EXPECT_EQ(PathForValue("p.html", ".."), "p._..html");
}

}  // namespace
}  // namespace profcpu::fleet
