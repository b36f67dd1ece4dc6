// The per-run output folder, DIR/HH-MM-SS_YYYY-MM-DD/ (the layout the
// original profcpu used), created before collection starts so a bad -out is
// reported at once, not after a 30 s profile.
#ifndef PROFCPU_RECORDING_RUN_DIRECTORY_H_
#define PROFCPU_RECORDING_RUN_DIRECTORY_H_

#include <ctime>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace profcpu::recording {

// Creates `parent` (and its parents) if needed, then a new run folder in it
// named after `when` (local time); "-2", "-3"... if that name is taken.
// Returns its path. Errors say which directory could not be made and why.
absl::StatusOr<std::string> CreateRunDirectory(const std::string& parent, std::time_t when);

// mkdir -p.
absl::Status MakeDirectories(const std::string& path);

// `path` and those of its parents that do not exist yet, deepest first: what
// creating a run folder under `path` will make, so a run that fails before
// sampling can take it back (RemoveEmptyDirectories) and leave nothing behind.
std::vector<std::string> MissingDirectories(const std::string& path);
// rmdir of each, in order; a directory that is not empty stays.
void RemoveEmptyDirectories(const std::vector<std::string>& dirs);

// Takes back a run folder whose collection never started: its recording and
// log, its empty dotnet/ folder, then the folder itself (if now empty).
void RemoveUnstartedRun(const std::string& dir);

}  // namespace profcpu::recording

#endif  // PROFCPU_RECORDING_RUN_DIRECTORY_H_
