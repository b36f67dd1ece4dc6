#include "symbolize/loaded_symbol_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/file_io.h"
#include "gtest/gtest.h"
#include "recording/run_folder.h"
#include "symbolize/run_symbols.h"
#include "symbolize/symbolizer.h"
#include "symbolize/test_util.h"

namespace profcpu::symbolize {
namespace {

using testing::FixtureOffset;

constexpr uint32_t kPid = 42;

class OneRootProcessFiles : public ProcessFiles {
 public:
  explicit OneRootProcessFiles(std::shared_ptr<base::RootDir> root) : root_(std::move(root)) {}
  std::shared_ptr<base::RootDir> RootFor(uint32_t) const override { return root_; }
  uint32_t NamespacePid(uint32_t pid) const override { return pid; }

 private:
  std::shared_ptr<base::RootDir> root_;
};

// Every location's module and frame names, to compare runs.
std::string Describe(const SymbolTable& table, const std::vector<SymbolRequest>& requests) {
  std::string out;
  for (const SymbolRequest& request : requests) {
    const Symbolization* s = table.Find(request.location);
    absl::StrAppend(&out, request.location.value, " ", s == nullptr ? "(none)" : s->module, ":");
    if (s != nullptr) {
      for (const Frame& f : s->frames) absl::StrAppend(&out, " ", f.function, "+", f.offset);
    }
    out += "\n";
  }
  return out;
}

// The fixture library with its GNU build-id note turned into another note
// type: a file the cache can only know by its stat identity.
std::string WithoutBuildId(std::string elf) {
  // namesz 4, descsz 20 (sha1), type NT_GNU_BUILD_ID, "GNU\0".
  const std::string note("\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0", 16);
  size_t at = elf.find(note);
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos) elf[at + 8] = 0x7f;
  return elf;
}

// Writes `contents` over `path` in place (same inode), then puts its mtime
// back: only its contents and ctime differ.
void RewriteInPlace(const std::string& path, const std::string& contents) {
  struct stat before;
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, contents.data(), contents.size()),
            static_cast<ssize_t>(contents.size()));
  ::close(fd);
  const struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  struct stat after;
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  ASSERT_EQ(after.st_ino, before.st_ino);
  ASSERT_EQ(after.st_size, before.st_size);
  ASSERT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
}

class LoadedSymbolCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    lib_ = dir_.Write("lib/libfixture.so", testing::ReadWholeFile(testing::FixtureLibPath()));
    dir_.Write("lib/libsame.so", testing::ReadWholeFile(testing::FixtureLibPath()));
    dir_.Write("lib/libstripped.so", testing::ReadWholeFile(testing::FixtureStrippedPath()));
    auto root = base::RootDir::Open(dir_.path());
    ASSERT_TRUE(root.ok()) << root.status();
    files_ = std::make_unique<OneRootProcessFiles>(*root);
    options_.own_root = "";
    options_.kallsyms_path = other_.Write("kallsyms",
                                          "ffffffff81000000 T _text\n"
                                          "ffffffff81001000 t do_syscall_64\n");
    for (const char* path : {"/lib/libfixture.so", "/lib/libsame.so", "/lib/libstripped.so"}) {
      Module& m = modules_.emplace_back();
      m.path = path;
      m.example_pid = kPid;
    }
    for (uint32_t id = 0; id < modules_.size(); ++id) {
      for (const char* symbol : {"fixture_leaf", "fixture_hidden_helper_address"}) {
        requests_.push_back({{CodeKind::kNative, id, FixtureOffset(symbol, 3)}, ""});
      }
    }
    requests_.push_back({{CodeKind::kKernel, 0, 0xffffffff81001004}, ""});
    cache_options_.modules_path = other_.Write("modules", "nvme 1 0 - Live 0xffffffffc0a00000\n");
    cache_options_.proc_dir = other_.path() + "/proc";
    cache_options_.min_file_age = absl::ZeroDuration();
  }

  // One run: a fresh Symbolizer and table, as each agent window has.
  std::string Run(LoadedSymbolCache* cache, std::vector<SymbolRequest> requests = {}) {
    if (requests.empty()) requests = requests_;
    SymbolizerOptions options = options_;
    options.cache = cache;
    std::vector<Module> modules = modules_;
    SymbolTable table;
    SymbolizeStats stats;
    {
      Symbolizer symbolizer(options, files_.get(), &modules, nullptr);
      symbolizer.Resolve(requests, &table, &stats);
    }
    if (cache != nullptr) cache->EndRun({kPid});
    return Describe(table, requests);
  }

  testing::ScratchDir dir_;
  testing::ScratchDir other_;
  std::string lib_;
  std::unique_ptr<OneRootProcessFiles> files_;
  SymbolizerOptions options_;
  LoadedSymbolCacheOptions cache_options_;
  std::vector<Module> modules_;
  std::vector<SymbolRequest> requests_;
};

