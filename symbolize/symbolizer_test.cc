#include "symbolize/symbolizer.h"

#include <dlfcn.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "symbolize/module_symbolizer.h"
#include "symbolize/test_util.h"

namespace profcpu::symbolize {
namespace {

using testing::FixtureOffset;
using ::testing::HasSubstr;

// The command's view of the target processes, reduced to a table.
class FakeProcessFiles : public ProcessFiles {
 public:
  void Add(uint32_t pid, std::shared_ptr<base::RootDir> root, uint32_t namespace_pid) {
    processes_[pid] = {std::move(root), namespace_pid};
  }
  std::shared_ptr<base::RootDir> RootFor(uint32_t pid) const override {
    auto it = processes_.find(pid);
    return it == processes_.end() ? nullptr : it->second.first;
  }
  uint32_t NamespacePid(uint32_t pid) const override {
    auto it = processes_.find(pid);
    return it == processes_.end() ? pid : it->second.second;
  }

 private:
  std::map<uint32_t, std::pair<std::shared_ptr<base::RootDir>, uint32_t>> processes_;
};

size_t CountContaining(const std::vector<std::string>& lines, absl::string_view needle) {
  return std::count_if(lines.begin(), lines.end(),
                       [&](const std::string& l) { return absl::StrContains(l, needle); });
}

constexpr uint32_t kJitPid = 42;     // host pid; 1001 inside its namespace
constexpr uint32_t kPlantedPid = 7;  // its perf map is a symlink to /etc/hostname
constexpr uint32_t kNoMapPid = 8;    // has a root but wrote no perf map
constexpr uint32_t kGonePid = 99;    // no root: exited, or read elsewhere

class SymbolizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string lib =
        dir_.Write("lib/libfixture.so", testing::ReadWholeFile(testing::FixtureLibPath()));
    struct stat st;
    ASSERT_EQ(::stat(lib.c_str(), &st), 0);
    dir_.Write("tmp/perf-1001.map",
               "0x7f0000001000 0x100 instance void [App] App::Run()[OptimizedTier1]\n"
               "00007F0000002000 40 JS:*fib [eval]:1:13\n"
               "this line is not a symbol\n");
    // The target planted /tmp/perf-1.map -> /etc/hostname. Resolved inside its
    // root, that is the root's own etc/hostname, never the host's.
    dir_.Symlink("tmp/perf-1.map", "/etc/hostname");
    dir_.Write("etc/hostname", "7f0000005000 10 InsideRoot\n");
    auto root = base::RootDir::Open(dir_.path());
    ASSERT_TRUE(root.ok()) << root.status();
    files_.Add(kJitPid, *root, 1001);
    files_.Add(kPlantedPid, *root, 1);
    files_.Add(kNoMapPid, *root, kNoMapPid);

    options_.kallsyms_path = kallsyms_dir_.Write("kallsyms",
                                                 "ffffffff81000000 T _text\n"
                                                 "ffffffff81001000 t do_syscall_64\n"
                                                 "ffffffffc0a01000 t nvme_queue_rq\t[nvme]\n");

    modules_.resize(5);
    modules_[0].path = "/lib/libfixture.so";
    modules_[0].inode = st.st_ino;
    modules_[0].example_pid = kJitPid;
    modules_[1].path = "/lib/absent.so";
    modules_[1].example_pid = kJitPid;
    modules_[2].path = "[vdso]";
    modules_[2].example_pid = kJitPid;
    modules_[3].path = "/lib/libfixture.so";
    modules_[3].example_pid = kGonePid;
    modules_[4].path = "[vsyscall]";
    modules_[4].example_pid = kJitPid;
  }

  const Symbolization& Resolve(CodeLocation location, std::string mapping_name = "") {
    Symbolizer symbolizer(options_, &files_, &modules_);
    symbolizer.Resolve({{location, std::move(mapping_name)}}, &table_, &stats_);
    const Symbolization* s = table_.Find(location);
    EXPECT_NE(s, nullptr);
    return *s;
  }

  testing::ScratchDir dir_;
  testing::ScratchDir kallsyms_dir_;
  FakeProcessFiles files_;
  SymbolizerOptions options_;
  std::vector<Module> modules_;
  SymbolTable table_;
  SymbolizeStats stats_;
};

