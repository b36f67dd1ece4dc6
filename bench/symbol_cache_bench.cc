// The symbolize stage of an agent's windows, with and without the
// LoadedSymbolCache (symbolize/loaded_symbol_cache.h), for
// bench/symbol_cache.sh: the run folder's recording is replayed and named
// WINDOWS times, each time from a fresh copy of the folder (its recording and
// jit/ copies, no symbols.bin), as each agent window has its own run folder.
// Prints, per mode, the symbolize time of window 1 and of the later windows
// (median), and what the cache holds at the end.
//
// Usage: symbol_cache_bench RUN_DIR... [WINDOWS]
// With several run folders (windows collected one after the other from the
// same processes), window i replays folder i modulo their number.
// The profiled processes' files are read in /proc/PID/root while they live,
// else in / (the bench runs where the recording was taken).
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/rooted_open.h"
#include "base/run_log.h"
#include "fold/profile_builder.h"
#include "recording/recording_reader.h"
#include "recording/run_folder.h"
#include "symbolize/loaded_symbol_cache.h"
#include "symbolize/perf_map.h"
#include "symbolize/process_files.h"
#include "symbolize/run_symbols.h"

namespace {

using profcpu::symbolize::LoadedSymbolCache;

double Seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

class LiveProcessFiles : public profcpu::symbolize::ProcessFiles {
 public:
  LiveProcessFiles() {
    auto root = profcpu::base::RootDir::Open("/");
    if (root.ok()) fallback_ = *root;
  }
  std::shared_ptr<profcpu::base::RootDir> RootFor(uint32_t pid) const override {
    auto [it, inserted] = roots_.try_emplace(pid);
    if (inserted) {
      auto root = profcpu::base::RootDir::Open(absl::StrCat("/proc/", pid, "/root"));
      it->second = root.ok() ? *root : fallback_;
    }
    return it->second;
  }
  uint32_t NamespacePid(uint32_t pid) const override { return pid; }

 private:
  std::shared_ptr<profcpu::base::RootDir> fallback_;
  mutable std::map<uint32_t, std::shared_ptr<profcpu::base::RootDir>> roots_;
};

// This process's resident set, MB (/proc/self/statm's second field).
double RssMb() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long long size = 0, resident = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%llu %llu", &size, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / 1e6;
}

bool Run(const std::string& command) { return std::system(command.c_str()) == 0; }

// One window: a fresh run folder, replayed and named. Returns the seconds
// the symbolize stage took, or < 0 on failure.
double Window(const std::string& source, const std::string& dir, LoadedSymbolCache* cache,
              const LiveProcessFiles& files, std::vector<std::string>* names) {
  Run(absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "' && cp '", source, "/",
                   profcpu::recording::kRecordingFile, "' '", dir, "/' && { [ ! -d '", source,
                   "/jit' ] || cp -r '", source, "/jit' '", dir, "/'; }"));
  auto reader = profcpu::recording::RecordingReader::Open(
      absl::StrCat(dir, "/", profcpu::recording::kRecordingFile));
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", std::string(reader.status().message()).c_str());
    return -1;
  }
  profcpu::base::RunLog log;
  profcpu::symbolize::RunSymbolsOptions options;
  options.run_dir = dir;
  options.files = &files;
  options.cache = cache;
  double seconds = -1;
  absl::flat_hash_set<uint32_t> pids;
  {
    profcpu::symbolize::RunSymbols symbols(options, &log);
    auto built = profcpu::fold::BuildProfile(**reader, {symbols.jit_history(), symbols.unwinder()});
    if (!built.ok()) {
      std::fprintf(stderr, "%s\n", std::string(built.status().message()).c_str());
      return -1;
    }
    const double start = Seconds();
    auto resolved = symbols.ResolveProfile(
        {&built->requests, &built->modules, std::move(built->known_names),
         built->summary.header.boot_id, {}});
    seconds = Seconds() - start;
    if (!resolved.ok()) return -1;
    names->clear();
    // (The replay's request order is not the same from one replay to the next.)
    for (const auto& request : built->requests) {
      const profcpu::symbolize::Symbolization* s = resolved->table.Find(request.location);
      const auto& at = request.location;
      std::string line = absl::StrCat(static_cast<int>(at.kind), ":", at.space, ":", at.value, ":",
                                      at.epoch, " ", s == nullptr ? "(none)" : s->module);
      if (s != nullptr) {
        for (const auto& frame : s->frames) absl::StrAppend(&line, " ", frame.function);
      }
      names->push_back(std::move(line));
      if (request.location.kind == profcpu::symbolize::CodeKind::kProcess) {
        pids.insert(request.location.space);
      }
    }
    std::sort(names->begin(), names->end());
  }
  if (cache != nullptr) {
    absl::flat_hash_set<uint32_t> live;
    for (uint32_t pid : pids) {
      struct stat st;
      if (::stat(absl::StrCat("/proc/", pid).c_str(), &st) == 0) live.insert(pid);
    }
    cache->EndRun(live);
  }
  return seconds;
}

