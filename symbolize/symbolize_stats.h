// What naming a run's locations found, for metadata.json and the log.
#ifndef PROFCPU_SYMBOLIZE_SYMBOLIZE_STATS_H_
#define PROFCPU_SYMBOLIZE_SYMBOLIZE_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace profcpu::symbolize {

// Counts for metadata.json and the log. requested, resolved and unknown
// describe every distinct location asked about, however it was named (looked
// up now, or already in the table: the snapshot, the replay's own names), so
// a postprocess that reuses the snapshot reports what the collection did.
struct SymbolizeStats {
  uint64_t requested = 0;
  uint64_t resolved = 0;
  uint64_t unknown = 0;
  uint64_t looked_up = 0;         // of requested, the ones looked up in this run
  uint64_t retried = 0;           // unknown native locations looked up again
  uint64_t with_debug_info = 0;   // modules named with DWARF or a debug file
  std::vector<std::string> warnings;  // one line each, e.g. "kernel symbols hidden: ..."
  std::vector<std::string> notes;     // for the log: which debug files were used
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_SYMBOLIZE_STATS_H_
