#include "fold/folded_profile.h"

namespace profcpu::fold {

uint32_t FoldedProfile::InternName(absl::string_view name) {
  auto [it, inserted] = name_ids_.try_emplace(name, static_cast<uint32_t>(names_.size()));
  if (inserted) names_.emplace_back(name);
  return it->second;
}

FoldedStack& FoldedProfile::AddStack(absl::Span<const absl::string_view> frames, uint64_t count,
                                     uint64_t baseline) {
  FoldedStack& stack = stacks.emplace_back();
  stack.frames.reserve(frames.size());
  for (absl::string_view frame : frames) stack.frames.push_back(InternName(frame));
  stack.count = count;
  stack.baseline = baseline;
  return stack;
}

std::vector<absl::string_view> FoldedProfile::FrameNames(const FoldedStack& stack) const {
  std::vector<absl::string_view> frames;
  frames.reserve(stack.frames.size());
  for (uint32_t id : stack.frames) frames.push_back(names_[id]);
  return frames;
}

std::string FoldedProfile::JoinedText(const FoldedStack& stack) const {
  std::string text;
  for (size_t i = 0; i < stack.frames.size(); ++i) {
    if (i > 0) text.push_back(';');
    text.append(names_[stack.frames[i]]);
  }
  return text;
}

}  // namespace profcpu::fold
