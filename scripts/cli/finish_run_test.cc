#include "scripts/cli/finish_run.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "archive/archive.h"
#include "base/file_io.h"
#include "gtest/gtest.h"
#include "recording/run_folder.h"

namespace profcpu::cli {
namespace {

// A new folder each time (mkdtemp): a folder left by an earlier run whose
// pid this one got again held that run's files, and the archive then held
// them too (pids wrap at 32,768 on a busy CI machine).
std::string MakeRunFolder(const char* name) {
  std::string pattern = absl::StrCat(::testing::TempDir(), "/finish_run_", name, "_XXXXXX");
  const char* made = ::mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr) << pattern;
  const std::string dir = pattern;
  ::mkdir(absl::StrCat(dir, "/jit").c_str(), 0755);
  for (const std::string file : {recording::kFlameGraphFile, recording::kFoldedFile, recording::kPerfScriptFile, recording::kRecordingFile,
                                 recording::kSymbolsFile, "jit/perf-42.map", "profile.pb.gz"}) {
    EXPECT_TRUE(base::WriteFile(absl::StrCat(dir, "/", file), file).ok());
  }
  return dir;
}

PipelineResult Result() {
  PipelineResult result;
  result.summary.samples = 120;
  result.summary.header.target = "pid 42";
  result.unknown_frames.total = 3;
  result.unknown_frames.by_module = {{"/usr/lib/libfoo.so.1", 3}};
  result.jit_files = {"jit/perf-42.map"};
  result.exports = {"profile.pb.gz"};
  return result;
}

TEST(FinishRunTest, WritesMetadataAndAnArchiveOfEveryFile) {
  const std::string dir = MakeRunFolder("archive");
  base::RunLog log;
  ASSERT_TRUE(log.Open(absl::StrCat(dir, "/", recording::kLogFile)));
  log.Warn("a warning for metadata.json");
  absl::StatusOr<std::string> line = FinishRun(dir, Result(), /*write_archive=*/true, &log);
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(*line, "120 samples, 0 lost, 3 unknown frames (all in libfoo.so.1)");

  auto json = base::ReadFileBounded(absl::StrCat(dir, "/", recording::kMetadataFile), 1 << 20);
  ASSERT_TRUE(json.ok());
  const nlohmann::json metadata = nlohmann::json::parse(*json);
  EXPECT_EQ(metadata["warnings"], nlohmann::json::array({"a warning for metadata.json"}));
  const std::vector<std::string> files = metadata["files"];
  for (const char* expected : {"jit/perf-42.map", "profile.pb.gz", recording::kArchiveFile, recording::kLogFile}) {
    EXPECT_NE(std::find(files.begin(), files.end(), expected), files.end()) << expected;
  }

  const std::string unpacked = absl::StrCat(dir, "/unpacked");
  ::mkdir(unpacked.c_str(), 0755);
  auto names = archive::ExtractTarGz(absl::StrCat(dir, "/", recording::kArchiveFile), unpacked);
  ASSERT_TRUE(names.ok()) << names.status();
  for (const char* expected : {recording::kRecordingFile, recording::kSymbolsFile, recording::kMetadataFile, recording::kLogFile,
                               "jit/perf-42.map", "profile.pb.gz"}) {
    EXPECT_NE(std::find(names->begin(), names->end(), expected), names->end()) << expected;
  }
  // The log was closed before it went in: its last line says so.
  auto archived_log = base::ReadFileBounded(absl::StrCat(unpacked, "/", recording::kLogFile), 1 << 20);
  ASSERT_TRUE(archived_log.ok());
  EXPECT_NE(archived_log->find("writing prof.tar.gz"), std::string::npos);
}

TEST(FinishRunTest, WithoutAnArchiveOnlyTheMetadataIsWritten) {
  const std::string dir = MakeRunFolder("no_archive");
  base::RunLog log;
  ASSERT_TRUE(FinishRun(dir, Result(), /*write_archive=*/false, &log).ok());
  struct stat st;
  EXPECT_EQ(::stat(absl::StrCat(dir, "/", recording::kMetadataFile).c_str(), &st), 0);
  EXPECT_NE(::stat(absl::StrCat(dir, "/", recording::kArchiveFile).c_str(), &st), 0);
}

}  // namespace
}  // namespace profcpu::cli
