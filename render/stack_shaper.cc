#include "render/stack_shaper.h"

#include <algorithm>

namespace profcpu::render {

StackShaper::StackShaper(const FlameGraphOptions& options)
    : reverse_(options.reverse), mark_wakers_(options.palette == Palette::kChain) {}

absl::Span<const absl::string_view> StackShaper::Shape(
    absl::Span<const absl::string_view> frames) {
  if (!active()) return frames;
  shaped_.assign(frames.begin(), frames.end());
  if (reverse_) std::reverse(shaped_.begin(), shaped_.end());
  if (mark_wakers_) {
    // flamegraph.pl splits the stack at ";--;" (a "--" frame with frames on
    // both sides) and appends "_[w]" to every frame of the parts after the
    // first. Unlike flamegraph.pl, a stack without a separator does not gain
    // a trailing "--" frame.
    if (marked_.size() < shaped_.size()) marked_.resize(shaped_.size());
    bool after_separator = false;
    for (size_t i = 0; i < shaped_.size(); ++i) {
      const bool separator = shaped_[i] == "--" && i > 0 && i + 1 < shaped_.size();
      if (separator) {
        after_separator = true;
      } else if (after_separator) {
        marked_[i].assign(shaped_[i].data(), shaped_[i].size());
        marked_[i].append("_[w]");
        shaped_[i] = marked_[i];
      }
    }
  }
  return shaped_;
}

}  // namespace profcpu::render
