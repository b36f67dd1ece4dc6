// `profcpu query` as one call: the slice (or a differential pair, or one per
// label value) from the shards, drawn into the output file(s). The command
// (scripts/cli/query_command.cc) only parses flags into a QueryRequest.
#ifndef PROFCPU_FLEET_QUERY_QUERY_RUN_H_
#define PROFCPU_FLEET_QUERY_QUERY_RUN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fleet/query/label_filter.h"
#include "fleet/query/slice_profile.h"
#include "fleet/query/slice_query.h"
#include "fleet/query/time_range.h"

namespace profcpu::fleet {

// At most this many (bucket, stack) cells per shard for a page: 24 h with
// the default 2,000 stacks gets 15-minute buckets, 1 h 30-second ones.
// Grouping the cells is most of a page's server time (fleet/query/README.md).
inline constexpr uint64_t kMaxPageCells = 250'000;

struct QueryRequest {
  TimeRange range;
  LabelFilter filter;
  std::optional<TimeRange> diff_range;    // -diff FROM..TO: the baseline's range
  std::optional<LabelFilter> diff_filter;  // -diff-where: the baseline's filter
  std::string by_label;                   // -by: one output per value
  uint64_t top_values = 10;               // -top: that many values
  uint64_t max_stacks = 2000;             // -max-stacks
  std::string output;                     // -o
  absl::Time now;
  absl::Duration raw_keep = absl::Hours(24 * 7);  // -keep: raw samples kept (retention's -keep)
  std::string generator;
};

struct QueryOutput {
  std::string path;
  std::string value;      // -by's value ("" otherwise)
  uint64_t samples = 0;   // the slice's total (the baseline's in `baseline_samples`)
  uint64_t other = 0;     // of which in "other"
  uint64_t baseline_samples = 0;
  SliceProfileStats names;
};

struct QueryReport {
  bool hourly = false;   // read the hourly roll-up
  TimeRange read_range;  // the range read (whole hours on the roll-up)
  int64_t bucket_seconds = 0;
  std::vector<QueryOutput> outputs;
};

absl::StatusOr<QueryReport> RunQuery(const Shards& shards, const QueryRequest& request);

// "7d", "48h", "90m": a positive duration (the -keep flag).
absl::StatusOr<absl::Duration> ParseDurationText(absl::string_view text);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_QUERY_QUERY_RUN_H_
