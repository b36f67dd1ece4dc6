// Copies the perf maps of the processes a collection sees run JIT code
// (/tmp/perf-PID.map, symbolize/perf_map.h) into the run folder while they
// run, so that their names survive a process that removes its map when it
// exits, as JIT runtimes and short-lived containers do. perf reads the map
// at report time (tools/perf/Documentation/jit-interface.txt) and has the
// same hole; jitdumps do not, because the runtime mmaps them and the
// collector keeps the mapped file open.
//
// For each process with executable anonymous or memfd memory (the same test
// the symbolizer uses, base/jit_mapping.h) it looks, every tick, for
// <jit directory>/perf-<pid the process sees>.map inside the process's root
// (base::RootDir: openat2 RESOLVE_IN_ROOT, so no symlink leads out), accepts
// regular files only, holds the descriptor once found (the bytes stay
// readable after the file is unlinked or the process exits) and appends what
// was added since the last tick to RUN/jit/perf-PID.map.partial; Finish makes
// a last pass and renames it jit/perf-PID.map, the copy the symbolizer reads
// first (symbolize/archived_jit_files.h).
//
// It copies bytes and never parses them: the symbolizer parses the copy with
// its own caps, so a hostile map costs the collector no parsing, only disk,
// and that is capped too (Limits).
//
// A map truncated or replaced by another file (the .NET runtime recreates its
// map when a diagnostics session turns maps on) is copied again from its
// start after what was copied, on a line of its own: in a perf map the later
// line wins, so the concatenation names code as the runtime last described
// it. A map truncated and written again past the copied length within one
// tick is caught by its first 256 bytes changing. Not seen: a rewrite in
// place that keeps those bytes, and a map that is created, used and removed
// between two ticks.
#ifndef PROFCPU_COLLECTOR_PERF_MAP_TAILER_H_
#define PROFCPU_COLLECTOR_PERF_MAP_TAILER_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/rooted_open.h"
#include "base/unique_fd.h"

namespace profcpu::collector {

// What became of one process's perf map, for the log, metadata.json and the
// symbolizer's hints.
struct TailedPerfMap {
  uint32_t pid = 0;          // as recorded; the copy is jit/perf-PID.map
  std::string path;          // as the process sees it: /tmp/perf-NSPID.map
  uint64_t watched_from_ns = 0;
  uint32_t looks = 0;        // times its path was looked up
  bool found = false;        // a regular file was opened at least once
  bool kept = false;         // its copy is in the run folder
  uint64_t bytes_copied = 0;
  uint32_t restarts = 0;     // times it was truncated or replaced
  bool removed = false;      // its path named nothing any more at the last look
  // Why copying stopped early or never started ("is not a regular file",
  // "copied the first 1024 MiB"); empty when nothing went wrong.
  std::string problem;
};

// One line for the log: "kept 123 bytes of /tmp/perf-7.map of pid 42 as
// jit/perf-42.map; it was gone from its path by the end", or that no look
// found it.
std::string DescribeTailedPerfMap(const TailedPerfMap& map);

class PerfMapTailer {
 public:
  struct Limits {
    // The most copied of one map: what the symbolizer would read of it
    // (PerfMapLimits::max_bytes).
    uint64_t max_file_bytes = uint64_t{1} << 30;
    // The most copied in one tick, all maps together, so a runaway writer
    // cannot stall sampling; the last pass is not limited.
    uint64_t max_tick_bytes = uint64_t{16} << 20;
    // Maps tailed at once: each holds a descriptor (and one for its copy).
    size_t max_files = 4096;
    // Paths looked up in one tick (round robin), for -a on a busy machine.
    size_t max_lookups_per_tick = 256;
    // Copying stops while the run folder's disk has less free than this:
    // the recording, written beside the copies, matters more. (After
    // collection the symbolizer reads a map the tailer did not copy in place.)
    uint64_t min_free_bytes = uint64_t{64} << 20;
  };

  // Copies go to `copy_dir` (the run folder's jit/, created on first use).
  PerfMapTailer(std::string copy_dir, Limits limits);
  ~PerfMapTailer();
  PerfMapTailer(const PerfMapTailer&) = delete;
  PerfMapTailer& operator=(const PerfMapTailer&) = delete;

  // Watch was called for `pid`: it is watched, or was passed over (no
  // root, too many maps), so its next JIT mapping need not be looked at.
  bool Knows(uint32_t pid) const { return by_pid_.contains(pid) || passed_over_.contains(pid); }
  // Starts looking for the map of `pid`, written at `path` inside `root`,
  // and looks once now. A second call for the same pid is ignored; so is a
  // null root (the process has exited, or may not be read).
  void Watch(uint32_t pid, std::shared_ptr<base::RootDir> root, std::string path,
             uint64_t now_ns);
  // Looks for maps not found yet and copies what was added since.
  void Tick();
  // The last pass, unlimited by the tick cap; closes and renames the copies.
  // Returns every map watched, in the order they were watched.
  std::vector<TailedPerfMap> Finish();

  // Problems found since the last call (each map's once), e.g. a FIFO where
  // the map should be, a cap reached, a full disk.
  std::vector<std::string> TakeWarnings();

 private:
  struct Watched;
  void LookUp(Watched* w);
  // Copies at most `budget` bytes of growth; returns the bytes copied.
  uint64_t CopyGrowth(Watched* w, uint64_t budget);
  bool EnsureCopyOpen(Watched* w);
  bool Append(Watched* w, const char* data, size_t size);
  // Ends the copy's last line before a restart, within the file cap.
  bool EndLine(Watched* w);
  // The map still begins with the bytes the copy began with.
  bool SameHead(const Watched& w) const;
  void Restart(Watched* w, base::UniqueFd source, uint64_t dev, uint64_t ino);
  void Stop(Watched* w, std::string problem);
  void StopAtCap(Watched* w);
  void Pass(bool last);
  // False (and copying stopped, with a warning) when the disk is too full.
  bool RoomOnDisk();
  // The path still names the file being copied.
  bool StillThere(const Watched& w) const;

  std::string copy_dir_;
  Limits limits_;
  std::vector<std::unique_ptr<Watched>> watched_;
  absl::flat_hash_map<uint32_t, Watched*> by_pid_;
  absl::flat_hash_set<uint32_t> passed_over_;
  size_t next_lookup_ = 0;
  bool disk_full_ = false;
  bool warned_max_files_ = false;
  std::vector<std::string> warnings_;
  std::string buffer_;  // one chunk being copied
};

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_PERF_MAP_TAILER_H_
