#include "fleet/query/slice_sql.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace profcpu::fleet {
namespace {

constexpr int64_t kHour = 3600;
constexpr int64_t kBucketSteps[] = {1,     2,     5,     10,    15,    30,     60,
                                    120,   300,   600,   900,   1800,  3600,   7200,
                                    10800, 21600, 43200, 86400, 172800, 604800};

// The table and its time column, and the condition on both the time and the
// labels. Bounds are literal numbers: toDateTime(N) compares as DateTime, so
// the day partitions outside the range are not read.
struct Table {
  std::string name;
  std::string time_column;
};

Table TableFor(const SliceSource& source) {
  return source.hourly ? Table{"profcpu.samples_hourly_local", "hour"}
                       : Table{"profcpu.samples_local", "time"};
}

std::string Condition(const SliceSource& source, absl::string_view where_sql) {
  const Table table = TableFor(source);
  return absl::StrCat(table.time_column, " >= toDateTime(", source.range.from, ") AND ",
                      table.time_column, " < toDateTime(", source.range.to, ") AND (", where_sql,
                      ")");
}

std::string IdList(const std::vector<uint64_t>& ids) {
  // An empty IN () is a syntax error; no stack has id 0 that matters here.
  if (ids.empty()) return "0";
  return absl::StrJoin(ids, ",");
}

}  // namespace

TimeRange WholeHours(const TimeRange& range) {
  return {range.from - ((range.from % kHour) + kHour) % kHour,
          range.to + (kHour - ((range.to % kHour) + kHour) % kHour) % kHour};
}

SliceSource ChooseSliceSource(const TimeRange& range, absl::Time now, absl::Duration raw_keep,
                              absl::Duration raw_max) {
  const int64_t oldest_raw = absl::ToUnixSeconds(now - raw_keep);
  if (range.from >= oldest_raw && absl::Seconds(range.seconds()) <= raw_max) {
    return {false, range};
  }
  return {true, WholeHours(range)};
}

int64_t ChooseBucketSeconds(const TimeRange& range, bool hourly, int64_t max_buckets) {
  for (int64_t step : kBucketSteps) {
    if (hourly && step < kHour) continue;
    if ((range.seconds() + step - 1) / step <= max_buckets) return step;
  }
  return std::max<int64_t>(kBucketSteps[std::size(kBucketSteps) - 1],
                           (range.seconds() + max_buckets - 1) / max_buckets);
}

namespace {

// Each stack's samples in the slice (columns stack_id, stack_samples, and
// with `comm` first_comm, last_comm), as a subquery. On raw samples the
// whole hours inside the range come from the hourly roll-up, which holds the
// same counts and labels summed by hour in ~1/100 of the rows (9M raw rows
// against 72k on a shard of bench/fleet.sh's store: 0.32 s of server CPU
// against 0.04 s), and only the partial hours at the ends from the raw
// rows. The hours are the server's own (toStartOfHour in its time zone: a
// zone half an hour off UTC has its hours at :30), so the server draws the
// line; the literal bounds still let it skip the days outside.
std::string StackSums(const SliceSpec& spec, bool comm) {
  const std::string columns = absl::StrCat(
      "stack_id, sum(count) AS stack_samples",
      comm ? ", min(comm) AS first_comm, max(comm) AS last_comm" : "");
  const SliceSource& source = spec.source;
  const Table table = TableFor(source);
  if (source.hourly) {
    return absl::StrCat("(SELECT ", columns, " FROM ", table.name, " WHERE ",
                        Condition(source, spec.where_sql), " GROUP BY stack_id)");
  }
  // The first hour starting at or after `from`, the last one starting at or
  // before `to`: [first, last) is whole hours inside the range (none when
  // first >= last, and then the raw rows are all of it).
  const std::string first =
      absl::StrCat("toStartOfHour(toDateTime(", source.range.from + kHour - 1, "))");
  const std::string last = absl::StrCat("toStartOfHour(toDateTime(", source.range.to, "))");
  return absl::StrCat(
      "(SELECT ", columns, " FROM ", table.name, " WHERE ", Condition(source, spec.where_sql),
      " AND NOT (time >= ", first, " AND time < ", last, ") GROUP BY stack_id UNION ALL SELECT ",
      columns, " FROM profcpu.samples_hourly_local WHERE hour >= toDateTime(",
      std::max<int64_t>(0, source.range.from - kHour), ") AND hour < toDateTime(", source.range.to, ") AND hour >= ",
      first, " AND hour < ", last, " AND (", spec.where_sql, ") GROUP BY stack_id)");
}

}  // namespace

