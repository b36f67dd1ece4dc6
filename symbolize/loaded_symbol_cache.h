// What the symbolizer loads, kept across the runs of a caller that runs many
// (the fleet agent: one collection and symbolization per window, forever), so
// that naming a window costs what the window holds, not what the node has
// loaded since boot.
//
//   symbolize::LoadedSymbolCache cache({.max_bytes = 256 << 20});
//   for (each window) {
//     RunSymbolsOptions options = ...;  // as `collect` fills them
//     options.cache = &cache;           // nullptr: today's behaviour exactly
//     RunSymbols symbols(options, log);
//     ... fold::BuildProfile, symbols.ResolveProfile(...) ...
//     cache.EndRun(live_pids);          // or EndRun(): whatever still runs
//   }
//
// It keeps:
// - Native modules: a file's ELF tables, its debug file and DWARF, its load
//   layout (ModuleSymbolizer), keyed by the identity of the file opened inside
//   the mapping process's root: its GNU build-id and size when it has a
//   build-id (two containers running the same image share one entry), else
//   device, inode, size, mtime and ctime (not kept while its ctime is
//   younger than min_file_age). A file replaced or rewritten at the
//   same path has a new identity and is loaded again; failed loads are kept
//   too (a .NET assembly is not ELF: no need to fail again every window).
//   What ties the file to the mapping (build-id or inode, module_symbols.h)
//   is checked per run, as without the cache.
// - /proc/kallsyms: loaded again when the kernel's module list
//   (/proc/modules: names and addresses) changes or when it is older than
//   kallsyms_max_age (BPF programs come and go without a module).
// - JIT perf maps (perf-PID.map), per process (pid and start time): each run
//   hands over its copy of the map (the collector copies it whole from the
//   process's root into each run folder, collector/perf_map_tailer.h); when
//   it begins with the bytes read before (its first and last bytes read are
//   compared), only what was appended since is parsed. A map rewritten from
//   scratch, or a pid now naming another process, is read whole again.
//
// Bounded: entries are evicted least recently used first once their
// estimated bytes exceed max_bytes or their number max_entries; modules no
// run used for max_idle_runs runs and the perf maps of processes that are not
// in EndRun's live set are dropped. The kallsyms table (one) counts towards
// bytes but is never evicted.
//
// Not cached: jitdumps and the .NET runtime's method events (read from each
// run's own copies, as without the cache), the vdso (cheap), -callgraph
// dwarf unwinding. Names are those of an uncached run, except that:
// - a module shared by build-id across roots keeps the debug file found for
//   its first user (a container without the debug package then gets the
//   host's names rather than none);
// - a debug file installed after a module was loaded is used only once the
//   entry goes (evicted, or idle for max_idle_runs runs);
// - a perf map rewritten in place with the same first and last bytes read,
//   and no shorter, is taken as grown (the collector's copies have the same
//   blind spot, perf_map_tailer.h).
//
// Not thread-safe: one run at a time. A run's Symbolizer holds what it uses
// (shared_ptr), so an entry evicted mid-run lives until the run ends.
#ifndef PROFCPU_SYMBOLIZE_LOADED_SYMBOL_CACHE_H_
#define PROFCPU_SYMBOLIZE_LOADED_SYMBOL_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/rooted_open.h"
#include "symbolize/code_location.h"
#include "symbolize/debug_file_finder.h"
#include "symbolize/kallsyms.h"
#include "symbolize/module_symbolizer.h"
#include "symbolize/perf_map.h"

