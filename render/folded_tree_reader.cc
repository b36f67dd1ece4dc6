#include "render/folded_tree_reader.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "fold/folded_profile.h"
#include "render/flamegraph.h"

namespace profcpu::render {

FoldedTreeReader::FoldedTreeReader(const FlameGraphOptions& options)
    : shaper_(options), builder_(TreeOptionsFor(options, /*differential=*/false)) {}

absl::Status FoldedTreeReader::Read(fold::LineReader& reader) {
  absl::string_view line;
  fold::FoldedLine parsed;
  while (reader.Next(&line)) {
    ++stats_.lines;
    if (!fold::ParseFoldedLine(line, &parsed)) {
      ++stats_.ignored_lines;
      continue;
    }
    Add(parsed);
  }
  stats_.overlong_lines += reader.overlong_lines();
  return reader.status();
}

double FoldedTreeReader::count_unit() const { return std::pow(10.0, -decimals_); }

void FoldedTreeReader::Add(const fold::FoldedLine& parsed) {
  const int decimals =
      std::max(parsed.count.decimals, parsed.differential ? parsed.baseline.decimals : 0);
  if (decimals > decimals_) {
    // Counts so far were integers in the old unit: scale them to the new one.
    uint64_t multiplier = 1;
    for (int i = decimals_; i < decimals; ++i) multiplier *= 10;
    builder_.ScaleCounts(multiplier);
    total_units_ *= static_cast<double>(multiplier);
    decimals_ = decimals;
  }
  const uint64_t count = fold::ScaleCount(parsed.count, decimals_);
  int64_t delta = 0;
  if (parsed.differential) {
    builder_.MakeDifferential();
    fold::FoldedStack stack;
    stack.count = count;
    stack.baseline = fold::ScaleCount(parsed.baseline, decimals_);
    delta = FoldedDelta(stack);
  }
  total_units_ += static_cast<double>(count);
  fold::SplitFoldedFrames(parsed.stack, &frames_);
  builder_.Add(shaper_.Shape(frames_), count, delta);
}

}  // namespace profcpu::render
