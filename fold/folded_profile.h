// Folded stacks: each distinct stack as frame names root first, with a count
// (or two, for differential graphs). What the folded writer prints and what the
// renderer draws.
//
// Frame names are interned: a stack is a list of ids into the profile's name
// table. A deep profile repeats a few thousand names millions of times; ids
// make merging, sorting and building the flame graph's tree integer work,
// with no string copied per frame.
#ifndef PROFCPU_FOLD_FOLDED_PROFILE_H_
#define PROFCPU_FOLD_FOLDED_PROFILE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace profcpu::fold {

struct FoldedStack {
  std::vector<uint32_t> frames;  // root first, ids into FoldedProfile::names(); [0] is the comm
  // The stack's width. In a differential profile, the second column (the
  // profile after a change), as flamegraph.pl draws it.
  uint64_t count = 0;
  // Differential profiles only: the first column (the profile before).
  uint64_t baseline = 0;
};

class FoldedProfile {
 public:
  std::vector<FoldedStack> stacks;  // sorted by their joined text, as stackcollapse sorts
  std::string count_name = "samples";
  // Two count columns: `baseline` then `count` (difffolded.pl's output).
  bool differential = false;
  // What one unit of `count` stands for: 1, or 10^-d when counts were read
  // with d decimals and scaled to integers (flamegraph.pl accepts "1.5").
  double count_unit = 1;

  // The id of `name`, added to the table if new.
  uint32_t InternName(absl::string_view name);
  const std::string& name(uint32_t id) const { return names_[id]; }
  const std::vector<std::string>& names() const { return names_; }

  // Appends a stack of these frames (root first).
  FoldedStack& AddStack(absl::Span<const absl::string_view> frames, uint64_t count,
                        uint64_t baseline = 0);
  FoldedStack& AddStack(std::initializer_list<absl::string_view> frames, uint64_t count,
                        uint64_t baseline = 0) {
    return AddStack(absl::MakeConstSpan(frames.begin(), frames.size()), count, baseline);
  }
  // The stack's frames as text, root first.
  std::vector<absl::string_view> FrameNames(const FoldedStack& stack) const;
  std::string JoinedText(const FoldedStack& stack) const;  // "a;b;c"

 private:
  std::vector<std::string> names_;
  absl::flat_hash_map<std::string, uint32_t> name_ids_;
};

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_FOLDED_PROFILE_H_
