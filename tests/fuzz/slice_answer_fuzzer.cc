// The answers `profcpu query` reads from each shard (fleet/query/): the
// slice's rows, then the stacks' frame lists and the frames' names. Whatever
// a shard sends, the merge must stay total and exact: the slice's total is
// the sum of the counts it accepted whatever -max-stacks kept, and the
// folded stacks drawn from it sum to that total.
//
// Input: up to four answers separated by a 0 byte (the slice's totals, its
// buckets, stacks, frames). Shard 0 merges the totals alone (no timeline),
// shard 1 both (a timeline, whose counts are the buckets').
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "fleet/query/shard_tsv.h"
#include "fleet/query/slice_merge.h"
#include "fleet/query/slice_profile.h"
#include "fold/folded_writer.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace fleet = profcpu::fleet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text = profcpu::fuzz::AsText(data, size);
  std::vector<absl::string_view> parts = absl::StrSplit(text, absl::MaxSplits('\0', 3));
  parts.resize(4);

  fleet::SliceMerger merger;
  uint64_t accepted = 0;
  if (merger.AddShardAnswer(0, "fuzz", {parts[0], std::nullopt}).ok()) {
    auto rows = fleet::ParseShardTsv(parts[0], 5);
    Check(rows.ok(), "a totals answer the merge accepted does not parse");
    for (const fleet::TsvRow& row : *rows) accepted += *fleet::ParseUInt64Field(row[2], "count");
  }
  if (merger.AddShardAnswer(1, "fuzz", {parts[0], parts[1]}).ok()) {
    auto rows = fleet::ParseShardTsv(parts[1], 3);
    Check(rows.ok(), "a buckets answer the merge accepted does not parse");
    for (const fleet::TsvRow& row : *rows) {
      const auto counts = fleet::ParseUInt64Array(row[2], 1 << 22);
      Check(counts.ok(), "a buckets answer the merge accepted has a bad array");
      for (uint64_t count : *counts) accepted += count;
    }
  }
  fleet::MergedSlice slice = std::move(merger).Finish(3);
  Check(slice.stacks.size() <= 3, "more stacks than -max-stacks");
  uint64_t sum = slice.other.count;
  for (const fleet::MergedStack& stack : slice.stacks) sum += stack.count;
  Check(sum == slice.total, "the stacks and other do not add up to the total");
  Check(slice.total == accepted, "the total is not the sum of the counts accepted");

  fleet::StackNames names;
  (void)names.AddStacksAnswer("fuzz", parts[2]);
  (void)names.AddFramesAnswer("fuzz", parts[3]);
  fleet::SliceProfileStats stats;
  profcpu::fold::Profile profile = fleet::BuildSliceProfile({&slice}, names, &stats);
  profcpu::fold::FoldOptions options;
  options.weight_by_period = true;
  profcpu::fold::FoldedProfile folded = profcpu::fold::FoldProfile(profile, options);
  uint64_t drawn = 0;
  for (const profcpu::fold::FoldedStack& stack : folded.stacks) drawn += stack.count;
  // A period of 0 counts 1 when folding (stackcollapse's rule): rows of
  // count 0 may draw as 1 each.
  Check(drawn >= slice.total, "the folded stacks lost samples");
  return 0;
}
