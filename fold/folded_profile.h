// Folded stacks: each distinct stack as frame names root first, with a count
// (or two, for differential graphs). What the folded writer prints and what the
// renderer draws.
#ifndef PROFCPU_FOLD_FOLDED_PROFILE_H_
#define PROFCPU_FOLD_FOLDED_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace profcpu::fold {

struct FoldedStack {
  std::vector<std::string> frames;  // root first; frames[0] is the comm
  // The stack's width. In a differential profile, the second column (the
  // profile after a change), as flamegraph.pl draws it.
  uint64_t count = 0;
  // Differential profiles only: the first column (the profile before).
  uint64_t baseline = 0;
};

struct FoldedProfile {
  std::vector<FoldedStack> stacks;  // sorted by their joined text, as stackcollapse sorts
  std::string count_name = "samples";
  // Two count columns: `baseline` then `count` (difffolded.pl's output).
  bool differential = false;
  // What one unit of `count` stands for: 1, or 10^-d when counts were read
  // with d decimals and scaled to integers (flamegraph.pl accepts "1.5").
  double count_unit = 1;
};

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_FOLDED_PROFILE_H_
