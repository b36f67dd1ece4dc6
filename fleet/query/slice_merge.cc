#include "fleet/query/slice_merge.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "fleet/query/shard_tsv.h"

namespace profcpu::fleet {
namespace {

constexpr uint64_t kMaxShardTotal = uint64_t{1} << 48;

// How much of an answer is parsed into rows of strings at a time.
constexpr size_t kPieceBytes = 1 << 20;

absl::Status AtShard(absl::string_view url, absl::string_view what, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat("ClickHouse at ", url, ": ", what, ": ", status.message()));
}

// A checked row of either answer: a kept stack (top) or the rest, its count
// and comm range (totals) or its counts per bucket (buckets).
struct SliceRow {
  bool top = false;
  uint64_t id = 0;
  uint64_t count = 0;
  std::string comm_min, comm_max;
  std::vector<uint64_t> buckets, counts;
};

// `tsv` read in pieces of whole lines, so the reader's rows of strings
// never hold more than a piece; `on_row` checks and keeps each row.
absl::Status ForEachRow(absl::string_view tsv, size_t fields,
                        const std::function<absl::Status(TsvRow&)>& on_row) {
  size_t rows_read = 0;
  while (!tsv.empty()) {
    size_t cut = std::min(tsv.size(), kPieceBytes);
    if (cut < tsv.size()) {
      const size_t newline = tsv.rfind('\n', cut - 1);
      cut = newline == absl::string_view::npos ? tsv.size() : newline + 1;
    }
    absl::StatusOr<std::vector<TsvRow>> rows = ParseShardTsv(tsv.substr(0, cut), fields);
    if (!rows.ok()) return rows.status();
    tsv.remove_prefix(cut);
    rows_read += rows->size();
    if (rows_read > kMaxAnswerRows) {
      return absl::ResourceExhaustedError(absl::StrCat("more than ", kMaxAnswerRows, " rows"));
    }
    for (TsvRow& row : *rows) PROFCPU_RETURN_IF_ERROR(on_row(row));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ParseTop(absl::string_view field) {
  PROFCPU_ASSIGN_OR_RETURN(uint64_t top, ParseUInt64Field(field, "is_top"));
  if (top > 1) return absl::InvalidArgumentError("is_top out of range");
  return top == 1;
}

// Adds `count` to `*total`, refusing counts no store holds. No store holds
// 2^48 samples (15,000 years of a 1,000-node fleet at 19 Hz per CPU): a
// shard's total past that is garbage. Bounding it keeps every sum across
// shards and every fold of them exact.
absl::Status Count(uint64_t count, uint64_t* total) {
  if (count > kMaxShardTotal || *total + count > kMaxShardTotal) {
    return absl::InvalidArgumentError("counts past any store's size");
  }
  *total += count;
  return absl::OkStatus();
}

// SliceTotalsSql's rows; their counts go into `total` when `total` is set
// (no timeline: they are the counts).
absl::Status ReadTotals(absl::string_view tsv, uint64_t* total, std::vector<SliceRow>* out) {
  return ForEachRow(tsv, 5, [&](TsvRow& row) -> absl::Status {
    SliceRow parsed;
    PROFCPU_ASSIGN_OR_RETURN(parsed.top, ParseTop(row[0]));
    PROFCPU_ASSIGN_OR_RETURN(parsed.id, ParseUInt64Field(row[1], "stack_id"));
    PROFCPU_ASSIGN_OR_RETURN(parsed.count, ParseUInt64Field(row[2], "count"));
    if (total != nullptr) PROFCPU_RETURN_IF_ERROR(Count(parsed.count, total));
    parsed.comm_min = std::move(row[3]);
    parsed.comm_max = std::move(row[4]);
    out->push_back(std::move(parsed));
    return absl::OkStatus();
  });
}

// SliceBucketsSql's rows (stack 0: the rest): two arrays as long, at most kMaxAnswerRows
// (bucket, count) cells in all.
absl::Status ReadBuckets(absl::string_view tsv, uint64_t* total, std::vector<SliceRow>* out) {
  size_t cells = 0;
  return ForEachRow(tsv, 3, [&](TsvRow& row) -> absl::Status {
    SliceRow parsed;
    PROFCPU_ASSIGN_OR_RETURN(parsed.id, ParseUInt64Field(row[0], "stack_id"));
    parsed.top = parsed.id != 0;
    PROFCPU_ASSIGN_OR_RETURN(parsed.buckets, ParseUInt64Array(row[1], kMaxAnswerRows - cells));
    PROFCPU_ASSIGN_OR_RETURN(parsed.counts, ParseUInt64Array(row[2], kMaxAnswerRows - cells));
    if (parsed.buckets.size() != parsed.counts.size()) {
      return absl::InvalidArgumentError("buckets and counts of different lengths");
    }
    cells += parsed.buckets.size();
    for (size_t i = 0; i < parsed.buckets.size(); ++i) {
      if (parsed.buckets[i] > UINT32_MAX) return absl::InvalidArgumentError("bucket out of range");
      PROFCPU_RETURN_IF_ERROR(Count(parsed.counts[i], total));
      parsed.count += parsed.counts[i];
    }
    out->push_back(std::move(parsed));
    return absl::OkStatus();
  });
}

}  // namespace

void SliceMerger::Add(Accumulated* acc, int64_t bucket, uint64_t count) {
  acc->stack.count += count;
  acc->stack.buckets[bucket] += count;
}

void SliceMerger::AddComms(Accumulated* acc, const std::string& comm_min,
                           const std::string& comm_max) {
  if (!acc->has_comm) {
    acc->has_comm = true;
    acc->comm_min = comm_min;
    acc->comm_max = comm_max;
    return;
  }
  if (comm_min < acc->comm_min) acc->comm_min = comm_min;
  if (comm_max > acc->comm_max) acc->comm_max = comm_max;
}

MergedStack SliceMerger::Done(Accumulated acc) {
  MergedStack stack = std::move(acc.stack);
  // No comm for samples counted: the totals did not see the stack (a window
  // stored between the two queries), so its program is not known.
  stack.several_comms = acc.has_comm ? acc.comm_min != acc.comm_max : stack.count > 0;
  if (!stack.several_comms) stack.comm = std::move(acc.comm_min);
  return stack;
}

SliceMerger::Accumulated* SliceMerger::AccumulatedOf(size_t shard, bool top, uint64_t id) {
  if (!top) return &other_;
  Accumulated* acc = &stacks_[id];
  acc->stack.id = id;
  if (acc->shards.empty() || acc->shards.back() != shard) acc->shards.push_back(shard);
  return acc;
}

absl::Status SliceMerger::AddShardAnswer(size_t shard, absl::string_view url,
                                         const ShardSliceAnswer& answer) {
  // Every row checked before any is added: an answer is taken whole or not
  // at all.
  const bool timeline = answer.buckets.has_value();
  uint64_t total = total_;
  std::vector<SliceRow> totals, buckets;
  absl::Status read = ReadTotals(answer.totals, timeline ? nullptr : &total, &totals);
  if (!read.ok()) return AtShard(url, "slice answer", read);
  if (timeline) {
    read = ReadBuckets(*answer.buckets, &total, &buckets);
    if (!read.ok()) return AtShard(url, "slice buckets answer", read);
  }
  total_ = total;
  if (!timeline) {
    for (const SliceRow& row : totals) {
      Accumulated* acc = AccumulatedOf(shard, row.top, row.id);
      Add(acc, 0, row.count);
      AddComms(acc, row.comm_min, row.comm_max);
    }
    return absl::OkStatus();
  }
  for (const SliceRow& row : buckets) {
    Accumulated* acc = AccumulatedOf(shard, row.top, row.id);
    for (size_t i = 0; i < row.buckets.size(); ++i) {
      Add(acc, static_cast<int64_t>(row.buckets[i]), row.counts[i]);
    }
  }
  for (const SliceRow& row : totals) {
    if (!row.top) {
      AddComms(&other_, row.comm_min, row.comm_max);
      continue;
    }
    auto kept = stacks_.find(row.id);
    if (kept != stacks_.end()) AddComms(&kept->second, row.comm_min, row.comm_max);
  }
  return absl::OkStatus();
}

MergedSlice SliceMerger::Finish(uint64_t max_stacks) && {
  std::vector<Accumulated> all;
  all.reserve(stacks_.size());
  for (auto& [id, acc] : stacks_) all.push_back(std::move(acc));
  stacks_.clear();
  std::sort(all.begin(), all.end(), [](const Accumulated& a, const Accumulated& b) {
    if (a.stack.count != b.stack.count) return a.stack.count > b.stack.count;
    return a.stack.id < b.stack.id;
  });
  MergedSlice slice;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i < max_stacks) {
      slice.shards_of_stack[all[i].stack.id] = all[i].shards;
      slice.stacks.push_back(Done(std::move(all[i])));
      continue;
    }
    Accumulated& acc = all[i];
    for (const auto& [bucket, count] : acc.stack.buckets) Add(&other_, bucket, count);
    if (acc.has_comm) AddComms(&other_, acc.comm_min, acc.comm_max);
  }
  slice.other = Done(std::move(other_));
  slice.other.id = 0;
  for (const MergedStack& stack : slice.stacks) slice.total += stack.count;
  slice.total += slice.other.count;
  return slice;
}

