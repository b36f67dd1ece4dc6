#include "symbolize/jit_sources.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "symbolize/test_util.h"
#include "symbolize/testing_jitdump.h"

namespace profcpu::symbolize {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::JitdumpBuilder;

// JIT files kept in a directory by their archive names; remembers which
// paths (as the process sees them) were asked for.
class DirJitFiles : public JitFileSource {
 public:
  explicit DirJitFiles(const testing::ScratchDir& dir) : dir_(dir) {}
  absl::StatusOr<base::UniqueFd> Open(uint32_t pid, JitFileKind kind,
                                      const std::string& path) override {
    asked.push_back(path);
    return base::OpenReadOnly(absl::StrCat(dir_.path(), "/", JitFileName(kind, pid)));
  }
  std::vector<std::string> asked;

 private:
  const testing::ScratchDir& dir_;
};

class NamespacePids : public ProcessFiles {
 public:
  std::shared_ptr<base::RootDir> RootFor(uint32_t) const override { return nullptr; }
  uint32_t NamespacePid(uint32_t pid) const override { return pid == 42 ? 7 : pid; }
};

std::string Names(JitSources& jit, uint32_t pid, uint64_t address, uint64_t time,
                  absl::string_view mapping = "//anon") {
  CodeLocation location{CodeKind::kProcess, pid, address, jit.Generation(pid, address, time)};
  std::optional<Symbolization> s = jit.Resolve(location, mapping);
  if (!s.has_value() || s->frames.empty()) return "";
  const Frame& f = s->frames[0];
  std::string out = absl::StrCat(f.function, "+", f.offset);
  if (f.line > 0) absl::StrAppend(&out, " ", f.source_file, ":", f.line);
  return out;
}

TEST(JitSourcesTest, NamesTheCodeThatWasThereAtTheSampleTime) {
  testing::ScratchDir dir;
  dir.Write("jit-42.dump", JitdumpBuilder()
                               .Load(100, 0x1000, 0x100, "int32 [App] App::First()[QuickJitted]")
                               .Load(300, 0x1000, 0x100, "int32 [App] App::Second()[OptimizedTier1]")
                               .bytes());
  DirJitFiles files(dir);
  JitSources jit(&files, nullptr);
  EXPECT_EQ(Names(jit, 42, 0x1010, 200), "[App] App::First()[QuickJitted]+16");
  EXPECT_EQ(Names(jit, 42, 0x1010, 400), "[App] App::Second()[OptimizedTier1]+16");
  EXPECT_NE(jit.Generation(42, 0x1010, 200), jit.Generation(42, 0x1010, 400));
  EXPECT_EQ(jit.Resolve({CodeKind::kProcess, 42, 0x1010, 1}, "//anon")->module, "/tmp/perf-42.map");
}

TEST(JitSourcesTest, JitdumpIsFoundWhereTheProcessMappedIt) {
  testing::ScratchDir dir;
  dir.Write("jit-42.dump", JitdumpBuilder().Load(1, 0x1000, 0x10, "x").bytes());
  DirJitFiles files(dir);
  NamespacePids pids;
  JitSources jit(&files, &pids);
  recording::Mmap mmap;
  mmap.pid = 42;
  mmap.filename = "/srv/app/jit-7.dump";  // node --perf-prof writes it in its cwd
  jit.OnMmap(mmap);
  EXPECT_EQ(jit.Generation(42, 0x1000, 5), 1u);
  // Maps are looked for as the process names them: by its namespace pid.
  EXPECT_THAT(files.asked, ElementsAre("/tmp/perf-7.map", "/srv/app/jit-7.dump",
                                       "/tmp/perfinfo-7.map"));
}

TEST(JitSourcesTest, JitdumpMappedAfterTheFirstJitSampleIsStillRead) {
  testing::ScratchDir dir;
  dir.Write("jit-42.dump", JitdumpBuilder().Load(1, 0x1000, 0x10, "late").bytes());
  class Mapped : public JitFileSource {  // the file exists only once mapped
   public:
    explicit Mapped(const testing::ScratchDir& dir) : dir_(dir) {}
    absl::StatusOr<base::UniqueFd> Open(uint32_t pid, JitFileKind kind,
                                        const std::string& path) override {
      if (path != "/srv/jit-42.dump") return absl::NotFoundError(path);
      return base::OpenReadOnly(absl::StrCat(dir_.path(), "/", JitFileName(kind, pid)));
    }

   private:
    const testing::ScratchDir& dir_;
  } files(dir);
  JitSources jit(&files, nullptr);
  EXPECT_EQ(jit.Generation(42, 0x1000, 5), 0u);  // asked before the mapping
  recording::Mmap mmap;
  mmap.pid = 42;
  mmap.filename = "/srv/jit-42.dump";
  jit.OnMmap(mmap);
  EXPECT_EQ(jit.Generation(42, 0x1000, 5), 1u);
}

TEST(JitSourcesTest, DefaultJitdumpPathUsesTheNamespacePid) {
  testing::ScratchDir dir;
  DirJitFiles files(dir);
  NamespacePids pids;
  JitSources jit(&files, &pids);
  EXPECT_EQ(jit.Generation(42, 0x1000, 5), 0u);
  EXPECT_EQ(files.asked[1], "/tmp/jit-7.dump");
}

TEST(JitSourcesTest, PerfMapNamesWhatTheJitdumpDoesNot) {
  testing::ScratchDir dir;
  dir.Write("jit-42.dump", JitdumpBuilder().Load(500, 0x1000, 0x10, "from-jitdump").bytes());
  dir.Write("perf-42.map", "1000 10 from-map\n2000 10 only-in-map\n");
  DirJitFiles files(dir);
  JitSources jit(&files, nullptr);
  EXPECT_EQ(Names(jit, 42, 0x1004, 600), "from-jitdump+4");
  EXPECT_EQ(Names(jit, 42, 0x2004, 600), "only-in-map+4");
  // No generation (epoch 0): the perf map, whose later line wins.
  EXPECT_EQ(jit.Resolve({CodeKind::kProcess, 42, 0x1004, 0}, "//anon")->frames[0].function,
            "from-map");
}

// .NET replays precompiled code into a (re)started jitdump with the replay's
// time: samples taken before it are named from it when nothing else can.
TEST(JitSourcesTest, CodeLoggedAfterTheSampleStillNamesIt) {
  testing::ScratchDir dir;
  dir.Write("jit-42.dump", JitdumpBuilder().Load(500, 0x1000, 0x10, "replayed[PreJIT]").bytes());
  DirJitFiles files(dir);
  JitSources jit(&files, nullptr);
  EXPECT_EQ(Names(jit, 42, 0x1004, 100, "/usr/share/dotnet/System.Private.CoreLib.dll"),
            "replayed[PreJIT]+4");
}

// CoreCLR's perf map lines as .NET writes them: "%p %x NAME", names with
// spaces, generics and stubs ("stub<N> TYPE<OWNER>").
TEST(JitSourcesTest, DotNetPerfMapNamesAndStubs) {
  testing::ScratchDir dir;
  dir.Write("perf-42.map",
            "0x7f1000001000 2a instance int32 [App] App.Calc`1[int32]::Sum(int32,int32)"
            "[OptimizedTier1]\n"
            "0x7f1000002000 10 stub<1> AllocateTemporaryEntryPoints<PreStubWorker>\n"
            "00007F1000003000 20 void [System.Private.CoreLib] System.Buffer::Memmove()[PreJIT]\n");
  DirJitFiles files(dir);
  JitSources jit(&files, nullptr);
  EXPECT_EQ(Names(jit, 42, 0x7f1000001004, 1),
            "[App] App.Calc`1[int32]::Sum(int32,int32)[OptimizedTier1]+4");
  EXPECT_EQ(Names(jit, 42, 0x7f1000002001, 1, "/memfd:doublemapper (deleted)"),
            "stub<1> AllocateTemporaryEntryPoints<PreStubWorker>+1");
  EXPECT_EQ(Names(jit, 42, 0x7f1000003010, 1),
            "[System.Private.CoreLib] System.Buffer::Memmove()[PreJIT]+16");
}

TEST(JitSourcesTest, DebugInfoAndPreJitNamesComeThrough) {
  testing::ScratchDir dir;
  dir.Write("jit-42.dump",
            JitdumpBuilder()
                .Debug(9, 0x1000, {{0x1000, 21, "/src/Program.cs"}})
                .Load(10, 0x1000, 0x40, "void [System.Private.CoreLib] System.Buffer::Memmove()[PreJIT]")
                .bytes());
  DirJitFiles files(dir);
  JitSources jit(&files, nullptr);
  EXPECT_EQ(Names(jit, 42, 0x1008, 20, "/usr/share/dotnet/System.Private.CoreLib.dll"),
            "[System.Private.CoreLib] System.Buffer::Memmove()[PreJIT]+8 /src/Program.cs:21");
}

TEST(JitSourcesTest, HintsName) {
  testing::ScratchDir dir;
  dir.Write("perfinfo-50.map", "ImageLoad;/app/App.dll;{g};0x7f0000000000;\n");
  dir.Write("jit-60.dump", JitdumpBuilder().Load(1, 0x1000, 0x10, "x").bytes());
  DirJitFiles files(dir);
  JitSources jit(&files, nullptr);
  EXPECT_EQ(Names(jit, 50, 0x7f0000000100, 5, "/app/App.dll"), "");
  EXPECT_EQ(Names(jit, 70, 0x5000, 5, "//anon"), "");
  EXPECT_EQ(Names(jit, 60, 0x5000, 5, "/memfd:doublemapper (deleted)"), "");
  std::vector<std::string> warnings;
  jit.TakeWarnings(&warnings);
  std::string all = absl::StrJoin(warnings, "\n");
  EXPECT_THAT(all, HasSubstr("precompiled .NET code from /app/App.dll (listed in its perfinfo map)"));
  EXPECT_THAT(all, HasSubstr("pid 70 has JIT code but profcpu found no /tmp/perf-70.map of it"));
  EXPECT_THAT(all, HasSubstr("pid 60 ran JIT code its jitdump does not describe"));
}

TEST(JitSourcesTest, BadFilesAreWarningsNotErrors) {
  testing::ScratchDir dir;
  dir.Write("jit-42.dump", "not a jitdump at all, far too short? no, long enough: 40 bytes+");
  dir.Write("perf-42.map", "zzz\n1000 10 ok\n");
  DirJitFiles files(dir);
  JitSources jit(&files, nullptr);
  EXPECT_EQ(Names(jit, 42, 0x1000, 1), "ok+0");
  std::vector<std::string> warnings;
  jit.TakeWarnings(&warnings);
  std::string all = absl::StrJoin(warnings, "\n");
  EXPECT_THAT(all, HasSubstr("cannot read /tmp/jit-42.dump of pid 42"));
  EXPECT_THAT(all, HasSubstr("skipped 1 malformed line"));
  EXPECT_THAT(jit.Loaded(), ElementsAre("perf-42.map (1 symbols)"));
}

TEST(JitSourcesTest, TargetFilesRefuseNonRegularFiles) {
  testing::ScratchDir dir;
  ASSERT_EQ(::mkfifo(absl::StrCat(dir.path(), "/fifo").c_str(), 0600), 0);
  class OneRoot : public ProcessFiles {
   public:
    explicit OneRoot(std::shared_ptr<base::RootDir> root) : root_(std::move(root)) {}
    std::shared_ptr<base::RootDir> RootFor(uint32_t) const override { return root_; }
    uint32_t NamespacePid(uint32_t pid) const override { return pid; }

   private:
    std::shared_ptr<base::RootDir> root_;
  };
  auto root = base::RootDir::Open(dir.path());
  ASSERT_TRUE(root.ok());
  OneRoot processes(*root);
  TargetJitFiles target(&processes);
  auto fd = target.Open(1, JitFileKind::kPerfMap, "/fifo");
  ASSERT_FALSE(fd.ok());
  EXPECT_THAT(fd.status().message(), HasSubstr("not a regular file"));
  TargetJitFiles none(nullptr);
  EXPECT_TRUE(absl::IsUnavailable(none.Open(1, JitFileKind::kPerfMap, "/x").status()));
}

// What fold's OSR repair asks (fold/dotnet_osr_replay.h): does a process
// name OSR code at all, and what is at an address in a generation.
TEST(JitSourcesTest, AnswersWhatCodeIsWhereForTheOsrRepair) {
  testing::ScratchDir dir;
  dir.Write("jit-42.dump",
            JitdumpBuilder().Load(100, 0x1000, 0x100, "App::Work()[OptimizedTier1OSR]").bytes());
  dir.Write("perf-43.map", "2000 10 App::Work()[OptimizedTier1OSR]\n");
  dir.Write("perf-44.map", "2000 10 App::Work()[QuickJitted]\n");
  DirJitFiles files(dir);
  JitSources jit(&files, nullptr);
  EXPECT_TRUE(jit.NamesAnyCode(42, "[OptimizedTier1OSR]"));
  EXPECT_TRUE(jit.NamesAnyCode(43, "[OptimizedTier1OSR]"));
  EXPECT_FALSE(jit.NamesAnyCode(44, "[OptimizedTier1OSR]"));
  EXPECT_FALSE(jit.NamesAnyCode(45, "[OptimizedTier1OSR]"));  // no files
  EXPECT_EQ(jit.CodeName(42, 0x1010, jit.Generation(42, 0x1010, 200)),
            "App::Work()[OptimizedTier1OSR]");
  EXPECT_EQ(jit.CodeName(43, 0x2004, 0), "App::Work()[OptimizedTier1OSR]");
  EXPECT_EQ(jit.CodeName(44, 0x3000, 0), "");
  std::vector<std::string> warnings;
  jit.TakeWarnings(&warnings);
  EXPECT_THAT(warnings, ::testing::IsEmpty());  // no hints: it is not naming frames
}

}  // namespace
}  // namespace profcpu::symbolize