TEST_F(SymbolizerTest, ResolvesEveryKindInOneBatch) {
  const CodeLocation kernel{CodeKind::kKernel, 0, 0xffffffff81001004};
  const CodeLocation kernel_module{CodeKind::kKernel, 0, 0xffffffffc0a01010};
  const CodeLocation native{CodeKind::kNative, 0, FixtureOffset("fixture_leaf", 5)};
  const CodeLocation cpp{CodeKind::kNative, 0, FixtureOffset("_ZN10fixture_ns6Widget7ComputeEi")};
  const CodeLocation jit{CodeKind::kProcess, kJitPid, 0x7f0000001010};
  const CodeLocation jit_old_style{CodeKind::kProcess, kJitPid, 0x7f0000002004};
  const CodeLocation anon{CodeKind::kProcess, kJitPid, 0x7f0000009000};
  const CodeLocation unmapped{CodeKind::kProcess, kJitPid, 0x10};

  Symbolizer symbolizer(options_, &files_, &modules_);
  symbolizer.Resolve({{kernel, "[kernel.kallsyms]"},
                      {kernel_module, "[kernel.kallsyms]"},
                      {native, "/lib/libfixture.so"},
                      {cpp, "/lib/libfixture.so"},
                      {jit, "//anon"},
                      {jit_old_style, "/memfd:doublemapper (deleted)"},
                      {anon, "//anon"},
                      {unmapped, ""},
                      {native, "/lib/libfixture.so"}},  // a repeat: resolved once
                     &table_, &stats_);

  const Symbolization* s = table_.Find(kernel);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->module, "[kernel.kallsyms]");
  ASSERT_EQ(s->frames.size(), 1u);
  EXPECT_EQ(s->frames[0].function, "do_syscall_64");
  EXPECT_EQ(s->frames[0].offset, 4u);

  s = table_.Find(kernel_module);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->module, "[nvme]");
  ASSERT_EQ(s->frames.size(), 1u);
  EXPECT_EQ(s->frames[0].function, "nvme_queue_rq");

  s = table_.Find(native);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->module, "/lib/libfixture.so");
  ASSERT_EQ(s->frames.size(), 1u);
  EXPECT_EQ(s->frames[0].function, "fixture_leaf");
  EXPECT_EQ(s->frames[0].offset, 5u);

  s = table_.Find(cpp);
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->frames.size(), 1u);
  EXPECT_EQ(s->frames[0].function, "fixture_ns::Widget::Compute(int)");

  // JIT frames are labelled with the host pid's map, as perf prints them.
  s = table_.Find(jit);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->module, "/tmp/perf-42.map");
  ASSERT_EQ(s->frames.size(), 1u);
  // Without the return type the map gives (dotnet_names.h).
  EXPECT_EQ(s->frames[0].function, "[App] App::Run()[OptimizedTier1]");
  EXPECT_EQ(s->frames[0].offset, 0x10u);

  s = table_.Find(jit_old_style);
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->frames.size(), 1u);
  EXPECT_EQ(s->frames[0].function, "JS:*fib [eval]:1:13");

  s = table_.Find(anon);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->frames.empty());
  EXPECT_EQ(s->module, "//anon");

  s = table_.Find(unmapped);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->frames.empty());
  EXPECT_EQ(s->module, "[unknown]");

  EXPECT_EQ(stats_.requested, 8u);
  EXPECT_EQ(stats_.resolved, 6u);
  EXPECT_EQ(stats_.unknown, 2u);
  // The map's bad line is reported, naming the file and the pid.
  EXPECT_EQ(CountContaining(stats_.warnings, "/tmp/perf-1001.map of pid 42: skipped 1"), 1u);
}

TEST_F(SymbolizerTest, PlantedSymlinkIsResolvedInsideTheRoot) {
  const Symbolization& s = Resolve({CodeKind::kProcess, kPlantedPid, 0x7f0000005004}, "//anon");
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(s.frames[0].function, "InsideRoot");
  EXPECT_EQ(s.module, "/tmp/perf-7.map");
}