TEST_F(LoadedSymbolCacheTest, SecondRunLoadsNothingAgainAndNamesAsWithoutTheCache) {
  const std::string uncached = Run(nullptr);
  ASSERT_NE(uncached.find("fixture_leaf+3"), std::string::npos) << uncached;
  ASSERT_NE(uncached.find("do_syscall_64+4"), std::string::npos) << uncached;

  LoadedSymbolCache cache(cache_options_);
  EXPECT_EQ(Run(&cache), uncached);
  // libfixture.so and libsame.so are one file by build-id and size; the
  // stripped copy has the same build-id but is another file.
  EXPECT_EQ(cache.stats().module_loads, 2u);
  EXPECT_EQ(cache.stats().module_hits, 1u);
  EXPECT_EQ(cache.stats().kallsyms_loads, 1u);

  EXPECT_EQ(Run(&cache), uncached);
  EXPECT_EQ(Run(&cache), uncached);
  EXPECT_EQ(cache.stats().module_loads, 2u);
  EXPECT_EQ(cache.stats().module_hits, 1u + 3u * 2u);
  EXPECT_EQ(cache.stats().kallsyms_loads, 1u);
  EXPECT_EQ(cache.stats().kallsyms_hits, 2u);
  EXPECT_EQ(cache.stats().entries, 3u);  // two modules, kallsyms
  EXPECT_GT(cache.stats().bytes, 0u);
}

TEST_F(LoadedSymbolCacheTest, AFileReplacedAtTheSamePathIsLoadedAgain) {
  LoadedSymbolCache cache(cache_options_);
  Run(&cache);
  // Another library (another build-id) now at /lib/libfixture.so.
  ::unlink(lib_.c_str());
  dir_.Write("lib/libfixture.so",
             absl::StrReplaceAll(testing::ReadWholeFile(testing::FixtureLibPath()),
                                 {{"fixture_leaf", "fixture_LEAF"}}));
  std::string bytes = testing::ReadWholeFile(lib_);
  const std::string id = testing::ElfBuildId(testing::FixtureLibPath());
  ASSERT_NE(bytes.find(id), std::string::npos);
  bytes[bytes.find(id)] ^= 0x55;  // its build-id says it is another build
  ::unlink(lib_.c_str());
  dir_.Write("lib/libfixture.so", bytes);

  const std::string cached = Run(&cache);
  EXPECT_NE(cached.find("fixture_LEAF+3"), std::string::npos) << cached;
  EXPECT_EQ(cached, Run(nullptr));
  EXPECT_EQ(cache.stats().module_loads, 3u);
}