std::string TopStacksSql(const SliceSpec& spec) {
  return absl::StrCat("SELECT stack_id, sum(stack_samples) AS samples FROM ",
                      StackSums(spec, false),
                      " GROUP BY stack_id ORDER BY samples DESC, stack_id LIMIT ", spec.max_stacks,
                      " FORMAT TabSeparated");
}

namespace {

// The kept stack's id, or 0 for every other stack (is_top tells a kept id 0,
// which no hash gives, from "other").
std::string KeptStack(const std::vector<uint64_t>& stack_ids) {
  return absl::StrCat("stack_id IN (", IdList(stack_ids),
                      ") AS is_top, if(is_top, stack_id, toUInt64(0)) AS stack");
}

}  // namespace

std::string SliceTotalsSql(const SliceSpec& spec, const std::vector<uint64_t>& stack_ids) {
  // Summed by stack_id first, then the kept ids looked up once per stack,
  // not once per row (the IN per row was ~40% of the query's CPU).
  return absl::StrCat("SELECT ", KeptStack(stack_ids),
                      ", sum(stack_samples) AS samples, min(first_comm), max(last_comm) FROM ",
                      StackSums(spec, true), " GROUP BY is_top, stack FORMAT TabSeparated");
}

std::string SliceBucketsSql(const SliceSpec& spec, const std::vector<uint64_t>& stack_ids) {
  const Table table = TableFor(spec.source);
  const int64_t step = std::max<int64_t>(1, spec.bucket_seconds);
  // Grouped by (bucket, stack) first, then one row per stack with its
  // buckets as two arrays: ~2,000 rows to read instead of one per cell.
  // Keyed by the stack alone (0 for the rest: QuerySlice keeps no id 0),
  // which groups ~15% faster than with is_top.
  return absl::StrCat("SELECT stack, groupArray(bucket), groupArray(samples) FROM (SELECT ",
                      "intDiv(toUInt32(", table.time_column, "), ", step, ") * ", step,
                      " AS bucket, if(stack_id IN (", IdList(stack_ids),
                      "), stack_id, toUInt64(0)) AS stack, sum(count) AS samples FROM ",
                      table.name, " WHERE ", Condition(spec.source, spec.where_sql),
                      " GROUP BY bucket, stack) GROUP BY stack FORMAT TabSeparated");
}

std::string StacksSql(const std::vector<uint64_t>& stack_ids) {
  // ReplacingMergeTree may hold a stack twice until it merges: one each.
  return absl::StrCat("SELECT id, any(frame_ids) FROM profcpu.stacks_local WHERE id IN (",
                      IdList(stack_ids), ") GROUP BY id FORMAT TabSeparated");
}

std::string FramesSql(const std::vector<uint64_t>& stack_ids) {
  return absl::StrCat(
      "SELECT id, any(name), any(module) FROM profcpu.frames_local WHERE id IN (SELECT "
      "arrayJoin(frame_ids) FROM profcpu.stacks_local WHERE id IN (",
      IdList(stack_ids), ")) GROUP BY id FORMAT TabSeparated");
}

std::string LabelValuesSql(const SliceSource& source, absl::string_view where_sql,
                           absl::string_view label, uint64_t max_values) {
  return absl::StrCat("SELECT ", label, ", sum(count) AS samples FROM ", TableFor(source).name,
                      " WHERE ", Condition(source, where_sql), " GROUP BY ", label,
                      " ORDER BY samples DESC, ", label, " LIMIT ", max_values,
                      " FORMAT TabSeparated");
}

}  // namespace profcpu::fleet