TEST_F(SymbolizerTest, UnreadableFileIsOneWarningNotOnePerAddress) {
  Symbolizer symbolizer(options_, &files_, &modules_);
  symbolizer.Resolve({{{CodeKind::kNative, 1, 0x1000}, "/lib/absent.so"},
                      {{CodeKind::kNative, 1, 0x2000}, "/lib/absent.so"}},
                     &table_, &stats_);
  symbolizer.Resolve({{{CodeKind::kNative, 1, 0x3000}, "/lib/absent.so"}}, &table_, &stats_);
  EXPECT_EQ(stats_.unknown, 3u);
  EXPECT_EQ(CountContaining(stats_.warnings, "/lib/absent.so"), 1u);
  const Symbolization* s = table_.Find({CodeKind::kNative, 1, 0x2000});
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->module, "/lib/absent.so");
  EXPECT_TRUE(s->frames.empty());
}

TEST_F(SymbolizerTest, NativeFramesOfAProcessWithoutRootStayUnnamed) {
  const Symbolization& s = Resolve({CodeKind::kNative, 3, FixtureOffset("fixture_leaf")});
  EXPECT_TRUE(s.frames.empty());
  EXPECT_EQ(s.module, "/lib/libfixture.so");
  EXPECT_EQ(CountContaining(stats_.warnings, "files of pid 99 are not available"), 1u);
}

TEST_F(SymbolizerTest, UnnamedOffsetInAKnownFileKeepsThePath) {
  const Symbolization& s = Resolve({CodeKind::kNative, 0, uint64_t{1} << 40});
  EXPECT_TRUE(s.frames.empty());
  EXPECT_EQ(s.module, "/lib/libfixture.so");
  EXPECT_TRUE(stats_.warnings.empty());
}

TEST_F(SymbolizerTest, PseudoFilesOtherThanVdsoAreNotOpened) {
  const Symbolization& s = Resolve({CodeKind::kNative, 4, 0});
  EXPECT_TRUE(s.frames.empty());
  EXPECT_EQ(s.module, "[vsyscall]");
  EXPECT_TRUE(stats_.warnings.empty());
}

TEST_F(SymbolizerTest, VdsoIsResolvedFromOurOwnImage) {
  const uintptr_t base = getauxval(AT_SYSINFO_EHDR);
  void* vdso = dlopen("linux-vdso.so.1", RTLD_NOLOAD | RTLD_LAZY);
  if (base == 0 || vdso == nullptr) GTEST_SKIP() << "no vdso in this process";
  void* function = dlsym(vdso, "__vdso_clock_gettime");
  if (function == nullptr) GTEST_SKIP() << "vdso has no __vdso_clock_gettime";
  // The kernel maps the vdso image at file offset 0.
  const uint64_t offset = reinterpret_cast<uintptr_t>(function) - base;
  const Symbolization& s = Resolve({CodeKind::kNative, 2, offset + 2}, "[vdso]");
  EXPECT_EQ(s.module, "[vdso]");
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_THAT(s.frames[0].function, HasSubstr("clock_gettime"));
  EXPECT_EQ(s.frames[0].offset, 2u);
}

TEST_F(SymbolizerTest, MissingPerfMapHintsHowToEnableIt) {
  const Symbolization& s = Resolve({CodeKind::kProcess, kNoMapPid, 0x7f0000001000}, "//anon");
  EXPECT_TRUE(s.frames.empty());
  EXPECT_EQ(s.module, "//anon");
  EXPECT_EQ(CountContaining(stats_.warnings, "DOTNET_PerfMapEnabled=1"), 1u);
}

TEST_F(SymbolizerTest, KernelLookupCanBeTurnedOff) {
  options_.use_local_kallsyms = false;
  const Symbolization& s = Resolve({CodeKind::kKernel, 0, 0xffffffff81001004});
  EXPECT_TRUE(s.frames.empty());
  EXPECT_EQ(s.module, "[kernel.kallsyms]");
  EXPECT_TRUE(stats_.warnings.empty());
}