TEST_F(LoadedSymbolCacheTest, AFileWithoutBuildIdRewrittenInPlaceIsLoadedAgain) {
  const std::string plain = WithoutBuildId(testing::ReadWholeFile(testing::FixtureLibPath()));
  ::unlink(lib_.c_str());
  dir_.Write("lib/libfixture.so", plain);
  const std::vector<SymbolRequest> requests(requests_.begin(), requests_.begin() + 2);
  LoadedSymbolCache cache(cache_options_);
  EXPECT_NE(Run(&cache, requests).find("fixture_leaf+3"), std::string::npos);
  EXPECT_EQ(cache.stats().module_loads, 1u);

  // Same inode, size and mtime; only the contents (and so the ctime) differ.
  // File times are kernel-tick coarse: let one pass.
  ::usleep(50'000);
  RewriteInPlace(lib_, absl::StrReplaceAll(plain, {{"fixture_leaf", "fixture_LEAF"}}));
  const std::string cached = Run(&cache, requests);
  EXPECT_NE(cached.find("fixture_LEAF+3"), std::string::npos) << cached;
  EXPECT_EQ(cache.stats().module_loads, 2u);
}

TEST_F(LoadedSymbolCacheTest, AFileWithoutBuildIdChangedJustNowIsNotKept) {
  ::unlink(lib_.c_str());
  dir_.Write("lib/libfixture.so",
             WithoutBuildId(testing::ReadWholeFile(testing::FixtureLibPath())));
  cache_options_.min_file_age = absl::Hours(1);
  LoadedSymbolCache cache(cache_options_);
  const std::vector<SymbolRequest> requests(requests_.begin(), requests_.begin() + 2);
  EXPECT_NE(Run(&cache, requests).find("fixture_leaf+3"), std::string::npos);
  Run(&cache, requests);
  EXPECT_EQ(cache.stats().module_loads, 0u);
  EXPECT_EQ(cache.stats().module_uncached, 2u);
}

TEST_F(LoadedSymbolCacheTest, TheByteCapEvictsTheLeastRecentlyUsed) {
  const std::vector<SymbolRequest> full(requests_.begin(), requests_.begin() + 2);
  const std::vector<SymbolRequest> stripped(requests_.begin() + 4, requests_.begin() + 6);
  uint64_t full_bytes = 0, stripped_bytes = 0;
  {
    LoadedSymbolCache probe(cache_options_);
    Run(&probe, full);
    full_bytes = probe.stats().bytes;
    Run(&probe, stripped);
    stripped_bytes = probe.stats().bytes - full_bytes;
  }
  ASSERT_GT(full_bytes, 0u);
  ASSERT_GT(stripped_bytes, 0u);
  // Room for either module, not both.
  cache_options_.max_bytes = std::max(full_bytes, stripped_bytes) + 16;
  LoadedSymbolCache cache(cache_options_);
  const std::string full_names = Run(&cache, full);
  Run(&cache, stripped);  // evicts the full library, not used in this run
  EXPECT_EQ(cache.stats().evicted, 1u);
  EXPECT_LE(cache.stats().bytes, cache_options_.max_bytes);
  EXPECT_EQ(cache.stats().entries, 1u);
  Run(&cache, stripped);
  EXPECT_EQ(cache.stats().module_loads, 2u);  // the stripped one stayed
  EXPECT_EQ(Run(&cache, full), full_names);   // the full one is loaded again
  EXPECT_EQ(cache.stats().module_loads, 3u);
  EXPECT_EQ(cache.stats().evicted, 2u);
}

TEST_F(LoadedSymbolCacheTest, ModulesNoRunUsesAreDropped) {
  cache_options_.max_idle_runs = 2;
  LoadedSymbolCache cache(cache_options_);
  const std::vector<SymbolRequest> full(requests_.begin(), requests_.begin() + 2);
  Run(&cache, full);
  cache.EndRun({});
  EXPECT_EQ(cache.stats().dropped_idle, 0u);
  cache.EndRun({});
  EXPECT_EQ(cache.stats().dropped_idle, 1u);
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST_F(LoadedSymbolCacheTest, KallsymsIsLoadedAgainWhenTheModuleListChanges) {
  const std::vector<SymbolRequest> kernel = {requests_.back()};
  LoadedSymbolCache cache(cache_options_);
  EXPECT_NE(Run(&cache, kernel).find("do_syscall_64+4"), std::string::npos);
  other_.Write("kallsyms",
               "ffffffff81000000 T _text\n"
               "ffffffff81001000 t entry_SYSCALL_64\n");
  // Unchanged module list: the table kept is used (as it would be on this
  // boot: kallsyms only changes with modules, BPF programs, or max age).
  EXPECT_NE(Run(&cache, kernel).find("do_syscall_64+4"), std::string::npos);
  other_.Write("modules",
               "nvme 1 0 - Live 0xffffffffc0a00000\n"
               "kvm 1 0 - Live 0xffffffffc0b00000\n");
  EXPECT_NE(Run(&cache, kernel).find("entry_SYSCALL_64+4"), std::string::npos);
  EXPECT_EQ(cache.stats().kallsyms_loads, 2u);
  EXPECT_EQ(cache.stats().kallsyms_hits, 1u);
}

// Perf maps, as the agent's windows hand them over: each run folder holds its
// own copy, the whole map as long as the process has written it.
class PerfMapCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.proc_dir = dir_.path() + "/proc";
    SetStartTime(kPid, 1000);
  }
  void SetStartTime(uint32_t pid, uint64_t start) {
    // proc(5): field 22 is starttime; comm may hold spaces and parentheses.
    std::string stat = absl::StrCat(pid, " (dotnet (x) y) S");
    for (int field = 4; field <= 21; ++field) absl::StrAppend(&stat, " ", field);
    absl::StrAppend(&stat, " ", start, " 23 24\n");
    dir_.Write(absl::StrCat("proc/", pid, "/stat"), stat);
  }
  // A window's copy of the map.
  std::shared_ptr<const PerfMap> Read(LoadedSymbolCache* cache, const std::string& text) {
    const std::string path = dir_.Write(absl::StrCat("run", ++window_, "/perf-42.map"), text);
    base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    auto map = cache->ReadPerfMap(kPid, fd.get(), path);
    EXPECT_TRUE(map.ok()) << map.status();
    return map.ok() ? *map : nullptr;
  }
  static std::string NameAt(const PerfMap& map, uint64_t address) {
    auto match = map.Lookup(address);
    return match.has_value() ? std::string(match->name) : "";
  }
  // Every name a map gives over [0x1000, 0x5000), in steps.
  static std::string Names(const PerfMap& map) {
    std::string out;
    for (uint64_t a = 0x1000; a < 0x5000; a += 4) absl::StrAppend(&out, NameAt(map, a), ",");
    return out;
  }

  testing::ScratchDir dir_;
  LoadedSymbolCacheOptions options_;
  int window_ = 0;
};

