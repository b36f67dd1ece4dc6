#include "fleet/query/slice_query.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "fleet/query/shard_tsv.h"

namespace profcpu::fleet {
namespace {

struct ShardQuestion {
  size_t shard;
  std::string sql;
};

// Every question asked at once, answers in the questions' order: a round
// costs its slowest question's time, not the sum of all.
std::vector<absl::StatusOr<std::string>> AskAll(const Shards& shards,
                                                std::vector<ShardQuestion> questions) {
  std::vector<absl::StatusOr<std::string>> answers(questions.size(), std::string());
  std::vector<std::thread> asking;
  for (size_t i = 0; i < questions.size(); ++i) {
    asking.emplace_back([&shards, &answers, &questions, i] {
      answers[i] = shards.query(questions[i].shard, questions[i].sql);
    });
  }
  for (std::thread& thread : asking) thread.join();
  return answers;
}

// Every shard's answer to its SQL (`sql_of(shard)`; "" asks nothing and
// answers ""), in shard order.
std::vector<absl::StatusOr<std::string>> AskShards(
    const Shards& shards, const std::function<std::string(size_t)>& sql_of) {
  std::vector<ShardQuestion> questions;
  std::vector<size_t> asked;
  for (size_t shard = 0; shard < shards.count; ++shard) {
    std::string sql = sql_of(shard);
    if (sql.empty()) continue;
    questions.push_back({shard, std::move(sql)});
    asked.push_back(shard);
  }
  std::vector<absl::StatusOr<std::string>> answers = AskAll(shards, std::move(questions));
  std::vector<absl::StatusOr<std::string>> by_shard(shards.count, std::string());
  for (size_t i = 0; i < asked.size(); ++i) by_shard[asked[i]] = std::move(answers[i]);
  return by_shard;
}

}  // namespace

absl::StatusOr<MergedSlice> QuerySlice(const Shards& shards, const SliceSpec& spec) {
  // Round 1: each shard's top stacks, summed; the top of the sums.
  const std::string top_sql = TopStacksSql(spec);
  absl::flat_hash_map<uint64_t, uint64_t> candidates;
  std::vector<absl::StatusOr<std::string>> top_answers =
      AskShards(shards, [&top_sql](size_t) { return top_sql; });
  for (size_t shard = 0; shard < shards.count; ++shard) {
    const absl::StatusOr<std::string>& answer = top_answers[shard];
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
  // Id 0 stands for "other" in the buckets' answer: a stack hashed to 0
  // (one in 2^64) counts there.
  for (const auto& [id, count] : ranked) {
    if (id != 0) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());

  // Round 2: those stacks' exact counts on every shard, and with a
  // timeline their counts per bucket, all asked at once.
  const bool timeline = spec.bucket_seconds > 0;
  std::vector<ShardQuestion> questions;
  for (size_t shard = 0; shard < shards.count; ++shard) {
    questions.push_back({shard, SliceTotalsSql(spec, ids)});
    if (timeline) questions.push_back({shard, SliceBucketsSql(spec, ids)});
  }
  std::vector<absl::StatusOr<std::string>> answers = AskAll(shards, std::move(questions));
  const size_t per_shard = timeline ? 2 : 1;
  SliceMerger merger;
  for (size_t shard = 0; shard < shards.count; ++shard) {
    for (size_t i = 0; i < per_shard; ++i) {
      if (!answers[shard * per_shard + i].ok()) return answers[shard * per_shard + i].status();
    }
    ShardSliceAnswer answer{*answers[shard * per_shard], std::nullopt};
    if (timeline) answer.buckets = *answers[shard * per_shard + 1];
    absl::Status added = merger.AddShardAnswer(shard, absl::StrCat("shard ", shard), answer);
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
  for (std::vector<uint64_t>& ids : ids_of_shard) std::sort(ids.begin(), ids.end());
  // A shard's frame lists and its frames' names, asked at once (the names'
  // query finds the frames itself).
  std::vector<ShardQuestion> questions;
  for (size_t shard = 0; shard < shards.count; ++shard) {
    if (ids_of_shard[shard].empty()) continue;
    questions.push_back({shard, StacksSql(ids_of_shard[shard])});
    questions.push_back({shard, FramesSql(ids_of_shard[shard])});
  }
  std::vector<absl::StatusOr<std::string>> answers = AskAll(shards, std::move(questions));
  size_t next = 0;
  for (size_t shard = 0; shard < shards.count; ++shard) {
    if (ids_of_shard[shard].empty()) continue;
    const std::string where = absl::StrCat("shard ", shard);
    const absl::StatusOr<std::string>& stacks = answers[next++];
    const absl::StatusOr<std::string>& frames = answers[next++];
    if (!stacks.ok()) return stacks.status();
    absl::Status added = names->AddStacksAnswer(where, *stacks);
    if (!added.ok()) return added;
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
  std::vector<absl::StatusOr<std::string>> answers =
      AskShards(shards, [&sql](size_t) { return sql; });
  for (size_t shard = 0; shard < shards.count; ++shard) {
    const absl::StatusOr<std::string>& answer = answers[shard];
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