TEST_F(SymbolizerTest, HiddenKernelSymbolsAreOneWarningWithTheFix) {
  options_.kallsyms_path = kallsyms_dir_.Write("hidden",
                                               "0000000000000000 T _text\n"
                                               "0000000000000000 t do_syscall_64\n");
  Symbolizer symbolizer(options_, &files_, &modules_);
  symbolizer.Resolve({{{CodeKind::kKernel, 0, 0xffffffff81001004}, ""},
                      {{CodeKind::kKernel, 0, 0xffffffff81001008}, ""}},
                     &table_, &stats_);
  EXPECT_EQ(stats_.unknown, 2u);
  ASSERT_EQ(stats_.warnings.size(), 1u);
  EXPECT_THAT(stats_.warnings[0], HasSubstr("kernel.kptr_restrict=0"));
}

TEST_F(SymbolizerTest, LocationsAlreadyInTheTableAreSkipped) {
  const CodeLocation location{CodeKind::kKernel, 0, 0xffffffff81001004};
  table_.Insert(location, {"[kernel.kallsyms]", {{"from_snapshot", 0, false, "", 0}}});
  Symbolizer symbolizer(options_, &files_, &modules_);
  symbolizer.Resolve({{location, ""}}, &table_, &stats_);
  EXPECT_EQ(stats_.looked_up, 0u);
  // Still counted: the statistics describe the profile, not this run's work.
  EXPECT_EQ(stats_.requested, 1u);
  EXPECT_EQ(stats_.resolved, 1u);
  EXPECT_EQ(table_.Find(location)->frames[0].function, "from_snapshot");
}

// The Symbolizer searches for debug files in the target's root, then its own
// root (SymbolizerOptions::own_root), then each symbol directory: one debug
// file placed in each in turn names the stripped fixture, and nothing does
// without one (module_symbolizer_test.cc covers each rule inside a root).
TEST(SymbolizerSearchRootsTest, TargetRootOwnRootAndSymbolDirectories) {
  const std::string dwarf5 = testing::SymfixPath("symfix_dwarf5");
  const auto marker =
      testing::ElfAddressToOffset(dwarf5, testing::ElfSymbolValue(dwarf5, "symfix_marker_blend"));
  ASSERT_TRUE(marker.has_value());
  const std::string debug = testing::ReadWholeFile(testing::SymfixPath("symfix_stripped.dbg"));
  const CodeLocation location{CodeKind::kNative, 0, *marker};

  // Where the debug file goes: 0 nowhere, 1 target, 2 own root, 3 -symbols DIR.
  auto function_with_debug_file_in = [&](int place) -> std::string {
    testing::ScratchDir target, own, symbols;
    target.Write("app/symfix_stripped",
                 testing::ReadWholeFile(testing::SymfixPath("symfix_stripped")));
    const char* kGlobal = "usr/lib/debug/app/symfix_stripped.dbg";
    if (place == 1) target.Write(kGlobal, debug);
    if (place == 2) own.Write(kGlobal, debug);
    if (place == 3) symbols.Write("app/symfix_stripped.dbg", debug);
    FakeProcessFiles files;
    auto root = base::RootDir::Open(target.path());
    EXPECT_TRUE(root.ok()) << root.status();
    if (!root.ok()) return "";
    files.Add(kJitPid, *root, kJitPid);
    std::vector<Module> modules(1);
    modules[0].path = "/app/symfix_stripped";
    modules[0].example_pid = kJitPid;
    SymbolizerOptions options;
    options.use_local_kallsyms = false;
    options.own_root = own.path();
    options.symbol_dirs = {symbols.path()};
    SymbolTable table;
    SymbolizeStats stats;
    Symbolizer symbolizer(options, &files, &modules);
    symbolizer.Resolve({{location, modules[0].path}}, &table, &stats);
    const Symbolization* s = table.Find(location);
    EXPECT_NE(s, nullptr);
    return s == nullptr || s->frames.empty() ? "" : s->frames.back().function;
  };
  EXPECT_EQ(function_with_debug_file_in(0), "");
  for (int place : {1, 2, 3}) {
    EXPECT_THAT(function_with_debug_file_in(place), HasSubstr("symfix::Churn")) << place;
  }
}

