// A JIT runtime's /tmp/perf-PID.map: one "START SIZE NAME" line per compiled
// method (tools/perf/Documentation/jit-interface.txt). START and SIZE are hex,
// with or without "0x" (CoreCLR prints "%p", which glibc renders "0x7f..."; older
// runtimes print 16 upper-case digits); NAME is the rest of the line and may
// hold spaces. Ranges are [START, START+SIZE).
//
// A runtime that re-JITs a method (tiered compilation) or frees and reuses
// code memory appends new lines over old ranges, so where ranges overlap the
// later line wins. perf itself picks arbitrarily among overlaps.
//
// The file is written by the target, so it is read streaming with a byte cap
// and an entry cap, and every line is validated; bad lines are counted.
#ifndef PROFCPU_SYMBOLIZE_PERF_MAP_H_
#define PROFCPU_SYMBOLIZE_PERF_MAP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::symbolize {

struct PerfMapLimits {
  // Read at most this much of the file (values above 4 GiB are clamped).
  uint64_t max_bytes = uint64_t{1} << 30;
  size_t max_entries = 8'000'000;  // clamped below 2^32
  size_t max_line = 64 * 1024;     // longer lines are malformed (CoreCLR generics run to KBs)
};

struct PerfMapStats {
  uint64_t bytes = 0;  // bytes parsed
  uint64_t lines = 0;
  uint64_t entries = 0;            // lines kept
  uint64_t malformed = 0;          // lines skipped as not "START SIZE NAME"
  uint64_t empty_ranges = 0;       // SIZE 0: valid but covers nothing
  bool truncated_bytes = false;    // stopped at max_bytes
  bool truncated_entries = false;  // stopped at max_entries
};

struct PerfMapMatch {
  absl::string_view name;  // valid as long as the PerfMap
  uint64_t offset = 0;     // from the entry's START
};

class PerfMap {
 public:
  // Parses the whole of `text` (tests, and maps copied into an archive).
  static PerfMap Parse(absl::string_view text, const PerfMapLimits& limits = {});
  // Reads the file open at `fd` from its current position, in chunks, never
  // holding more than one chunk and one line of raw text. `what` names it in
  // errors. Fails only if the file cannot be read.
  static absl::StatusOr<PerfMap> Read(int fd, absl::string_view what,
                                      const PerfMapLimits& limits = {});

  // Reads what was appended to the same file since: `fd` positioned at
  // complete_bytes() of it. The map ends as Read of the whole file would have
  // left it: a last line without its newline, parsed by the earlier read, is
  // undone and read again whole; the caps count the whole file. A map that
  // hit a cap stays as it is. For a long-running JIT process whose map grows
  // (LoadedSymbolCache), so a window parses only the growth.
  absl::Status Continue(int fd, absl::string_view what, const PerfMapLimits& limits = {});
  // Bytes of the file up to the end of its last complete line, as read.
  uint64_t complete_bytes() const { return checkpoint_.bytes; }
  // Memory held, roughly, for a cache's byte cap.
  size_t EstimatedBytes() const {
    return entries_.capacity() * sizeof(Entry) + segments_.capacity() * sizeof(Segment) +
           names_.capacity() + sizeof(*this);
  }

  std::optional<PerfMapMatch> Lookup(uint64_t address) const;

  // Whether any entry's name contains `part` (one scan of the names; they
  // are stored end to end, so a match across two names is possible but only
  // makes a caller look closer).
  bool AnyNameContains(absl::string_view part) const {
    return absl::string_view(names_).find(part) != absl::string_view::npos;
  }

  const PerfMapStats& stats() const { return stats_; }
  // One line per problem worth telling the user (malformed lines, caps hit),
  // naming the file as `what`.
  std::vector<std::string> Warnings(absl::string_view what) const;

 private:
  class Builder;
  struct Entry {
    uint64_t start = 0;
    uint64_t end = 0;          // exclusive
    uint32_t name_offset = 0;  // names_ stays below 4 GiB: max_bytes is clamped
    uint32_t name_length = 0;
  };
  // The flattened map: [start, next segment's start) belongs to `entry`, or
  // to nothing when entry == kNoEntry.
  struct Segment {
    uint64_t start = 0;
    uint32_t entry = 0;
  };
  static constexpr uint32_t kNoEntry = UINT32_MAX;

  void Flatten();
  // Flattens entries_[first..] and lays them over segments_ (later lines win).
  void FlattenAppended(size_t first);
  // Reads the rest of `fd` into the map; false when a cap stopped it.
  absl::Status ReadFrom(int fd, absl::string_view what, const PerfMapLimits& limits);

  // The map as it was at the end of the last complete line read, to undo a
  // last line read without its newline before reading on.
  struct Checkpoint {
    uint64_t bytes = 0;
    size_t entries = 0;
    size_t names = 0;
    PerfMapStats stats;
  };

  std::vector<Entry> entries_;  // in file order
  std::vector<Segment> segments_;
  std::string names_;
  PerfMapStats stats_;
  Checkpoint checkpoint_;
  bool capped_ = false;  // a cap stopped the read: nothing more is read
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_PERF_MAP_H_