absl::Status StackNames::AddStacksAnswer(absl::string_view url, absl::string_view tsv) {
  absl::StatusOr<std::vector<TsvRow>> rows = ParseShardTsv(tsv, 2);
  if (!rows.ok()) return AtShard(url, "stacks answer", rows.status());
  for (const TsvRow& row : *rows) {
    absl::StatusOr<uint64_t> id = ParseUInt64Field(row[0], "stack id");
    if (!id.ok()) return AtShard(url, "stacks answer", id.status());
    absl::StatusOr<std::vector<uint64_t>> frames = ParseUInt64Array(row[1], kMaxStackDepth);
    if (!frames.ok()) return AtShard(url, "stacks answer", frames.status());
    stacks_.try_emplace(*id, *std::move(frames));
  }
  return absl::OkStatus();
}

absl::Status StackNames::AddFramesAnswer(absl::string_view url, absl::string_view tsv) {
  absl::StatusOr<std::vector<TsvRow>> rows = ParseShardTsv(tsv, 3);
  if (!rows.ok()) return AtShard(url, "frames answer", rows.status());
  for (TsvRow& row : *rows) {
    absl::StatusOr<uint64_t> id = ParseUInt64Field(row[0], "frame id");
    if (!id.ok()) return AtShard(url, "frames answer", id.status());
    frames_.try_emplace(*id, FrameName{std::move(row[1]), std::move(row[2])});
  }
  return absl::OkStatus();
}

const std::vector<uint64_t>* StackNames::Frames(uint64_t stack_id) const {
  auto it = stacks_.find(stack_id);
  return it == stacks_.end() ? nullptr : &it->second;
}

const FrameName* StackNames::Frame(uint64_t frame_id) const {
  auto it = frames_.find(frame_id);
  return it == frames_.end() ? nullptr : &it->second;
}

}  // namespace profcpu::fleet
