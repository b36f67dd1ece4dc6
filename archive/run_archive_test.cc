#include "archive/run_archive.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "archive/archive.h"
#include "base/file_io.h"
#include "gtest/gtest.h"

namespace profcpu::archive {
namespace {

// The names FinishRun lists, in its order.
const std::vector<std::string> kRunFiles = {
    "flamegraph.svg", "folded_stacks.out", "perf_script.out", "recording.zst",
    "symbols.bin",    "metadata.json",     "profcpu.log",     "unwound_stacks.bin",
    "profile.html",   "jit/perf-42.map",   "profile.pb.gz",   "alloc_stacks.out",
    "dotnet/42.nettrace"};

TEST(RunArchiveTest, InputsFirstThenTheOutputsWithPerfScriptLast) {
  EXPECT_EQ(ArchiveOrder(kRunFiles),
            (std::vector<std::string>{"recording.zst", "symbols.bin", "metadata.json",
                                      "profcpu.log", "unwound_stacks.bin", "jit/perf-42.map",
                                      "profile.pb.gz", "dotnet/42.nettrace", "profile.html",
                                      "flamegraph.svg", "folded_stacks.out", "perf_script.out",
                                      "alloc_stacks.out"}));
}

TEST(RunArchiveTest, PostprocessSkipsWhatItRebuilds) {
  ExtractSkip with_html = PostprocessSkip(/*html=*/true);
  EXPECT_EQ(with_html.names,
            (std::vector<std::string>{"flamegraph.svg", "folded_stacks.out", "perf_script.out",
                                      "alloc_stacks.out", "lock_wait_stacks.out",
                                      "exception_stacks.out", "profile.html"}));
  EXPECT_EQ(with_html.inputs_marker, "recording.zst");
  ExtractSkip no_html = PostprocessSkip(/*html=*/false);
  EXPECT_EQ(no_html.names,
            (std::vector<std::string>{"flamegraph.svg", "folded_stacks.out", "perf_script.out",
                                      "alloc_stacks.out", "lock_wait_stacks.out",
                                      "exception_stacks.out"}));
}

// Written in ArchiveOrder, unpacked as postprocess does: every input comes
// out, and profile.html too when -format no-html keeps the archived one.
TEST(RunArchiveTest, UnpackingForPostprocessKeepsEveryInput) {
  const std::string src = std::string(::testing::TempDir()) + "/run_archive_src";
  std::system(("rm -rf '" + src + "' && mkdir -p '" + src + "/jit' '" + src + "/dotnet'").c_str());
  std::vector<ArchiveEntry> entries;
  for (const std::string& name : ArchiveOrder(kRunFiles)) {
    ASSERT_TRUE(base::WriteFile(src + "/" + name, name).ok());
    entries.push_back({name, src + "/" + name});
  }
  ASSERT_TRUE(WriteTarGz(src + "/prof.tar.gz", entries).ok());
  for (bool html : {true, false}) {
    const std::string dst = src + (html ? "/html" : "/no_html");
    ::mkdir(dst.c_str(), 0755);
    auto names = ExtractTarGz(src + "/prof.tar.gz", dst, {}, PostprocessSkip(html));
    ASSERT_TRUE(names.ok()) << names.status();
    std::vector<std::string> expected = {"recording.zst",      "symbols.bin",   "metadata.json",
                                         "profcpu.log",        "unwound_stacks.bin",
                                         "jit/perf-42.map",    "profile.pb.gz",
                                         "dotnet/42.nettrace"};
    if (!html) expected.push_back("profile.html");
    EXPECT_EQ(*names, expected) << html;
  }
}

TEST(RunArchiveTest, PostprocessUnpacksOnlyWhatTheFolderLacks) {
  const std::string dir = std::string(::testing::TempDir()) + "/run_archive_unpack";
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "/src'").c_str());
  auto unpack = [&dir](bool* called) {
    return UnpackRunInputs(dir, /*html=*/true, [called](const std::string&) { *called = true; });
  };
  bool called = false;
  EXPECT_TRUE(absl::IsNotFound(unpack(&called).status()));  // neither file

  // An archive without a recording was not written by profcpu.
  ASSERT_TRUE(base::WriteFile(dir + "/src/notes.txt", "x").ok());
  ASSERT_TRUE(WriteTarGz(dir + "/prof.tar.gz", {{"notes.txt", dir + "/src/notes.txt"}}).ok());
  EXPECT_TRUE(absl::IsInvalidArgument(unpack(&called).status()));
  EXPECT_TRUE(called);

  // A run's archive: its inputs come out, the outputs postprocess rebuilds do not.
  ASSERT_TRUE(base::WriteFile(dir + "/src/recording.zst", "rec").ok());
  ASSERT_TRUE(base::WriteFile(dir + "/src/perf_script.out", "big").ok());
  ASSERT_TRUE(WriteTarGz(dir + "/prof.tar.gz", {{"recording.zst", dir + "/src/recording.zst"},
                                                {"perf_script.out", dir + "/src/perf_script.out"}})
                  .ok());
  called = false;
  auto inputs = unpack(&called);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  EXPECT_TRUE(inputs->had_archive);
  EXPECT_TRUE(called);
  struct stat st;
  EXPECT_EQ(::stat((dir + "/recording.zst").c_str(), &st), 0);
  EXPECT_NE(::stat((dir + "/perf_script.out").c_str(), &st), 0);

  // The recording is there now: nothing more to unpack.
  called = false;
  ASSERT_TRUE(unpack(&called).ok());
  EXPECT_FALSE(called);
  std::system(("rm -rf '" + dir + "'").c_str());
}

}  // namespace
}  // namespace profcpu::archive