TEST_F(PerfMapCacheTest, AGrowingMapIsParsedOnlyFromWhereTheLastRunStopped) {
  LoadedSymbolCache cache(options_);
  std::string text = "1000 10 A\n2000 10 B\n";
  auto first = Read(&cache, text);
  EXPECT_EQ(NameAt(*first, 0x1004), "A");
  EXPECT_EQ(cache.stats().perf_map_bytes, text.size());

  // Re-JIT of A over its old range, and a last line still being written.
  const std::string growth = "1008 10 A2\n3000 10 C";
  text += growth;
  auto second = Read(&cache, text);
  EXPECT_EQ(cache.stats().perf_maps_read, 1u);
  EXPECT_EQ(cache.stats().perf_maps_continued, 1u);
  EXPECT_EQ(cache.stats().perf_map_bytes, text.size());  // each byte parsed once
  EXPECT_EQ(NameAt(*second, 0x1004), "A");
  EXPECT_EQ(NameAt(*second, 0x100c), "A2");
  EXPECT_EQ(NameAt(*second, 0x3004), "C");
  EXPECT_EQ(Names(*second), Names(PerfMap::Parse(text)));

  // The line finished: read again whole, not as "C" plus a line "D".
  text += "D\n4000 8 E\n";
  auto third = Read(&cache, text);
  EXPECT_EQ(cache.stats().perf_maps_continued, 2u);
  EXPECT_EQ(NameAt(*third, 0x3004), "CD");
  EXPECT_EQ(NameAt(*third, 0x4004), "E");
  EXPECT_EQ(Names(*third), Names(PerfMap::Parse(text)));
  EXPECT_EQ(third->stats().entries, PerfMap::Parse(text).stats().entries);
  EXPECT_EQ(third->stats().lines, PerfMap::Parse(text).stats().lines);
}

