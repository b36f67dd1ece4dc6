#include "absl/synchronization/mutex.h"
#include "fleet/query/query_run.h"

#include <string>

#include "absl/strings/match.h"
#include "base/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

using ::testing::HasSubstr;

// Two shards answering from canned rows: pod a runs stack 7 (main;work) on
// shard 0, pod b runs stack 8 (main;idle) on shard 1; -diff's baseline
// range (before time 1000) has only half of stack 7.
Shards FakeShards(std::vector<std::string>* log) {
  // Shards are asked at once, from threads of their own.
  static absl::Mutex log_mutex;
  return Shards{2, [log](size_t shard, const std::string& sql) -> absl::StatusOr<std::string> {
    {
      absl::MutexLock lock(&log_mutex);
      log->push_back(sql);
    }
    const bool baseline = absl::StrContains(sql, "< toDateTime(1000)");
    const bool only_a = absl::StrContains(sql, "pod = 'a'");
    const bool only_b = absl::StrContains(sql, "pod = 'b'");
    if (absl::StartsWith(sql, "SELECT pod, sum(count)")) {
      return std::string(shard == 0 ? "a\t10\n" : "b\t4\n");
    }
    if (absl::StartsWith(sql, "SELECT stack_id, sum(stack_samples)")) {
      if (shard == 0 && !only_b) return std::string(baseline ? "7\t5\n" : "7\t10\n");
      if (shard == 1 && !only_a && !baseline) return std::string("8\t4\n");
      return std::string();
    }
    if (absl::StartsWith(sql, "SELECT stack, groupArray(bucket)")) {
      if (shard == 0 && !only_b) return std::string(baseline ? "7\t[0]\t[5]\n" : "7\t[1000]\t[10]\n");
      if (shard == 1 && !only_a && !baseline) return std::string("8\t[1000]\t[4]\n");
      return std::string();
    }
    if (absl::StrContains(sql, "AS is_top")) {
      if (shard == 0 && !only_b) return std::string(baseline ? "1\t7\t5\tapp\tapp\n" : "1\t7\t10\tapp\tapp\n");
      if (shard == 1 && !only_a && !baseline) return std::string("1\t8\t4\tapp\tapp\n");
      return std::string();
    }
    if (absl::StartsWith(sql, "SELECT id, any(frame_ids)")) {
      return std::string(shard == 0 ? "7\t[1,2]\n" : "8\t[1,3]\n");
    }
    if (absl::StartsWith(sql, "SELECT id, any(name)")) {
      return std::string(shard == 0 ? "1\tmain\tapp\n2\twork\tapp\n" : "1\tmain\tapp\n3\tidle\tapp\n");
    }
    return absl::InternalError("unexpected SQL");
  }};
}

std::string ReadOutput(const std::string& path) {
  absl::StatusOr<std::string> text = base::ReadFileBounded(path, 1 << 24);
  return text.ok() ? *text : text.status().ToString();
}

QueryRequest Request(const std::string& name) {
  QueryRequest request;
  request.range = {1000, 1060};
  request.now = absl::FromUnixSeconds(1060);
  request.output = std::string(::testing::TempDir()) + "/" + name;
  return request;
}

TEST(QueryRun, FoldedOverBothShards) {
  std::vector<std::string> log;
  QueryRequest request = Request("all.folded");
  absl::StatusOr<QueryReport> report = RunQuery(FakeShards(&log), request);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->hourly);
  EXPECT_EQ(report->outputs[0].samples, 14u);
  EXPECT_EQ(ReadOutput(request.output), "app;main;idle 4\napp;main;work 10\n");
  // Names asked only of the shard that reported the stack.
  for (const std::string& sql : log) {
    EXPECT_FALSE(absl::StrContains(sql, "JOIN")) << sql;
  }
}

