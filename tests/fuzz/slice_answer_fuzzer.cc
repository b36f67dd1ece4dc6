// The answers `profcpu query` reads from each shard (fleet/query/): the
// slice's rows, then the stacks' frame lists and the frames' names. Whatever
// a shard sends, the merge must stay total and exact: the slice's total is
// the sum of the counts it accepted whatever -max-stacks kept, and the
// folded stacks drawn from it sum to that total.
//
// Input: up to three answers separated by a 0 byte (slice, stacks, frames).
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
  std::vector<absl::string_view> parts = absl::StrSplit(text, absl::MaxSplits('\0', 2));
  parts.resize(3);

  fleet::SliceMerger merger;
  uint64_t accepted = 0;
  for (size_t shard = 0; shard < 2; ++shard) {
    if (!merger.AddShardAnswer(shard, "fuzz", parts[0]).ok()) continue;
    auto rows = fleet::ParseShardTsv(parts[0], 6);
    Check(rows.ok(), "an answer the merge accepted does not parse");
    for (const fleet::TsvRow& row : *rows) accepted += *fleet::ParseUInt64Field(row[3], "count");
  }
  fleet::MergedSlice slice = std::move(merger).Finish(3);
  Check(slice.stacks.size() <= 3, "more stacks than -max-stacks");
  uint64_t sum = slice.other.count;
  for (const fleet::MergedStack& stack : slice.stacks) sum += stack.count;
  Check(sum == slice.total, "the stacks and other do not add up to the total");
  Check(slice.total == accepted, "the total is not the sum of the counts accepted");

  fleet::StackNames names;
  (void)names.AddStacksAnswer("fuzz", parts[1]);
  (void)names.AddFramesAnswer("fuzz", parts[2]);
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
