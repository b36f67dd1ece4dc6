#include "fleet/store/schema.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fleet/store/testing_http_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::HttpAnswer;
using testing::HttpRequest;
using testing::SendAll;
using testing::TestingHttpServer;

const StoreTable* Find(const std::vector<StoreTable>& tables, std::string_view name) {
  for (const StoreTable& t : tables) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

TEST(SchemaTest, TablesAreTheContractsAndIdempotent) {
  const std::vector<StoreTable> tables = StoreTables("mycluster");
  std::vector<std::string> names;
  for (const StoreTable& t : tables) {
    names.push_back(t.name);
    EXPECT_THAT(t.create_sql, HasSubstr("IF NOT EXISTS")) << t.name;
  }
  EXPECT_THAT(names, ElementsAre("samples_local", "stacks_local", "frames_local", "losses_local",
                                 "samples_hourly_local", "samples_hourly_mv", "samples", "stacks",
                                 "frames", "losses", "samples_hourly"));
  const StoreTable* samples = Find(tables, "samples_local");
  EXPECT_THAT(samples->columns,
              ElementsAre("time DateTime", "node String", "container String", "cgroup String",
                          "pod_uid String", "pod String", "namespace String", "comm String",
                          "exe String", "runtime String", "build_id String", "stack_id UInt64",
                          "count UInt64", "window UInt64"));
  EXPECT_THAT(samples->create_sql, HasSubstr("MergeTree PARTITION BY toDate(time) ORDER BY "
                                             "(namespace, pod, container, comm, time, stack_id)"));
  EXPECT_THAT(Find(tables, "stacks_local")->create_sql,
              HasSubstr("(id UInt64, frame_ids Array(UInt64)) ENGINE = ReplacingMergeTree ORDER BY id"));
  EXPECT_THAT(Find(tables, "samples_hourly_local")->create_sql,
              HasSubstr("SummingMergeTree(count) PARTITION BY toYYYYMM(hour)"));
  EXPECT_THAT(Find(tables, "samples_hourly_mv")->create_sql,
              HasSubstr("TO profcpu.samples_hourly_local AS SELECT toStartOfHour(time) AS hour, "
                        "node, container, cgroup, pod_uid, pod, namespace, comm, exe, runtime, "
                        "build_id, stack_id, count FROM profcpu.samples_local"));
  EXPECT_THAT(Find(tables, "frames")->create_sql,
              HasSubstr("AS profcpu.frames_local ENGINE = Distributed(mycluster, profcpu, "
                        "frames_local, rand())"));
}

TEST(SchemaTest, InitRefusesABadClusterNameBeforeAnyRequest) {
  std::vector<ClickHouseClient> shards = {ClickHouseClient("http://127.0.0.1:1")};
  absl::Status status = InitStore(shards, "x); DROP TABLE y; --");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(testing::MessageOf(status), HasSubstr("letters, digits and '_'"));
}

TEST(SchemaTest, InitSaysWhenTheClusterIsUnknownOrHasOtherShards) {
  std::string shards_answer = "0\n";
  TestingHttpServer server([&](const HttpRequest&, int fd) {
    SendAll(fd, HttpAnswer(200, shards_answer));
  });
  std::vector<ClickHouseClient> one = {ClickHouseClient(server.url())};
  absl::Status unknown = InitStore(one, "profcpu");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(testing::MessageOf(unknown), HasSubstr("has no cluster 'profcpu' in its remote_servers"));
  shards_answer = "2\n";
  EXPECT_THAT(testing::MessageOf(InitStore(one, "profcpu")),
              HasSubstr("cluster 'profcpu' has 2 shards in its remote_servers, -store lists 1"));
  shards_answer = "<html>oops</html>";
  EXPECT_THAT(testing::MessageOf(InitStore(one, "profcpu")), HasSubstr("unexpected answer"));
  EXPECT_EQ(server.requests().size(), 3u);  // nothing created on a store that does not fit
}

// A shard that lists `parts` (table\tpartition_id rows) and records the
// statements it was sent.
TEST(SchemaTest, RetentionDropsWholeDaysAndMonthsOlderThanTheirKeep) {
  const std::string parts =
      "losses_local\t20240101\n"
      "samples_hourly_local\t202310\n"
      "samples_hourly_local\t202311\n"
      "samples_local\t20240110\n"
      "samples_local\t20240111\n"
      "samples_local\t20240118\n"
      "samples_local\tall\n";
  TestingHttpServer server([&](const HttpRequest& request, int fd) {
    SendAll(fd, HttpAnswer(200, absl::StrContains(request.body, "system.parts") ? parts
                                : absl::StartsWith(request.body, "EXISTS")   ? "1\n"
                                                                             : ""));
  });
  // now - 7d = 2024-01-11 12:00 UTC: the 10th ended before, the 11th did not.
  // now - 60d = 2023-11-19: October ended before, November did not.
  absl::Time now = absl::FromCivil(absl::CivilSecond(2024, 1, 18, 12, 0, 0), absl::UTCTimeZone());
  RetentionResult result = ApplyRetention({ClickHouseClient(server.url())}, absl::Hours(24 * 7),
                                          absl::Hours(24 * 60), now);
  std::vector<std::string> dropped;
  for (const DroppedPartition& d : result.dropped) dropped.push_back(d.table + " " + d.partition);
  EXPECT_THAT(dropped, ElementsAre("losses_local 20240101", "samples_hourly_local 202310",
                                   "samples_local 20240110"));
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_THAT(result.errors[0], HasSubstr("partition 'all' of samples_local is not a YYYYMMDD id"));
  std::vector<std::string> statements;
  for (const HttpRequest& r : server.requests()) statements.push_back(r.body);
  EXPECT_EQ(statements[0], "EXISTS TABLE profcpu.samples_local");
  EXPECT_EQ(statements[2], "ALTER TABLE profcpu.losses_local DROP PARTITION ID '20240101'");
}

TEST(SchemaTest, RetentionSaysWhenAShardHasNoStore) {
  TestingHttpServer empty([](const HttpRequest&, int fd) { SendAll(fd, HttpAnswer(200, "0\n")); });
  RetentionResult result = ApplyRetention({ClickHouseClient(empty.url())}, absl::Hours(24),
                                          absl::Hours(48), absl::Now());
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_THAT(result.errors[0], HasSubstr("has no profcpu.samples_local: run profcpu fleet init"));
  EXPECT_EQ(empty.requests().size(), 1u);
}

TEST(SchemaTest, RetentionGoesOnPastAShardThatFails) {
  TestingHttpServer good([](const HttpRequest& request, int fd) {
    SendAll(fd, HttpAnswer(200, absl::StrContains(request.body, "system.parts")
                                    ? "samples_local\t20000101\n"
                                : absl::StartsWith(request.body, "EXISTS") ? "1\n"
                                                                           : ""));
  });
  std::vector<ClickHouseClient> shards = {
      ClickHouseClient(absl::StrCat("http://127.0.0.1:", testing::ClosedPort())),
      ClickHouseClient(good.url())};
  RetentionResult result = ApplyRetention(shards, absl::Hours(24), absl::Hours(48), absl::Now());
  EXPECT_FALSE(result.ok());
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_THAT(result.errors[0], HasSubstr("connection refused"));
  ASSERT_EQ(result.dropped.size(), 1u);
  EXPECT_EQ(result.dropped[0].url, good.url());
}

}  // namespace
}  // namespace profcpu::fleet