// Postprocess on a laptop: the snapshot left a stripped module's location
// unknown and the target's files are gone; the laptop's own debug package
// (its /usr/lib/debug, here the own root's) or its debuginfod cache holds the
// debug file by build-id. The location is looked up again with no -symbols
// DIR; a file there with another build-id is not used.
TEST(SymbolizerSearchRootsTest, SnapshotUnknownsNamedByThisMachinesDebugFiles) {
  const std::string binary = testing::SymfixPath("symfix_buildid");
  const auto marker =
      testing::ElfAddressToOffset(binary, testing::ElfSymbolValue(
                                              testing::SymfixPath("symfix_dwarf5"),
                                              "symfix_marker_blend"));
  ASSERT_TRUE(marker.has_value());
  const std::string build_id = testing::ElfBuildId(binary);
  ASSERT_FALSE(build_id.empty());
  const std::string hex = absl::BytesToHexString(build_id);
  // What the sidecar learned (build-id, layout) from the stripped binary.
  testing::ScratchDir target;
  target.Write("app/symfix_buildid", testing::ReadWholeFile(binary));
  std::vector<Module> learned(1);
  learned[0].path = "/app/symfix_buildid";
  {
    auto root = base::RootDir::Open(target.path());
    ASSERT_TRUE(root.ok());
    auto loaded = LoadModuleSymbolizer(learned[0], root->get(), {});
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    learned[0].build_id = loaded->symbolizer->build_id();
    learned[0].segments = loaded->symbolizer->segments();
  }
  const CodeLocation location{CodeKind::kNative, 0, *marker};

  enum class Place { kNowhere, kDebugDir, kDebuginfodCache, kOtherBuildId };
  auto function_with = [&](Place place, std::vector<std::string>* notes) -> std::string {
    testing::ScratchDir own, cache;
    const std::string tree = absl::StrCat("usr/lib/debug/.build-id/", hex.substr(0, 2), "/",
                                          hex.substr(2), ".debug");
    const std::string debug = testing::ReadWholeFile(testing::SymfixPath("symfix_buildid.debug"));
    if (place == Place::kDebugDir) own.Write(tree, debug);
    if (place == Place::kDebuginfodCache) cache.Write(absl::StrCat(hex, "/debuginfo"), debug);
    if (place == Place::kOtherBuildId) {
      own.Write(tree, testing::ReadWholeFile(testing::SymfixPath("symfix_dwarf4")));
    }
    std::vector<Module> modules = learned;
    SymbolTable table;
    table.Insert(location, {modules[0].path, {}});  // the snapshot's unknown
    SymbolizerOptions options;
    options.use_local_kallsyms = false;
    options.own_root = own.path();
    options.debuginfod_cache = cache.path();
    SymbolizeStats stats;
    Symbolizer symbolizer(options, nullptr, &modules);
    symbolizer.Resolve({{location, modules[0].path}}, &table, &stats);
    *notes = stats.notes;
    const Symbolization* s = table.Find(location);
    return s == nullptr || s->frames.empty() ? "" : s->frames.back().function;
  };
  std::vector<std::string> notes;
  EXPECT_EQ(function_with(Place::kNowhere, &notes), "");
  EXPECT_THAT(function_with(Place::kDebugDir, &notes), HasSubstr("symfix::Churn"));
  EXPECT_EQ(CountContaining(notes, "in the profiler's root (build-id)"), 1u)
      << ::testing::PrintToString(notes);
  EXPECT_THAT(function_with(Place::kDebuginfodCache, &notes), HasSubstr("symfix::Churn"));
  EXPECT_EQ(CountContaining(notes, "/debuginfo in this machine's debuginfod cache"), 1u)
      << ::testing::PrintToString(notes);
  EXPECT_EQ(function_with(Place::kOtherBuildId, &notes), "");
}

TEST_F(SymbolizerTest, WorksWithoutProcessFiles) {
  Symbolizer symbolizer(options_, nullptr, &modules_);
  symbolizer.Resolve({{{CodeKind::kNative, 0, 0x1000}, ""},
                      {{CodeKind::kProcess, kJitPid, 0x7f0000001010}, "//anon"},
                      {{CodeKind::kNative, 77, 0x1000}, "/lib/x.so"}},
                     &table_, &stats_);
  EXPECT_EQ(stats_.unknown, 3u);
  EXPECT_EQ(table_.Find({CodeKind::kNative, 77, 0x1000})->module, "/lib/x.so");
}

}  // namespace
}  // namespace profcpu::symbolize
