// The SQL a query sends to each shard. Every shard holds the stacks and
// frames of its own samples (the agent sends a node's rows to one shard), so
// a slice is aggregated and named on each shard's local tables and merged by
// the client (slice_merge.h). Never `(SELECT ... FROM <Distributed> GROUP BY
// stack) JOIN <local table>`: that joins only the initiating shard's stacks,
// silently (issue 27's trap).
//
// Written for ClickHouse 18.16 and later: no CTE, no query parameters, no
// toStartOfInterval (buckets are intDiv(toUInt32(time), step) * step); every
// value from the user is an escaped literal (label_filter.h).
#ifndef PROFCPU_FLEET_QUERY_SLICE_SQL_H_
#define PROFCPU_FLEET_QUERY_SLICE_SQL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "fleet/query/label_filter.h"
#include "fleet/query/time_range.h"

namespace profcpu::fleet {

// Which table a slice reads: raw samples (one row per second, labels and
// stack) or the hourly roll-up (samples_hourly_local).
struct SliceSource {
  bool hourly = false;
  // The range as read: the roll-up widens it to whole hours.
  TimeRange range;
};

// The rule: the roll-up when any of the range is older than the raw data
// kept (`raw_keep`, the -keep of `profcpu fleet retention`: older raw
// partitions are gone, the roll-up still has them), or when the range is
// longer than `raw_max` (default 2 days: raw rows grow with seconds x labels
// x stacks, up to 3,600 times the roll-up's, and a long slice must stay
// within seconds; 24 h, the benchmark's long slice, still reads raw rows and
// keeps second-precise bounds).
// `range` widened to whole hours (the roll-up's rows).
TimeRange WholeHours(const TimeRange& range);

SliceSource ChooseSliceSource(const TimeRange& range, absl::Time now, absl::Duration raw_keep,
                              absl::Duration raw_max = absl::Hours(48));

// The timeline's bucket: the smallest of 1 s, 2 s, 5 s, ..., 1 h, ..., 1 d,
// 7 d that cuts `range` into at most `max_buckets` (~2,000: a heatmap's
// width in columns); at least an hour on the roll-up.
int64_t ChooseBucketSeconds(const TimeRange& range, bool hourly, int64_t max_buckets = 2000);

// The most stacks a slice keeps by name: their ids go into the SQL text,
// which ClickHouse caps (max_query_size, 256 KiB by default; 10,000 ids take
// ~200 KB).
inline constexpr uint64_t kMaxStacksLimit = 10000;

struct SliceSpec {
  SliceSource source;
  std::string where_sql = "1";  // LabelFilter::Sql()
  uint64_t max_stacks = 2000;   // the top stacks by count; the rest count as "other"
  int64_t bucket_seconds = 0;   // 0: one bucket (no timeline)
};

// A slice takes two rounds. First each shard's top stacks: columns
// stack_id, count; at most spec.max_stacks rows. The client sums them over
// the shards and picks the top max_stacks ids (a stack outside every
// shard's top can be missed; none is counted wrong).
std::string TopStacksSql(const SliceSpec& spec);

// Then the counts of exactly those `stack_ids` on every shard, so each kept
// stack's count is exact even where a shard did not rank it. Columns is_top
// (1 for a kept stack, 0 for the row of all the others), stack (0 in the
// "other" row), count, min(comm), max(comm) (equal when one program ran the
// stack): one row per kept stack with samples, and one for the rest.
std::string SliceTotalsSql(const SliceSpec& spec, const std::vector<uint64_t>& stack_ids);

// With a timeline (spec.bucket_seconds > 0), asked at the same time: the
// same rows' counts per bucket, as columns stack (0: the rest), buckets (an
// array of bucket starts, unix seconds), counts (an array as long). The comm
// range stays in the totals: min/max of a string per (bucket, stack) cell
// cost as much as the cells themselves (bench/fleet.sh). Unlike the top
// stacks and the totals, the buckets (under an hour) cannot come from the
// hourly roll-up: this is the query that reads every raw row of the range.
std::string SliceBucketsSql(const SliceSpec& spec, const std::vector<uint64_t>& stack_ids);

// Columns: id, frame_ids (an array, root first) for these stack ids.
std::string StacksSql(const std::vector<uint64_t>& stack_ids);
// Columns: id, name, module of every frame of these stacks.
std::string FramesSql(const std::vector<uint64_t>& stack_ids);

// Columns: the label's value, count; the top `max_values` values of `label`
// (a kQueryLabelKeys member) by count over the slice (-by LABEL).
std::string LabelValuesSql(const SliceSource& source, absl::string_view where_sql,
                           absl::string_view label, uint64_t max_values);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_QUERY_SLICE_SQL_H_