// A long-running JIT process's perf map, grown by `growth` methods between
// windows from `initial`: each window reads its own copy whole (no cache) or
// through the cache (only the growth parsed). This process stands for the
// JIT process (it lives, so it has a start time).
void PerfMapWindows(const std::string& scratch, int windows, size_t initial, size_t growth) {
  std::string text;
  uint64_t address = 0x7f0000000000;
  auto add = [&](size_t methods) {
    for (size_t i = 0; i < methods; ++i, address += 0x40) {
      absl::StrAppend(&text, absl::Hex(address), " 40 instance void [App] App.Handler",
                      i % 977, "::Work(int32,class System.String)[OptimizedTier1]\n");
    }
  };
  add(initial);
  const uint32_t pid = static_cast<uint32_t>(::getpid());
  for (bool cached : {false, true}) {
    LoadedSymbolCache cache;
    std::string map = text;
    std::vector<double> times;
    for (int w = 0; w < windows; ++w) {
      const std::string path = absl::StrCat(scratch, "/perf-", w, ".map");
      FILE* f = std::fopen(path.c_str(), "w");
      std::fwrite(map.data(), 1, map.size(), f);
      std::fclose(f);
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      const double start = Seconds();
      if (cached) {
        (void)cache.ReadPerfMap(pid, fd, path);
        cache.EndRun({pid});
      } else {
        (void)profcpu::symbolize::PerfMap::Read(fd, path);
      }
      times.push_back((Seconds() - start) * 1e3);
      ::close(fd);
      ::unlink(path.c_str());
      add(growth);
      map = text;
    }
    std::vector<double> later(times.begin() + 1, times.end());
    std::sort(later.begin(), later.end());
    std::printf("%-14s %12.1f %14.1f %14s %10s %10s\n", cached ? "with cache" : "without cache",
                times[0], later.empty() ? 0 : later[later.size() / 2],
                absl::StrCat("median of ", later.size()).c_str(), "-",
                cached ? absl::StrCat(cache.stats().bytes / 1000000).c_str() : "-");
  }
  text.clear();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> sources;
  int windows = 10;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i == argc - 1 && !arg.empty() && arg.find_first_not_of("0123456789") == std::string::npos) {
      windows = std::atoi(arg.c_str());
    } else {
      sources.push_back(arg);
    }
  }
  if (sources.empty() || windows < 1) {
    std::fprintf(stderr, "usage: symbol_cache_bench RUN_DIR... [WINDOWS]\n");
    return 2;
  }
  char scratch[] = "/tmp/symbol_cache_bench.XXXXXX";
  if (::mkdtemp(scratch) == nullptr) return 1;
  LiveProcessFiles files;
  std::printf("resident set before: %.0f MB\n", RssMb());
  if (sources.size() > 1) std::printf("%zu run folders in turn\n", sources.size());
  std::printf("%-14s %12s %14s %14s %10s %10s\n", "mode", "window 1 ms", "window N ms",
              "(N = 2..)", "loads", "cache MB");
  // Per window, every location's module and frames: the same with the cache?
  std::vector<std::vector<std::string>> uncached_names(windows);
  size_t differ = 0, compared = 0;
  for (bool cached : {false, true}) {
    LoadedSymbolCache cache;
    std::vector<double> times;
    for (int w = 0; w < windows; ++w) {
      std::vector<std::string> names;
      const double t = Window(sources[w % sources.size()], absl::StrCat(scratch, "/w", w),
                              cached ? &cache : nullptr, files, &names);
      if (!cached) {
        uncached_names[w] = std::move(names);
      } else {
        const auto& before = uncached_names[w];
        compared += names.size();
        for (size_t i = 0; i < names.size(); ++i) {
          if (i >= before.size() || before[i] != names[i]) {
            if (++differ <= 3 && std::getenv("SHOW_DIFF") != nullptr) {
              std::printf("  differs: [%s] vs [%s]\n", i < before.size() ? before[i].c_str() : "",
                          names[i].c_str());
            }
          }
        }
      }
      if (t < 0) return 1;
      times.push_back(t * 1e3);
    }
    std::vector<double> later(times.begin() + 1, times.end());
    std::sort(later.begin(), later.end());
    const double median = later.empty() ? 0 : later[later.size() / 2];
    const auto& s = cache.stats();
    std::printf("%-14s %12.1f %14.1f %14s %10s %10s\n", cached ? "with cache" : "without cache",
                times[0], median, absl::StrCat("median of ", later.size()).c_str(),
                cached ? absl::StrCat(s.module_loads, "+", s.kallsyms_loads).c_str() : "-",
                cached ? absl::StrCat(s.bytes / 1000000).c_str() : "-");
    if (cached) {
      std::printf("  cache: %llu module loads, %llu hits, %llu kallsyms loads, %llu hits, "
                  "%llu perf maps read, %llu continued, %llu entries, %.1f MB estimated\n",
                  static_cast<unsigned long long>(s.module_loads),
                  static_cast<unsigned long long>(s.module_hits),
                  static_cast<unsigned long long>(s.kallsyms_loads),
                  static_cast<unsigned long long>(s.kallsyms_hits),
                  static_cast<unsigned long long>(s.perf_maps_read),
                  static_cast<unsigned long long>(s.perf_maps_continued),
                  static_cast<unsigned long long>(s.entries), s.bytes / 1e6);
      for (const auto& [what, bytes] : cache.Describe()) {
        if (bytes >= 1000000) std::printf("    %6.1f MB  %s\n", bytes / 1e6, what.c_str());
      }
      std::printf("  resident set with the cache: %.0f MB (this process)\n", RssMb());
      std::printf("  names with the cache: %zu of %zu locations differ from the uncached run's\n",
                  differ, compared);
    }
  }
  if (sources.size() > 1) return 0;  // the synthetic map once, with one folder
  const size_t initial = 500000, growth = 5000;
  std::printf("\nperf map of a long-running JIT process: %zu methods, %zu more each window\n",
              initial, growth);
  PerfMapWindows(scratch, windows, initial, growth);
  Run(absl::StrCat("rm -rf '", scratch, "'"));
  return 0;
}
