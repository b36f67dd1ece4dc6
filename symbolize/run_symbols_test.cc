#include "symbolize/run_symbols.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "gtest/gtest.h"
#include "recording/run_folder.h"

namespace profcpu::symbolize {
namespace {

constexpr uint32_t kArchivedJitPid = 42;

// A run folder as postprocess finds it elsewhere: a copy of a JIT process's
// perf map under jit/, no target files.
class RunSymbolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/run_symbols_", ::getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ::mkdir(dir_.c_str(), 0755);
    ::mkdir(absl::StrCat(dir_, "/", recording::kJitDir).c_str(), 0755);
    ASSERT_TRUE(base::WriteFile(absl::StrCat(dir_, "/", recording::kJitDir, "/perf-", kArchivedJitPid,
                                             ".map"),
                                "400000 100 Work(int64)[OptimizedTier1]\n")
                    .ok());
    Module app;
    app.path = "/usr/bin/app";
    modules_ = {app};
    jit_ = {{CodeKind::kProcess, kArchivedJitPid, 0x400010}, "//anon"};
    unmapped_ = {{CodeKind::kProcess, kArchivedJitPid, 0x900000}, "//anon"};
    requests_ = {jit_, unmapped_};
  }

  ResolvedSymbols Resolve(RunSymbolsOptions options, base::RunLog* log) {
    options.run_dir = dir_;
    RunSymbols symbols(options, log);
    SymbolTable known;
    Symbolization root;
    root.frames.emplace_back().function = "[on-cpu]";
    known.Insert({CodeKind::kImported, 7, 1}, root);
    absl::StatusOr<ResolvedSymbols> resolved =
        symbols.ResolveProfile({&requests_, &modules_, std::move(known), "", {}});
    EXPECT_TRUE(resolved.ok()) << resolved.status();
    return resolved.ok() ? std::move(*resolved) : ResolvedSymbols();
  }

  static std::string NameOf(const SymbolTable& table, const SymbolRequest& request) {
    const Symbolization* s = table.Find(request.location);
    return s == nullptr || s->frames.empty() ? "" : s->frames.front().function;
  }

  std::string dir_;
  std::vector<Module> modules_;
  SymbolRequest jit_, unmapped_;
  std::vector<SymbolRequest> requests_;
};

TEST_F(RunSymbolsTest, NamesFromTheRunFolderAndKeepsTheReplaysOwnNames) {
  base::RunLog log;
  const ResolvedSymbols resolved = Resolve({}, &log);
  EXPECT_EQ(NameOf(resolved.table, jit_), "Work(int64)[OptimizedTier1]");
  EXPECT_EQ(NameOf(resolved.table, unmapped_), "");
  ASSERT_NE(resolved.table.Find({CodeKind::kImported, 7, 1}), nullptr);
  EXPECT_EQ(resolved.stats.requested, 2u);
  EXPECT_EQ(resolved.stats.resolved, 1u);
  EXPECT_EQ(resolved.jit_files, (std::vector<std::string>{"jit/perf-42.map"}));
  // The snapshot is written for postprocess elsewhere.
  struct stat st;
  EXPECT_EQ(::stat(absl::StrCat(dir_, "/", recording::kSymbolsFile).c_str(), &st), 0);
}

TEST_F(RunSymbolsTest, ASecondRunReusesTheSnapshotAndStripTiersLeavesItWhole) {
  base::RunLog first_log;
  Resolve({}, &first_log);
  // The map is gone: only the snapshot can name the frame now.
  ASSERT_EQ(::unlink(absl::StrCat(dir_, "/jit/perf-42.map").c_str()), 0);
  RunSymbolsOptions strip;
  strip.strip_tiers = true;
  base::RunLog second_log;
  const ResolvedSymbols stripped = Resolve(strip, &second_log);
  EXPECT_EQ(NameOf(stripped.table, jit_), "Work(int64)");
  EXPECT_EQ(stripped.stats.looked_up, 0u);  // every location came from the snapshot
  // ... and is counted as the first run counted it (metadata.json's statistics).
  EXPECT_EQ(stripped.stats.requested, 2u);
  EXPECT_EQ(stripped.stats.resolved, 1u);
  EXPECT_EQ(stripped.stats.unknown, 1u);

  base::RunLog third_log;
  EXPECT_EQ(NameOf(Resolve({}, &third_log).table, jit_), "Work(int64)[OptimizedTier1]");
}

TEST_F(RunSymbolsTest, ASnapshotOfAnotherRecordingIsIgnoredWithAWarning) {
  base::RunLog first_log;
  Resolve({}, &first_log);
  modules_[0].path = "/usr/bin/other";
  base::RunLog log;
  const ResolvedSymbols resolved = Resolve({}, &log);
  bool warned = false;
  for (const std::string& w : log.warnings()) {
    warned = warned || w.find("belongs to another recording") != std::string::npos;
  }
  EXPECT_TRUE(warned);
  EXPECT_EQ(resolved.stats.requested, 2u);
}

TEST_F(RunSymbolsTest, ResolvingAgainNamesTheSameRequestsWithoutAReplay) {
  base::RunLog log;
  RunSymbolsOptions options;
  options.run_dir = dir_;
  options.strip_tiers = true;
  RunSymbols symbols(options, &log);
  EXPECT_TRUE(absl::IsFailedPrecondition(symbols.ResolveAgainWith(dir_).status()));
  SymbolTable known;
  Symbolization root;
  root.frames.emplace_back().function = "[on-cpu]";
  known.Insert({CodeKind::kImported, 7, 1}, root);
  ASSERT_TRUE(symbols.ResolveProfile({&requests_, &modules_, std::move(known), "", {}}).ok());
  // Fetched debug files arrived in a new folder: the same requests again,
  // the replay's own names kept, the tiers stripped as the first time.
  const std::string fetched = absl::StrCat(dir_, "/fetched");
  ::mkdir(fetched.c_str(), 0755);
  absl::StatusOr<ResolvedSymbols> again = symbols.ResolveAgainWith(fetched);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(NameOf(again->table, jit_), "Work(int64)");
  ASSERT_NE(again->table.Find({CodeKind::kImported, 7, 1}), nullptr);
  EXPECT_EQ(again->stats.requested, 2u);
  EXPECT_EQ(again->stats.resolved, 1u);
  // The snapshot written back keeps the tiers whole.
  base::RunLog plain_log;
  EXPECT_EQ(NameOf(Resolve({}, &plain_log).table, jit_), "Work(int64)[OptimizedTier1]");
}

}  // namespace
}  // namespace profcpu::symbolize
