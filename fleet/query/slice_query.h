// A slice from every shard: SliceTotalsSql (and SliceBucketsSql) on each, merged (slice_merge.h), then the
// kept stacks' names asked of the shards that reported them, as a Profile
// (slice_profile.h). The shards are reached through a function, so the steps
// run against canned answers in tests and against ClickHouse over HTTP in
// `profcpu query`. A shard that fails fails the query, with its one-line
// error: a slice with a shard missing would be wrong without saying so.
#ifndef PROFCPU_FLEET_QUERY_SLICE_QUERY_H_
#define PROFCPU_FLEET_QUERY_SLICE_QUERY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fleet/query/slice_merge.h"
#include "fleet/query/slice_sql.h"

namespace profcpu::fleet {

// Runs `sql` on shard `shard` (an index into -store's list); the answer's body.
using ShardQueryFn = std::function<absl::StatusOr<std::string>(size_t shard, const std::string& sql)>;

struct Shards {
  size_t count = 0;
  ShardQueryFn query;
};

// The merged slice (at most spec.max_stacks stacks besides "other").
absl::StatusOr<MergedSlice> QuerySlice(const Shards& shards, const SliceSpec& spec);

// Adds the names of `slice`'s stacks to `names`.
absl::Status QueryStackNames(const Shards& shards, const MergedSlice& slice, StackNames* names);

struct LabelValue {
  std::string value;
  uint64_t count = 0;
};
// The top `max_values` values of `label` over the slice, by count over all
// shards (each shard's top `max_values`, summed).
absl::StatusOr<std::vector<LabelValue>> QueryLabelValues(const Shards& shards,
                                                         const SliceSource& source,
                                                         const std::string& where_sql,
                                                         const std::string& label,
                                                         uint64_t max_values);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_QUERY_SLICE_QUERY_H_
