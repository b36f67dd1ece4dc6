#include "fleet/query/slice_query.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "fleet/query/shard_tsv.h"

namespace profcpu::fleet {

absl::StatusOr<MergedSlice> QuerySlice(const Shards& shards, const SliceSpec& spec) {
  // Round 1: each shard's top stacks, summed; the top of the sums.
  const std::string top_sql = TopStacksSql(spec);
  absl::flat_hash_map<uint64_t, uint64_t> candidates;
  for (size_t shard = 0; shard < shards.count; ++shard) {
    absl::StatusOr<std::string> answer = shards.query(shard, top_sql);
    if (!answer.ok()) return answer.status();
    absl::StatusOr<std::vector<TsvRow>> rows = ParseShardTsv(*answer, 2, spec.max_stacks);
    if (!rows.ok()) {
      return absl::Status(rows.status().code(), absl::StrCat("shard ", shard, ": top stacks: ",
                                                             rows.status().message()));
    }
    for (const TsvRow& row : *rows) {
      absl::StatusOr<uint64_t> id = ParseUInt64Field(row[0], "stack_id");
      absl::StatusOr<uint64_t> count = ParseUInt64Field(row[1], "count");
      if (!id.ok()) return id.status();
      if (!count.ok()) return count.status();
      uint64_t& sum = candidates[*id];
      sum = (sum + *count < sum) ? UINT64_MAX : sum + *count;
    }
  }
  std::vector<std::pair<uint64_t, uint64_t>> ranked(candidates.begin(), candidates.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (ranked.size() > spec.max_stacks) ranked.resize(spec.max_stacks);
  std::vector<uint64_t> ids;
  for (const auto& [id, count] : ranked) ids.push_back(id);
  std::sort(ids.begin(), ids.end());

  // Round 2: those stacks' exact counts (per bucket) on every shard.
  const std::string sql = SliceSql(spec, ids);
  SliceMerger merger;
  for (size_t shard = 0; shard < shards.count; ++shard) {
    absl::StatusOr<std::string> answer = shards.query(shard, sql);
    if (!answer.ok()) return answer.status();
    absl::Status added = merger.AddShardAnswer(shard, absl::StrCat("shard ", shard), *answer);
    if (!added.ok()) return added;
  }
  return std::move(merger).Finish(spec.max_stacks);
}

absl::Status QueryStackNames(const Shards& shards, const MergedSlice& slice, StackNames* names) {
  std::vector<std::vector<uint64_t>> ids_of_shard(shards.count);
  for (const auto& [id, shard_list] : slice.shards_of_stack) {
    for (size_t shard : shard_list) {
      if (shard < shards.count) ids_of_shard[shard].push_back(id);
    }
  }
  for (size_t shard = 0; shard < shards.count; ++shard) {
    std::vector<uint64_t>& ids = ids_of_shard[shard];
    if (ids.empty()) continue;
    std::sort(ids.begin(), ids.end());
    const std::string where = absl::StrCat("shard ", shard);
    absl::StatusOr<std::string> stacks = shards.query(shard, StacksSql(ids));
    if (!stacks.ok()) return stacks.status();
    absl::Status added = names->AddStacksAnswer(where, *stacks);
    if (!added.ok()) return added;
    absl::StatusOr<std::string> frames = shards.query(shard, FramesSql(ids));
    if (!frames.ok()) return frames.status();
    added = names->AddFramesAnswer(where, *frames);
    if (!added.ok()) return added;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<LabelValue>> QueryLabelValues(const Shards& shards,
                                                         const SliceSource& source,
                                                         const std::string& where_sql,
                                                         const std::string& label,
                                                         uint64_t max_values) {
  if (!IsLabelKey(label)) {
    return absl::InvalidArgumentError(absl::StrCat("-by ", label, ": not a label key"));
  }
  const std::string sql = LabelValuesSql(source, where_sql, label, max_values);
  absl::flat_hash_map<std::string, uint64_t> counts;
  for (size_t shard = 0; shard < shards.count; ++shard) {
    absl::StatusOr<std::string> answer = shards.query(shard, sql);
    if (!answer.ok()) return answer.status();
    absl::StatusOr<std::vector<TsvRow>> rows = ParseShardTsv(*answer, 2, max_values);
    if (!rows.ok()) {
      return absl::Status(rows.status().code(), absl::StrCat("shard ", shard, ": label values: ",
                                                             rows.status().message()));
    }
    for (TsvRow& row : *rows) {
      absl::StatusOr<uint64_t> count = ParseUInt64Field(row[1], "count");
      if (!count.ok()) return count.status();
      counts[std::move(row[0])] += *count;
    }
  }
  std::vector<LabelValue> values;
  for (auto& [value, count] : counts) values.push_back({value, count});
  std::sort(values.begin(), values.end(), [](const LabelValue& a, const LabelValue& b) {
    return a.count != b.count ? a.count > b.count : a.value < b.value;
  });
  if (values.size() > max_values) values.resize(max_values);
  return values;
}

}  // namespace profcpu::fleet