TEST_F(PerfMapCacheTest, AMapWrittenAnewOrAnotherProcessIsReadWhole) {
  LoadedSymbolCache cache(options_);
  Read(&cache, "1000 10 A\n2000 10 B\n");
  // The runtime recreated its map (a diagnostics session turned maps on).
  auto rewritten = Read(&cache, "1000 10 X\n2000 10 B\n3000 10 C\n");
  EXPECT_EQ(NameAt(*rewritten, 0x1004), "X");
  EXPECT_EQ(cache.stats().perf_maps_read, 2u);
  // The pid now names another process (another start time).
  SetStartTime(kPid, 2000);
  auto other = Read(&cache, "1000 10 X\n2000 10 B\n3000 10 C\n4000 10 D\n");
  EXPECT_EQ(NameAt(*other, 0x4004), "D");
  EXPECT_EQ(cache.stats().perf_maps_read, 3u);
  EXPECT_EQ(cache.stats().perf_maps_continued, 0u);
}

TEST_F(PerfMapCacheTest, MapsOfProcessesThatExitedAreDropped) {
  LoadedSymbolCache cache(options_);
  Read(&cache, "1000 10 A\n");
  cache.EndRun({kPid});
  EXPECT_EQ(cache.stats().entries, 1u);
  cache.EndRun({kPid + 1});  // not live any more
  EXPECT_EQ(cache.stats().dropped_exited, 1u);
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.stats().bytes, 0u);

  Read(&cache, "1000 10 A\n");
  ::unlink((dir_.path() + "/proc/42/stat").c_str());  // gone, though the caller still lists it
  cache.EndRun({kPid});
  EXPECT_EQ(cache.stats().dropped_exited, 2u);
  EXPECT_EQ(cache.stats().entries, 0u);

  // Without a live set: what /proc still shows is live.
  SetStartTime(kPid, 1000);
  Read(&cache, "1000 10 A\n");
  cache.EndRun();
  EXPECT_EQ(cache.stats().entries, 1u);
  SetStartTime(kPid, 3000);  // the pid was reused
  cache.EndRun();
  EXPECT_EQ(cache.stats().dropped_exited, 3u);
  EXPECT_EQ(cache.stats().entries, 0u);
}

// The whole symbolize stage of two agent windows: each its own run folder
// with its own copy of the JIT process's map, the second grown.
TEST_F(PerfMapCacheTest, RunSymbolsNamesGrownJitCodeThroughTheCache) {
  LoadedSymbolCache cache(options_);
  const std::vector<SymbolRequest> requests = {
      {{CodeKind::kProcess, kPid, 0x1004}, "//anon"},
      {{CodeKind::kProcess, kPid, 0x2004}, "//anon"}};
  auto window = [&](const std::string& map, LoadedSymbolCache* with) {
    const std::string run = dir_.path() + absl::StrCat("/window", ++window_);
    dir_.Write(absl::StrCat("window", window_, "/", recording::kJitDir, "/perf-42.map"), map);
    RunSymbolsOptions options;
    options.run_dir = run;
    options.cache = with;
    base::RunLog log;
    std::vector<Module> modules;
    std::string names;
    {
      RunSymbols symbols(options, &log);
      auto resolved = symbols.ResolveProfile({&requests, &modules, {}, "", {}});
      EXPECT_TRUE(resolved.ok()) << resolved.status();
      if (resolved.ok()) names = Describe(resolved->table, requests);
    }
    if (with != nullptr) with->EndRun({kPid});
    return names;
  };
  window("1000 10 Work(int)[OptimizedTier1]\n", &cache);
  const std::string grown = "1000 10 Work(int)[OptimizedTier1]\n2000 10 More(int)[QuickJitted]\n";
  const std::string cached = window(grown, &cache);
  EXPECT_NE(cached.find("More"), std::string::npos) << cached;
  EXPECT_EQ(cached, window(grown, nullptr));
  EXPECT_EQ(cache.stats().perf_maps_continued, 1u);
}

}  // namespace
}  // namespace profcpu::symbolize
