#include "fold/folded_reader.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "fold/frame_name.h"

namespace profcpu::fold {
namespace {

uint64_t SaturatingMultiplyAdd(uint64_t value, uint64_t multiplier, uint64_t add) {
  uint64_t product, sum;
  if (__builtin_mul_overflow(value, multiplier, &product)) return kMaxFoldedCount;
  if (__builtin_add_overflow(product, add, &sum)) return kMaxFoldedCount;
  return sum;
}

// Parses `text` as /^\d+(?:\.\d*)?$/.
bool ParseCount(absl::string_view text, FoldedCount* count) {
  *count = FoldedCount();
  size_t i = 0;
  while (i < text.size() && IsPerlDigit(text[i])) {
    count->digits = SaturatingMultiplyAdd(count->digits, 10, text[i] - '0');
    ++i;
  }
  if (i == 0) return false;
  if (i == text.size()) return true;
  if (text[i] != '.') return false;
  for (++i; i < text.size(); ++i) {
    if (!IsPerlDigit(text[i])) return false;
    if (count->decimals < kMaxCountDecimals) {
      count->digits = SaturatingMultiplyAdd(count->digits, 10, text[i] - '0');
      ++count->decimals;
    }
  }
  return true;
}

// /^(.*)\s+?(\d+(?:\.\d*)?)$/: the greedy (.*) leaves the count after the
// last whitespace byte, and the one whitespace byte before it is dropped.
bool SplitTrailingCount(absl::string_view text, absl::string_view* rest, FoldedCount* count) {
  size_t space = text.size();
  while (space > 0 && !IsPerlSpace(text[space - 1])) --space;
  if (space == 0) return false;
  if (!ParseCount(text.substr(space), count)) return false;
  *rest = text.substr(0, space - 1);
  return true;
}

}  // namespace

uint64_t ScaleCount(FoldedCount count, int decimals) {
  uint64_t value = count.digits;
  for (int i = count.decimals; i < decimals; ++i) value = SaturatingMultiplyAdd(value, 10, 0);
  return value;
}

bool ParseFoldedLine(absl::string_view line, FoldedLine* parsed) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  *parsed = FoldedLine();
  if (!SplitTrailingCount(line, &parsed->stack, &parsed->count)) return false;
  absl::string_view stack;
  if (SplitTrailingCount(parsed->stack, &stack, &parsed->baseline)) {
    parsed->differential = true;
    parsed->stack = stack;
  }
  return true;
}

void SplitFoldedFrames(absl::string_view stack, std::vector<absl::string_view>* frames) {
  frames->clear();
  // Perl's split drops trailing empty fields (and so yields nothing for "").
  while (!stack.empty() && stack.back() == ';') stack.remove_suffix(1);
  if (stack.empty()) return;
  size_t start = 0;
  for (;;) {
    const size_t semicolon = stack.find(';', start);
    if (semicolon == absl::string_view::npos) {
      frames->push_back(stack.substr(start));
      return;
    }
    frames->push_back(stack.substr(start, semicolon - start));
    start = semicolon + 1;
  }
}

absl::StatusOr<FoldedProfile> ReadFoldedProfile(LineReader& reader, FoldedReadStats* stats) {
  FoldedReadStats local;
  if (stats == nullptr) stats = &local;
  *stats = FoldedReadStats();
  FoldedProfile profile;
  std::vector<FoldedCount> counts, baselines;
  std::vector<absl::string_view> frames;
  int decimals = 0;
  absl::string_view line;
  FoldedLine parsed;
  while (reader.Next(&line)) {
    ++stats->lines;
    if (!ParseFoldedLine(line, &parsed)) {
      ++stats->ignored_lines;
      continue;
    }
    SplitFoldedFrames(parsed.stack, &frames);
    profile.AddStack(frames, 0);
    counts.push_back(parsed.count);
    // A one-count line in a differential file is taken as unchanged.
    baselines.push_back(parsed.differential ? parsed.baseline : parsed.count);
    profile.differential = profile.differential || parsed.differential;
    decimals = std::max({decimals, parsed.count.decimals, parsed.baseline.decimals});
  }
  stats->overlong_lines = reader.overlong_lines();
  if (!reader.status().ok()) return reader.status();
  for (size_t i = 0; i < profile.stacks.size(); ++i) {
    profile.stacks[i].count = ScaleCount(counts[i], decimals);
    if (profile.differential) profile.stacks[i].baseline = ScaleCount(baselines[i], decimals);
  }
  profile.count_unit = std::pow(10.0, -decimals);
  return profile;
}

FoldedProfile ParseFoldedText(absl::string_view text, FoldedReadStats* stats) {
  LineReader reader = LineReader::FromString(text);
  // Reading a string cannot fail.
  return *ReadFoldedProfile(reader, stats);
}

}  // namespace profcpu::fold
