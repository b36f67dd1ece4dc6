// Builds a Profile from perf script text: perf's own (any field selection
// that keeps comm, the ids, the callchain with ip/sym/dso) or profcpu's
// writer's. Lets `postprocess` render a perf_script.out recorded elsewhere.
//
// Lines are classified as stackcollapse-perf.pl classifies them
// (perf_script_reader.h). Each distinct frame text becomes one location of
// kind kImported, named in the Profile's symbol table; perf 6.1's
// "(inlined)" lines join the next line with the same address as its inlined
// frames, so writing the Profile again reproduces the text. A blank symbol
// is taken as unnamed, so it folds as "[module]" (the script names it " ").
#ifndef PROFCPU_FOLD_PERF_SCRIPT_IMPORT_H_
#define PROFCPU_FOLD_PERF_SCRIPT_IMPORT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "fold/line_reader.h"
#include "fold/profile.h"

namespace profcpu::fold {

struct PerfScriptImportStats {
  uint64_t samples = 0;
  uint64_t unrecognized_lines = 0;  // neither header, frame, comment nor blank
  uint64_t orphan_frames = 0;       // frame lines outside any sample
  uint64_t overlong_lines = 0;      // over the reader's limit, skipped
};

struct ImportedProfile {
  Profile profile;
  PerfScriptImportStats stats;
};

// Reads every line of `reader`. Fails only if reading fails.
absl::StatusOr<ImportedProfile> ImportPerfScript(LineReader& reader);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PERF_SCRIPT_IMPORT_H_
