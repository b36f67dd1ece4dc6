// Merges the shards' answers to SliceTotalsSql and SliceBucketsSql
// (slice_sql.h) into one slice: counts summed by stack id, the global top N kept and the rest folded into one
// "other" stack, so the total is exact whatever N is. Then the names of those
// stacks from StacksSql and FramesSql, asked of the shards that reported
// them. Every answer is hostile input (shard_tsv.h): an error names the shard.
#ifndef PROFCPU_FLEET_QUERY_SLICE_MERGE_H_
#define PROFCPU_FLEET_QUERY_SLICE_MERGE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace profcpu::fleet {

inline constexpr size_t kMaxStackDepth = 4096;

struct MergedStack {
  uint64_t id = 0;     // 0 for "other"
  uint64_t count = 0;  // samples over the slice
  // The program that ran it: the comm label when every sample of the stack
  // had the same, else empty (several).
  std::string comm;
  bool several_comms = false;
  std::map<int64_t, uint64_t> buckets;  // bucket start (unix s) -> samples
};

struct MergedSlice {
  std::vector<MergedStack> stacks;  // the top N, by count (then id)
  MergedStack other;                // every other stack, as one
  uint64_t total = 0;               // stacks + other
  // Which shards (indexes in the order answers were added) reported each
  // kept stack: only they are asked for its names.
  absl::flat_hash_map<uint64_t, std::vector<size_t>> shards_of_stack;
};

// One shard's answers to the slice's round 2.
struct ShardSliceAnswer {
  absl::string_view totals;  // SliceTotalsSql's
  // SliceBucketsSql's, for a timeline: then the counts are these (the two
  // queries run side by side, and a window stored between them must not
  // count in one and not the other), the totals give the comm range only.
  // Without it every count is in bucket 0.
  std::optional<absl::string_view> buckets;
};

class SliceMerger {
 public:
  // One shard's answers (its index in -store's list, for the names later),
  // taken whole or, on an error, not at all.
  absl::Status AddShardAnswer(size_t shard, absl::string_view url, const ShardSliceAnswer& answer);
  // The slice with at most `max_stacks` stacks besides "other".
  MergedSlice Finish(uint64_t max_stacks) &&;

 private:
  struct Accumulated {
    MergedStack stack;
    bool has_comm = false;
    std::string comm_min, comm_max;
    std::vector<size_t> shards;
  };
  static void Add(Accumulated* acc, int64_t bucket, uint64_t count);
  static void AddComms(Accumulated* acc, const std::string& comm_min, const std::string& comm_max);
  static MergedStack Done(Accumulated acc);
  Accumulated* AccumulatedOf(size_t shard, bool top, uint64_t id);

  absl::flat_hash_map<uint64_t, Accumulated> stacks_;
  Accumulated other_;
  uint64_t total_ = 0;  // of every answer added
};

struct FrameName {
  std::string name;
  std::string module;
};

// The kept stacks' frames (root first) and the frames' names, from every
// shard asked.
class StackNames {
 public:
  absl::Status AddStacksAnswer(absl::string_view url, absl::string_view tsv);
  absl::Status AddFramesAnswer(absl::string_view url, absl::string_view tsv);

  // nullptr when no shard had the stack (its samples came before its
  // stacks_local row was kept, or the row was lost).
  const std::vector<uint64_t>* Frames(uint64_t stack_id) const;
  const FrameName* Frame(uint64_t frame_id) const;

 private:
  absl::flat_hash_map<uint64_t, std::vector<uint64_t>> stacks_;
  absl::flat_hash_map<uint64_t, FrameName> frames_;
};

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_QUERY_SLICE_MERGE_H_
