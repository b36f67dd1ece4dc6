#include "fleet/query/slice_merge.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "fleet/query/shard_tsv.h"

namespace profcpu::fleet {
namespace {

constexpr uint64_t kMaxShardTotal = uint64_t{1} << 48;

}  // namespace
namespace {

// How much of an answer is parsed into rows of strings at a time.
constexpr size_t kPieceBytes = 1 << 20;

absl::Status AtShard(absl::string_view url, absl::string_view what, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat("ClickHouse at ", url, ": ", what, ": ", status.message()));
}

}  // namespace

void SliceMerger::Add(Accumulated* acc, int64_t bucket, uint64_t count, std::string comm_min,
                      std::string comm_max) {
  acc->stack.count += count;
  acc->stack.buckets[bucket] += count;
  if (!acc->has_comm) {
    acc->has_comm = true;
    acc->comm_min = std::move(comm_min);
    acc->comm_max = std::move(comm_max);
    return;
  }
  if (comm_min < acc->comm_min) acc->comm_min = std::move(comm_min);
  if (comm_max > acc->comm_max) acc->comm_max = std::move(comm_max);
}

MergedStack SliceMerger::Done(Accumulated acc) {
  MergedStack stack = std::move(acc.stack);
  stack.several_comms = acc.has_comm && acc.comm_min != acc.comm_max;
  if (!stack.several_comms) stack.comm = std::move(acc.comm_min);
  return stack;
}

absl::Status SliceMerger::AddShardAnswer(size_t shard, absl::string_view url,
                                         absl::string_view tsv) {
  // Every row checked before any is added (an answer is taken whole or not
  // at all), kept compact meanwhile: the answer is read in pieces of whole
  // lines, so the reader's rows of strings never hold more than a piece.
  struct Parsed {
    uint64_t bucket, top, id, count;
    std::string comm_min, comm_max;
  };
  std::vector<Parsed> parsed;
  uint64_t total = total_;
  while (!tsv.empty()) {
    size_t cut = std::min(tsv.size(), kPieceBytes);
    if (cut < tsv.size()) {
      const size_t newline = tsv.rfind('\n', cut - 1);
      cut = newline == absl::string_view::npos ? tsv.size() : newline + 1;
    }
    absl::StatusOr<std::vector<TsvRow>> rows = ParseShardTsv(tsv.substr(0, cut), 6);
    if (!rows.ok()) return AtShard(url, "slice answer", rows.status());
    tsv.remove_prefix(cut);
    if (parsed.size() + rows->size() > kMaxAnswerRows) {
      return AtShard(url, "slice answer",
                     absl::ResourceExhaustedError(absl::StrCat("more than ", kMaxAnswerRows, " rows")));
    }
    for (TsvRow& row : *rows) {
      absl::StatusOr<uint64_t> bucket = ParseUInt64Field(row[0], "bucket");
      absl::StatusOr<uint64_t> top = ParseUInt64Field(row[1], "top");
      absl::StatusOr<uint64_t> id = ParseUInt64Field(row[2], "stack_id");
      absl::StatusOr<uint64_t> count = ParseUInt64Field(row[3], "count");
      for (const absl::Status& status :
           {bucket.status(), top.status(), id.status(), count.status()}) {
        if (!status.ok()) return AtShard(url, "slice answer", status);
      }
      if (*top > 1 || *bucket > UINT32_MAX) {
        return AtShard(url, "slice answer",
                       absl::InvalidArgumentError("top or bucket out of range"));
      }
      // No store holds 2^48 samples (15,000 years of a 1,000-node fleet at
      // 19 Hz per CPU): a shard's total past that is garbage. Bounding it
      // keeps every sum across shards and every fold of them exact.
      if (*count > kMaxShardTotal || total + *count > kMaxShardTotal) {
        return AtShard(url, "slice answer",
                       absl::InvalidArgumentError("counts past any store's size"));
      }
      total += *count;
      parsed.push_back({*bucket, *top, *id, *count, std::move(row[4]), std::move(row[5])});
    }
  }
  total_ = total;
  for (Parsed& row : parsed) {
    Accumulated* acc = &other_;
    if (row.top == 1) {
      acc = &stacks_[row.id];
      acc->stack.id = row.id;
      if (acc->shards.empty() || acc->shards.back() != shard) acc->shards.push_back(shard);
    }
    Add(acc, static_cast<int64_t>(row.bucket), row.count, std::move(row.comm_min),
        std::move(row.comm_max));
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
    for (const auto& [bucket, count] : acc.stack.buckets) {
      Add(&other_, bucket, count, acc.comm_min, acc.comm_max);
    }
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
