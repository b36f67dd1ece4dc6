// difffolded.pl (brendangregg/FlameGraph): pairs two folded profiles stack by
// stack into a differential profile, "stack before after", for a
// differential flame graph. Stacks found in only one profile count 0 in the
// other.
#ifndef PROFCPU_FOLD_FOLDED_DIFF_H_
#define PROFCPU_FOLD_FOLDED_DIFF_H_

#include "fold/folded_profile.h"

namespace profcpu::fold {

struct FoldedDiffOptions {
  // -n: scale the first profile's counts to the second's total,
  // int(before * total_after / total_before), so the colours show changes
  // in shape rather than in how long each profile ran.
  bool normalize = false;
  // -s: replace every hex number "0x..." in names with "0x...", so frames
  // that differ only by address pair up.
  bool strip_hex = false;
};

// A differential profile (FoldedProfile::differential) of `before` and
// `after`: one stack per distinct stack text of either, sorted by text.
// Counts keep the finer unit of the two inputs.
FoldedProfile DiffFolded(const FoldedProfile& before, const FoldedProfile& after,
                         const FoldedDiffOptions& options = {});

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_FOLDED_DIFF_H_
