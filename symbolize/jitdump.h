// A JIT runtime's jit-PID.dump (tools/perf/Documentation/jitdump-specification.txt),
// read into a timeline of code regions so that a sample names the code that
// was at its address at its time.
//
// The file is a 40-byte header (magic 0x4A695444, or 0x4454694A when written
// on a host of the other byte order: then every field is byte-swapped),
// then records of u32 id, u32 total_size (prefix included), u64 timestamp:
//   0 CODE_LOAD      pid, tid, vma, code_addr, code_size, code_index, name\0, code
//   1 CODE_MOVE      pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index
//   2 DEBUG_INFO     code_addr, nr_entry, entries {addr, line, discrim, file\0};
//                    it precedes the CODE_LOAD of code_addr
//   3 CODE_CLOSE     end of the file's content
//   4 UNWINDING_INFO unwinding_size, eh_frame_hdr_size, mapped_size, data (skipped)
// Timestamps are CLOCK_MONOTONIC nanoseconds (what profcpu samples with)
// unless header flag bit 0 says they come from an architecture clock; then
// times cannot be compared with samples and the latest definition of an
// address is used for every sample.
//
// A region is live from its CODE_LOAD (or the CODE_MOVE that put it there)
// until a CODE_MOVE takes it away; where live regions overlap, the latest
// loaded wins (code memory is reused after a method is freed or re-JITted).
//
// The file is written by the target: it is read streaming with pread, in
// bounded pieces (a CODE_LOAD's code bytes are skipped, never read), with
// caps on regions, name bytes and debug entries; a truncated last record
// (the runtime was still writing) ends the parse quietly, and anything
// malformed ends it with a count of what was kept.
#ifndef PROFCPU_SYMBOLIZE_JITDUMP_H_
#define PROFCPU_SYMBOLIZE_JITDUMP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::symbolize {

struct JitdumpLimits {
  size_t max_regions = 8'000'000;
  size_t max_name_bytes = size_t{512} << 20;
  size_t max_name_length = 64 * 1024;     // CoreCLR generic names run to KBs
  size_t max_debug_entries = 32'000'000;  // in all DEBUG_INFO records together
  uint64_t max_bytes = uint64_t{8} << 30; // of file read, code bytes skipped included
};

struct JitdumpStats {
  uint64_t records = 0;
  uint64_t code_loads = 0;
  uint64_t code_moves = 0;
  uint64_t debug_infos = 0;
  uint64_t unwinding_infos = 0;
  uint64_t unknown_records = 0;
  bool byte_swapped = false;
  bool arch_timestamps = false;  // header flag bit 0: times not comparable
  bool truncated = false;        // the last record was cut short
  bool closed = false;           // a CODE_CLOSE record was seen
  std::string stopped_because;   // non-empty when something malformed ended the parse
  bool limit_hit = false;
};

// A piece of JIT code known from elsewhere than a jitdump file (a .NET
// runtime's method load events, symbolize/managed_code_events.h): live
// from `load_ns` (0: before anything was recorded) until `unload_ns`.
struct TimedJitCode {
  uint64_t start = 0;
  uint64_t size = 0;
  uint64_t load_ns = 0;
  uint64_t unload_ns = UINT64_MAX;
  std::string name;
};

struct JitdumpMatch {
  absl::string_view name;  // valid as long as the Jitdump
  uint64_t offset = 0;     // from the region's start
  absl::string_view source_file;  // from DEBUG_INFO; empty when unknown
  uint32_t line = 0;
};

class Jitdump {
 public:
  // Reads the jitdump open at `fd` (from offset 0, with pread). `what` names
  // it in errors. Fails only when the header is not a jitdump's or the file
  // cannot be read; damage after the header is reported in stats().
  static absl::StatusOr<Jitdump> Read(int fd, absl::string_view what,
                                      const JitdumpLimits& limits = {});
  // Parses bytes in memory (tests).
  static absl::StatusOr<Jitdump> Parse(absl::string_view bytes, const JitdumpLimits& limits = {});
  // The same timeline from code known otherwise, in any order (sorted here by
  // load time: where live code overlaps, the latest loaded wins, as in a
  // file). Empty or wrapping ranges are dropped; the limits apply.
  static Jitdump FromCode(std::vector<TimedJitCode> code, const JitdumpLimits& limits = {});

  // Set in a generation that names code logged only after the sample's time.
  static constexpr uint32_t kLoggedLater = 1u << 31;

  // The region live at `address` at `time_ns`, as a 1-based generation
  // number (0: none). A sample that precedes every load record covering its
  // address gets the earliest of them, flagged kLoggedLater: runtimes log code
  // after it ran when they replay (.NET's EnablePerfMap, a restarted jitdump),
  // so code can run before its record's time, but not before it was written;
  // a perf map that names the address at all is the better witness then.
  // (stable for the same file); 0 when none is.
  uint32_t Generation(uint64_t address, uint64_t time_ns) const;
  // The name and source line of `address` in generation `generation`.
  std::optional<JitdumpMatch> Lookup(uint32_t generation, uint64_t address) const;

  // Whether any region's name contains `part` (one scan of the names; they
  // are stored end to end, so a match across two names is possible but only
  // makes a caller look closer).
  bool AnyNameContains(absl::string_view part) const {
    return absl::string_view(names_).find(part) != absl::string_view::npos;
  }

  size_t region_count() const { return regions_.size(); }
  const JitdumpStats& stats() const { return stats_; }
  uint32_t header_pid() const { return header_pid_; }
  // One line per problem worth telling the user, naming the file as `what`.
  std::vector<std::string> Warnings(absl::string_view what) const;

 private:
  class Parser;
  struct Region {
    uint64_t start = 0;
    uint64_t end = 0;  // exclusive
    uint64_t load_time = 0;
    uint64_t end_time = UINT64_MAX;  // moved away at this time
    bool moved_in = false;           // created by a CODE_MOVE, not a CODE_LOAD
    uint32_t name_offset = 0;
    uint32_t name_length = 0;
    uint32_t lines_begin = 0;  // index range into lines_
    uint32_t lines_end = 0;
  };
  struct LineEntry {
    uint64_t address = 0;
    uint32_t line = 0;
    uint32_t file = 0;  // index into files_
  };
  // [start, next segment's start) is covered by the regions
  // cover_[cover_begin, cover_end), in load order.
  struct Segment {
    uint64_t start = 0;
    uint32_t cover_begin = 0;
    uint32_t cover_end = 0;
  };

  void Index();

  std::vector<Region> regions_;
  std::vector<LineEntry> lines_;
  std::vector<std::string> files_;
  std::string names_;
  std::vector<Segment> segments_;
  std::vector<uint32_t> cover_;
  JitdumpStats stats_;
  uint32_t header_pid_ = 0;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_JITDUMP_H_
