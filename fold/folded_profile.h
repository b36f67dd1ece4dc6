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
  uint64_t count = 0;
};

struct FoldedProfile {
  std::vector<FoldedStack> stacks;  // sorted by their joined text, as stackcollapse sorts
  std::string count_name = "samples";
};

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_FOLDED_PROFILE_H_