TEST(QueryRun, ByPodOneFilePerValue) {
  std::vector<std::string> log;
  QueryRequest request = Request("by.folded");
  request.by_label = "pod";
  absl::StatusOr<QueryReport> report = RunQuery(FakeShards(&log), request);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->outputs.size(), 2u);
  EXPECT_EQ(report->outputs[0].value, "a");
  EXPECT_EQ(ReadOutput(report->outputs[0].path), "app;main;work 10\n");
  EXPECT_THAT(report->outputs[1].path, HasSubstr("by.b.folded"));
  EXPECT_EQ(ReadOutput(report->outputs[1].path), "app;main;idle 4\n");
}

TEST(QueryRun, DiffRangeFoldedAndPage) {
  std::vector<std::string> log;
  QueryRequest request = Request("diff.folded");
  request.diff_range = TimeRange{940, 1000};
  ASSERT_TRUE(RunQuery(FakeShards(&log), request).ok());
  EXPECT_EQ(ReadOutput(request.output), "app;main;idle 0 4\napp;main;work 5 10\n");

  request.output = std::string(::testing::TempDir()) + "/diff.html";
  absl::StatusOr<QueryReport> report = RunQuery(FakeShards(&log), request);
  ASSERT_TRUE(report.ok()) << report.status();
  // META's JSON writes '&' as \u0026 (docs/profile-page.md).
  EXPECT_TRUE(absl::StrContains(ReadOutput(request.output),
                                "\"view\":\"from=60\\u0026to=120\\u0026bfrom=0\\u0026bto=60\""));

  request.diff_range = TimeRange{990, 1010};
  EXPECT_THAT(RunQuery(FakeShards(&log), request).status().message(), HasSubstr("overlaps"));
  request.output = std::string(::testing::TempDir()) + "/diff.pb.gz";
  EXPECT_THAT(RunQuery(FakeShards(&log), request).status().message(), HasSubstr("pprof"));
}

// Stack 7: 10 samples on shard 0, 1 on shard 1 where stack 8 (5) ranks
// above it. With -max-stacks 1, 7 is kept and counted 11, not 10: the
// shard that did not rank it still counts it.
TEST(QueryRun, KeptStacksCountedOnEveryShard) {
  Shards shards{2, [](size_t shard, const std::string& sql) -> absl::StatusOr<std::string> {
    if (absl::StartsWith(sql, "SELECT stack_id, sum(stack_samples)")) {
      return std::string(shard == 0 ? "7\t10\n" : "8\t5\n");  // LIMIT 1 on each
    }
    if (absl::StrContains(sql, "AS is_top")) {
      EXPECT_THAT(sql, HasSubstr("stack_id IN (7) AS is_top"));
      return std::string(shard == 0 ? "1\t7\t10\tapp\tapp\n"
                                    : "1\t7\t1\tapp\tapp\n0\t0\t5\tapp\tapp\n");
    }
    if (absl::StartsWith(sql, "SELECT id, any(frame_ids)")) return std::string("7\t[1]\n");
    if (absl::StartsWith(sql, "SELECT id, any(name)")) return std::string("1\tmain\tapp\n");
    return absl::InternalError("unexpected SQL");
  }};
  QueryRequest request = Request("exact.folded");
  request.max_stacks = 1;
  absl::StatusOr<QueryReport> report = RunQuery(shards, request);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(ReadOutput(request.output), "[other] 5\napp;main 11\n");
  EXPECT_EQ(report->outputs[0].other, 5u);
}

TEST(QueryRun, ShardErrorFailsTheQuery) {
  Shards shards{2, [](size_t shard, const std::string&) -> absl::StatusOr<std::string> {
    if (shard == 1) return absl::UnavailableError("ClickHouse at http://x:1: connection refused");
    return std::string();
  }};
  EXPECT_THAT(RunQuery(shards, Request("x.svg")).status().message(),
              HasSubstr("connection refused"));
}

TEST(QueryRun, DurationText) {
  EXPECT_EQ(*ParseDurationText("7d"), absl::Hours(24 * 7));
  EXPECT_EQ(*ParseDurationText("90m"), absl::Minutes(90));
  EXPECT_FALSE(ParseDurationText("-7d").ok());
  EXPECT_FALSE(ParseDurationText("7").ok());
}

}  // namespace
}  // namespace profcpu::fleet
