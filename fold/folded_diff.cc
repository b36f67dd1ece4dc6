#include "fold/folded_diff.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "fold/folded_reader.h"

namespace profcpu::fold {
namespace {

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return b > kMaxFoldedCount - a ? kMaxFoldedCount : a + b; }

// s/0x[0-9a-fA-F]+/0x.../g
std::string StripHex(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '0' && i + 2 < text.size() && text[i + 1] == 'x' &&
        absl::ascii_isxdigit(text[i + 2])) {
      out.append("0x...");
      i += 2;
      while (i < text.size() && absl::ascii_isxdigit(text[i])) ++i;
      continue;
    }
    out.push_back(text[i++]);
  }
  return out;
}

// Decimal places of a profile's unit (count_unit is 10^-d).
int DecimalsOf(const FoldedProfile& profile) {
  if (!(profile.count_unit > 0) || profile.count_unit >= 1) return 0;
  return std::clamp(static_cast<int>(std::lround(-std::log10(profile.count_unit))), 0,
                    kMaxCountDecimals);
}

uint64_t ToDecimals(uint64_t count, int from, int to) {
  FoldedCount scaled;
  scaled.digits = count;
  scaled.decimals = from;
  return ScaleCount(scaled, to);
}

}  // namespace

FoldedProfile DiffFolded(const FoldedProfile& before, const FoldedProfile& after,
                         const FoldedDiffOptions& options) {
  const int before_decimals = DecimalsOf(before);
  const int after_decimals = DecimalsOf(after);
  const int decimals = std::max(before_decimals, after_decimals);

  // Stack text -> (before, after), summed as difffolded.pl sums duplicates.
  absl::flat_hash_map<std::string, std::pair<uint64_t, uint64_t>> counts;
  uint64_t total_before = 0, total_after = 0;
  auto add = [&](const FoldedProfile& profile, int from, bool is_after) {
    for (const FoldedStack& stack : profile.stacks) {
      std::string text = profile.JoinedText(stack);
      if (options.strip_hex) text = StripHex(text);
      const uint64_t count = ToDecimals(stack.count, from, decimals);
      auto& slot = counts[std::move(text)];
      if (is_after) {
        slot.second = SaturatingAdd(slot.second, count);
        total_after = SaturatingAdd(total_after, count);
      } else {
        slot.first = SaturatingAdd(slot.first, count);
        total_before = SaturatingAdd(total_before, count);
      }
    }
  };
  add(before, before_decimals, false);
  add(after, after_decimals, true);

  std::vector<std::pair<std::string, std::pair<uint64_t, uint64_t>>> sorted(counts.begin(),
                                                                             counts.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  FoldedProfile diff;
  diff.differential = true;
  diff.count_name = after.count_name;
  diff.count_unit = std::pow(10.0, -decimals);
  diff.stacks.reserve(sorted.size());
  const bool normalize = options.normalize && total_before != total_after && total_before != 0;
  for (auto& [text, pair] : sorted) {
    // Split as flamegraph.pl will: the joined text is what both tools see.
    std::vector<absl::string_view> frames;
    SplitFoldedFrames(text, &frames);
    FoldedStack& stack = diff.AddStack(frames, 0);
    stack.baseline = pair.first;
    if (normalize) {
      // Perl's int($count * $total2 / $total1), in doubles as Perl computes it.
      const double scaled = static_cast<double>(pair.first) * static_cast<double>(total_after) /
                            static_cast<double>(total_before);
      stack.baseline = scaled >= 1.8e19 ? kMaxFoldedCount : static_cast<uint64_t>(scaled);
    }
    stack.count = pair.second;
  }
  return diff;
}

}  // namespace profcpu::fold
