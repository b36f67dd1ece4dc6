// The per-run output folder, DIR/HH-MM-SS_YYYY-MM-DD/ (the layout the
// original profcpu used), created before collection starts so a bad -out is
// reported at once, not after a 30 s profile.
#ifndef PROFCPU_SCRIPTS_CLI_OUTPUT_DIR_H_
#define PROFCPU_SCRIPTS_CLI_OUTPUT_DIR_H_

#include <ctime>
#include <string>

#include "absl/status/statusor.h"

namespace profcpu::cli {

// Creates `parent` (and its parents) if needed, then a new run folder in it
// named after `when` (local time); "-2", "-3"... if that name is taken.
// Returns its path. Errors say which directory could not be made and why.
absl::StatusOr<std::string> CreateRunDirectory(const std::string& parent, std::time_t when);

// mkdir -p.
absl::Status MakeDirectories(const std::string& path);

// The names of the files a run writes into its folder.
inline constexpr char kRecordingFile[] = "recording.zst";
inline constexpr char kSymbolsFile[] = "symbols.bin";
inline constexpr char kFoldedFile[] = "folded_stacks.out";
inline constexpr char kPerfScriptFile[] = "perf_script.out";
inline constexpr char kFlameGraphFile[] = "flamegraph.svg";
inline constexpr char kMetadataFile[] = "metadata.json";
inline constexpr char kLogFile[] = "profcpu.log";
inline constexpr char kArchiveFile[] = "prof.tar.gz";
inline constexpr char kJitDir[] = "jit";
// -callgraph dwarf: the user stacks unwound after collection
// (symbolize/unwound_stacks.h), replayed by postprocess.
inline constexpr char kUnwoundStacksFile[] = "unwound_stacks.bin";

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_OUTPUT_DIR_H_