namespace profcpu::symbolize {

struct LoadedSymbolCacheOptions {
  // Estimated bytes of the entries kept (module tables, DWARF sections and
  // indexes, perf maps, kallsyms).
  uint64_t max_bytes = uint64_t{256} << 20;
  size_t max_entries = 4096;
  // A module no run needed for this many runs is dropped (its processes are
  // gone, or stopped running code from it).
  uint32_t max_idle_runs = 120;
  absl::Duration kallsyms_max_age = absl::Minutes(10);
  // A file without a build-id changed (ctime) less than this long ago is
  // loaded but not kept: file times are coarse (a kernel tick), so a file
  // rewritten in place twice within one tick, same size, could otherwise
  // keep its key (git's "racily clean" problem).
  absl::Duration min_file_age = absl::Seconds(2);
  // Where the kernel's module list and the processes' start times are read.
  std::string modules_path = "/proc/modules";
  std::string proc_dir = "/proc";
};

// Counts since the cache was made, for tests, benchmarks and the agent's log.
struct LoadedSymbolCacheStats {
  uint64_t runs = 0;                // EndRun calls
  uint64_t module_loads = 0;        // modules loaded from their files (misses)
  uint64_t module_hits = 0;         // modules served from the cache
  uint64_t module_uncached = 0;     // loaded without the cache (no file to key by)
  uint64_t kallsyms_loads = 0;
  uint64_t kallsyms_hits = 0;
  uint64_t perf_maps_read = 0;      // perf maps parsed from their first byte
  uint64_t perf_maps_continued = 0; // perf maps parsed from where the last run stopped
  uint64_t perf_map_bytes = 0;      // perf map bytes parsed, in all
  uint64_t evicted = 0;             // over max_bytes or max_entries
  uint64_t dropped_idle = 0;        // modules unused for max_idle_runs
  uint64_t dropped_exited = 0;      // perf maps of processes gone or not live
  uint64_t bytes = 0;               // estimated, now
  uint64_t entries = 0;             // now (kallsyms included)
};

// A module's symbols as a run uses them: shared with the cache.
struct SharedModule {
  std::shared_ptr<ModuleSymbolizer> symbolizer;
  std::vector<std::string> warnings;  // as LoadedModule's
};

class LoadedSymbolCache {
 public:
  explicit LoadedSymbolCache(LoadedSymbolCacheOptions options = {});
  ~LoadedSymbolCache();
  LoadedSymbolCache(const LoadedSymbolCache&) = delete;
  LoadedSymbolCache& operator=(const LoadedSymbolCache&) = delete;

  // After each run: drops the perf maps of processes not in `live_pids` (as
  // recorded: the collector's pids), re-estimates what the run grew (DWARF
  // indexes), drops idle modules and evicts down to the caps.
  void EndRun(const absl::flat_hash_set<uint32_t>& live_pids);
  // The same, with every process still in proc_dir (same pid, same start
  // time) taken as live.
  void EndRun();

  const LoadedSymbolCacheStats& stats() const { return stats_; }
  // What is kept, most recently used first, with estimated bytes: "module
  // /usr/lib/x86_64-linux-gnu/libc.so.6 (build-id 93ac...)", "perf map of
  // pid 42", "kallsyms /proc/kallsyms". For logs and benchmarks.
  std::vector<std::pair<std::string, uint64_t>> Describe() const;

  // For the symbolizer (symbolizer.h, jit_sources.h) -----------------------

  // LoadModuleSymbolizer(module, target_root, debug_roots, limits), or what
  // an earlier call loaded from the very same file (a cache's callers use
  // one set of limits: they are not part of the key).
  absl::StatusOr<SharedModule> LoadModule(const Module& module, const base::RootDir* target_root,
                                          const std::vector<DebugSearchRoot>& debug_roots,
                                          const ModuleSymbolizerLimits& limits = {});

  // Kallsyms::Load(path), reloaded as the header says.
  absl::StatusOr<std::shared_ptr<const Kallsyms>> LoadKallsyms(const std::string& path);

  // The perf map of `pid` open at `fd` (at its start), as PerfMap::Read
  // would give it; `what` names it in errors and warnings.
  absl::StatusOr<std::shared_ptr<const PerfMap>> ReadPerfMap(uint32_t pid, int fd,
                                                             absl::string_view what);

 private:
  struct Entry;
  using Lru = std::list<Entry>;  // most recently used first

  Lru::iterator Find(const std::string& key);
  Lru::iterator Insert(std::string key, Entry entry);
  void Erase(Lru::iterator it);
  void Touch(Lru::iterator it);
  void EvictToCaps();
  // The process's start time (field 22 of /proc/PID/stat); 0 when it is gone.
  uint64_t StartTime(uint32_t pid) const;

  LoadedSymbolCacheOptions options_;
  LoadedSymbolCacheStats stats_;
  uint64_t run_ = 0;
  Lru lru_;
  absl::flat_hash_map<std::string, Lru::iterator> by_key_;

  struct KallsymsState;
  std::unique_ptr<KallsymsState> kallsyms_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_LOADED_SYMBOL_CACHE_H_
