#include "symbolize/archived_jit_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "gtest/gtest.h"
#include "symbolize/rooted_process_files.h"

namespace profcpu::symbolize {
namespace {

std::string ReadAll(base::UniqueFd fd) {
  auto text = base::ReadFdBounded(fd.get(), 1 << 20, "the JIT file");
  return text.ok() ? *text : "";
}

// A target root (a directory standing for /proc/PID/root) holding a perf map,
// and an empty run folder.
struct Folders {
  std::string root, run;
};
Folders MakeFolders(const char* name) {
  const std::string base = absl::StrCat(::testing::TempDir(), "/archived_jit_", ::getpid(), name);
  Folders f{base + "/root", base + "/run"};
  ::mkdir(base.c_str(), 0755);
  ::mkdir(f.root.c_str(), 0755);
  ::mkdir((f.root + "/tmp").c_str(), 0755);
  ::mkdir(f.run.c_str(), 0755);
  EXPECT_TRUE(base::WriteFile(f.root + "/tmp/perf-7.map", "1000 10 hot\n").ok());
  return f;
}

TEST(ArchivedJitFilesTest, CopiesFromTheTargetOnceThenReadsTheCopy) {
  const Folders f = MakeFolders("copy");
  auto root = base::RootDir::Open(f.root);
  ASSERT_TRUE(root.ok()) << root.status();
  recording::ProcessInfo info;
  info.pid = 4242;
  info.namespace_pids = {4242, 7};  // the process sees itself as pid 7
  const RootedProcessFiles files({{4242, *root}}, nullptr, {info});
  EXPECT_EQ(files.NamespacePid(4242), 7u);
  EXPECT_EQ(files.NamespacePid(99), 99u);
  EXPECT_EQ(files.JitDirectory(4242), "/tmp");
  EXPECT_EQ(files.RootFor(99), nullptr);  // no fallback given

  base::RunLog log;
  ArchivedJitFiles jit(f.run, &files, &log);
  auto first = jit.Open(4242, JitFileKind::kPerfMap, "/tmp/perf-7.map");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(ReadAll(std::move(*first)), "1000 10 hot\n");
  EXPECT_EQ(ListJitFiles(f.run), (std::vector<std::string>{"jit/perf-4242.map"}));

  // The runtime appends after the copy was made: the copy is what counts, so
  // both passes of a run (and postprocess later) read the same bytes.
  ASSERT_TRUE(base::WriteFile(f.root + "/tmp/perf-7.map", "1000 10 hot\n2000 10 later\n").ok());
  auto again = jit.Open(4242, JitFileKind::kPerfMap, "/tmp/perf-7.map");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(ReadAll(std::move(*again)), "1000 10 hot\n");
}

TEST(ArchivedJitFilesTest, WithoutKeepingCopiesReadsInPlaceButPrefersACopyMadeEarlier) {
  const Folders f = MakeFolders("inplace");
  auto root = base::RootDir::Open(f.root);
  ASSERT_TRUE(root.ok()) << root.status();
  recording::ProcessInfo info;
  info.pid = 4242;
  info.namespace_pids = {4242, 7};
  const RootedProcessFiles files({{4242, *root}}, nullptr, {info});
  base::RunLog log;
  ArchivedJitFiles jit(f.run, &files, &log, /*keep_copies=*/false);
  auto map = jit.Open(4242, JitFileKind::kPerfMap, "/tmp/perf-7.map");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(ReadAll(std::move(*map)), "1000 10 hot\n");
  EXPECT_TRUE(ListJitFiles(f.run).empty());  // nothing written

  // The collector's copy of a map removed since (process exited) is read.
  ::mkdir((f.run + "/jit").c_str(), 0755);
  ASSERT_TRUE(base::WriteFile(f.run + "/jit/perf-4242.map", "1000 10 copied\n").ok());
  ::unlink((f.root + "/tmp/perf-7.map").c_str());
  auto copy = jit.Open(4242, JitFileKind::kPerfMap, "/tmp/perf-7.map");
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_EQ(ReadAll(std::move(*copy)), "1000 10 copied\n");
}

TEST(ArchivedJitFilesTest, WithoutTheTargetOnlyCopiesAreRead) {
  const Folders f = MakeFolders("elsewhere");
  base::RunLog log;
  ArchivedJitFiles jit(f.run, nullptr, &log);
  auto missing = jit.Open(4242, JitFileKind::kPerfMap, "/tmp/perf-7.map");
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_TRUE(ListJitFiles(f.run).empty());
}

}  // namespace
}  // namespace profcpu::symbolize
