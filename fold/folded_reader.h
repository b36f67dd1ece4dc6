// Reading folded stacks ("frame;frame;... count", optionally a second count)
// as flamegraph.pl reads them: each line must end in whitespace and a count,
// /^(.*)\s+?(\d+(?:\.\d*)?)$/, and a second such count before it makes the
// line differential (difffolded.pl's output: before, then after). Frames are
// Perl's split(";"): empty fields kept, trailing empty fields dropped.
//
// Counts may have decimals ("1.5"); they are kept as integers scaled by a
// power of ten (FoldedProfile::count_unit), up to kMaxCountDecimals decimals
// (further digits are dropped). Digits beyond 2^64-1 saturate. A trailing
// '\r' is ignored (flamegraph.pl would ignore the whole line).
#ifndef PROFCPU_FOLD_FOLDED_READER_H_
#define PROFCPU_FOLD_FOLDED_READER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fold/folded_profile.h"
#include "fold/line_reader.h"

namespace profcpu::fold {

inline constexpr int kMaxCountDecimals = 6;
// Where counts saturate.
inline constexpr uint64_t kMaxFoldedCount = UINT64_MAX;

// A count as written: its digits without the point, and how many of them
// follow the point.
struct FoldedCount {
  uint64_t digits = 0;
  int decimals = 0;
};

// `count` with `decimals` decimals (at least count.decimals): its digits times
// 10^(decimals - count.decimals), saturating.
uint64_t ScaleCount(FoldedCount count, int decimals);

struct FoldedLine {
  absl::string_view stack;  // frames joined by ';'; may be empty
  FoldedCount count;        // the last column: the stack's width
  bool differential = false;
  FoldedCount baseline;     // the column before it, if differential
};

// Parses one line (without '\n'); false if flamegraph.pl would ignore it.
bool ParseFoldedLine(absl::string_view line, FoldedLine* parsed);

// Perl's split(";", stack) into *frames (cleared first).
void SplitFoldedFrames(absl::string_view stack, std::vector<absl::string_view>* frames);

struct FoldedReadStats {
  uint64_t lines = 0;
  uint64_t ignored_lines = 0;   // not "stack count" (flamegraph.pl: "Ignored N lines")
  uint64_t overlong_lines = 0;  // over the reader's limit, skipped
};

// Reads every line of `reader` into a profile, in input order (duplicate
// stacks stay separate lines; the renderer merges them). Fails only on a
// read error.
absl::StatusOr<FoldedProfile> ReadFoldedProfile(LineReader& reader,
                                                FoldedReadStats* stats = nullptr);
FoldedProfile ParseFoldedText(absl::string_view text, FoldedReadStats* stats = nullptr);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_FOLDED_READER_H_
