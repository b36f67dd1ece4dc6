#include "fleet/store/schema.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/civil_time.h"
#include "base/status_macros.h"
#include "fleet/store/tsv_answer.h"

namespace profcpu::fleet {
namespace {

std::vector<std::string> LabelColumns() {
  std::vector<std::string> columns;
  for (const char* key : kLabelKeys) columns.push_back(absl::StrCat(key, " String"));
  return columns;
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

StoreTable Local(std::string name, std::vector<std::string> columns, absl::string_view engine) {
  std::string sql = absl::StrCat("CREATE TABLE IF NOT EXISTS ", kStoreDatabase, ".", name, " (",
                                 absl::StrJoin(columns, ", "), ") ENGINE = ", engine);
  return StoreTable{std::move(name), std::move(sql), std::move(columns)};
}

// The Distributed table NAME over NAME_local on every shard of `cluster`.
// rand(): rows inserted through it (a test, a hand-made import) spread over
// the shards; the agent writes to the local tables of its node's shard.
StoreTable Distributed(const StoreTable& local, absl::string_view cluster) {
  std::string name = local.name.substr(0, local.name.size() - std::strlen("_local"));
  std::string sql = absl::StrCat("CREATE TABLE IF NOT EXISTS ", kStoreDatabase, ".", name, " AS ",
                                 kStoreDatabase, ".", local.name, " ENGINE = Distributed(",
                                 cluster, ", ", kStoreDatabase, ", ", local.name, ", rand())");
  return StoreTable{std::move(name), std::move(sql), local.columns};
}

bool ValidClusterName(absl::string_view name) {
  return !name.empty() && name.size() <= 128 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

std::string Shard(const ClickHouseClient& shard) { return shard.url(); }

// The cluster as `shard` knows it: how many shards its remote_servers list.
absl::Status CheckCluster(const ClickHouseClient& shard, absl::string_view cluster,
                          size_t expected_shards) {
  PROFCPU_ASSIGN_OR_RETURN(
      std::string answer,
      shard.Query(absl::StrCat("SELECT uniqExact(shard_num) FROM system.clusters WHERE cluster = ",
                               SqlQuote(cluster))));
  TsvLimits limits;
  limits.fields = 1;
  limits.max_rows = 1;
  absl::StatusOr<std::vector<TsvRow>> rows = ParseTsvAnswer(answer, limits);
  if (!rows.ok() || rows->size() != 1) {
    return absl::DataLossError(absl::StrCat(
        "ClickHouse at ", Shard(shard), ": unexpected answer about its clusters: ",
        rows.ok() ? "no row" : rows.status().message()));
  }
  absl::StatusOr<uint64_t> shards = ParseUInt64Field((*rows)[0][0]);
  if (!shards.ok()) {
    return absl::DataLossError(absl::StrCat("ClickHouse at ", Shard(shard),
                                            ": unexpected answer about its clusters: ",
                                            shards.status().message()));
  }
  if (*shards == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ClickHouse at ", Shard(shard), " has no cluster '", cluster,
        "' in its remote_servers (-cluster names it; scripts/clickhouse-shards.sh writes "
        "cluster profcpu)"));
  }
  if (*shards != expected_shards) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ClickHouse at ", Shard(shard), ": cluster '", cluster, "' has ", *shards,
        " shards in its remote_servers, -store lists ", expected_shards,
        " URLs: list every shard's HTTP URL, once, in -store"));
  }
  return absl::OkStatus();
}

// Every table of `tables` exists on `shard` with these columns.
absl::Status CheckTables(const ClickHouseClient& shard, const std::vector<StoreTable>& tables) {
  PROFCPU_ASSIGN_OR_RETURN(
      std::string answer,
      shard.Query(absl::StrCat("SELECT table, name, type FROM system.columns WHERE database = ",
                               SqlQuote(kStoreDatabase))));
  TsvLimits limits;
  limits.fields = 3;
  limits.max_rows = 10000;
  absl::StatusOr<std::vector<TsvRow>> rows = ParseTsvAnswer(answer, limits);
  if (!rows.ok()) {
    return absl::DataLossError(absl::StrCat("ClickHouse at ", Shard(shard),
                                            ": unexpected answer listing its columns: ",
                                            rows.status().message()));
  }
  for (const StoreTable& table : tables) {
    std::vector<std::string> have;
    for (const TsvRow& row : *rows) {
      if (row[0] == table.name) have.push_back(absl::StrCat(row[1], " ", row[2]));
    }
    if (have == table.columns) continue;
    if (have.empty()) {
      return absl::DataLossError(absl::StrCat("ClickHouse at ", Shard(shard), ": table ",
                                              kStoreDatabase, ".", table.name,
                                              " is missing after CREATE"));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "ClickHouse at ", Shard(shard), ": table ", kStoreDatabase, ".", table.name,
        " has columns (", absl::StrJoin(have, ", "), "), this profcpu writes (",
        absl::StrJoin(table.columns, ", "),
        "): a store made by another version; drop the table or use another database"));
  }
  return absl::OkStatus();
}

// YYYYMMDD or YYYYMM of `t` in UTC.
int64_t DayNumber(absl::Time t) {
  const absl::CivilDay d = absl::ToCivilDay(t, absl::UTCTimeZone());
  return d.year() * 10000 + d.month() * 100 + d.day();
}
int64_t MonthNumber(absl::Time t) {
  const absl::CivilMonth m = absl::ToCivilMonth(t, absl::UTCTimeZone());
  return m.year() * 100 + m.month();
}

}  // namespace

std::vector<StoreTable> StoreTables(std::string_view cluster_name) {
  const absl::string_view cluster(cluster_name.data(), cluster_name.size());
  const std::vector<std::string> labels = LabelColumns();
  std::vector<StoreTable> tables;
  tables.push_back(Local(
      "samples_local",
      Concat(Concat({"time DateTime"}, labels),
             {"stack_id UInt64", "count UInt64", "window UInt64"}),
      "MergeTree PARTITION BY toDate(time) "
      "ORDER BY (namespace, pod, container, comm, time, stack_id)"));
  tables.push_back(Local("stacks_local", {"id UInt64", "frame_ids Array(UInt64)"},
                         "ReplacingMergeTree ORDER BY id"));
  tables.push_back(Local("frames_local",
                         {"id UInt64", "name String", "module String", "build_id String"},
                         "ReplacingMergeTree ORDER BY id"));
  tables.push_back(Local("losses_local",
                         {"time DateTime", "node String", "window UInt64", "samples UInt64",
                          "reason String"},
                         "MergeTree PARTITION BY toDate(time) ORDER BY (node, time)"));
  tables.push_back(Local("samples_hourly_local",
                         Concat(Concat({"hour DateTime"}, labels),
                                {"stack_id UInt64", "count UInt64"}),
                         "SummingMergeTree(count) PARTITION BY toYYYYMM(hour) "
                         "ORDER BY (namespace, pod, container, comm, hour, stack_id)"));
  const size_t locals = tables.size();
  // The roll-up: every insert into samples_local is summed by hour into
  // samples_hourly_local as it happens (TO: the view writes a table of
  // ours, which retention can drop partitions of).
  tables.push_back(StoreTable{
      "samples_hourly_mv",
      absl::StrCat("CREATE MATERIALIZED VIEW IF NOT EXISTS ", kStoreDatabase,
                   ".samples_hourly_mv TO ", kStoreDatabase,
                   ".samples_hourly_local AS SELECT toStartOfHour(time) AS hour, ",
                   absl::StrJoin(kLabelKeys, ", "), ", stack_id, count FROM ", kStoreDatabase,
                   ".samples_local"),
      {}});
  for (size_t i = 0; i < locals; ++i) tables.push_back(Distributed(tables[i], cluster));
  return tables;
}

absl::Status InitStore(const std::vector<ClickHouseClient>& shards, std::string cluster) {
  if (shards.empty()) return absl::InvalidArgumentError("no store URL");
  if (!ValidClusterName(cluster)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster name '", cluster, "' must be letters, digits and '_' (remote_servers' name)"));
  }
  for (const ClickHouseClient& shard : shards) {
    PROFCPU_RETURN_IF_ERROR(CheckCluster(shard, cluster, shards.size()));
  }
  const std::vector<StoreTable> tables = StoreTables(cluster);
  std::vector<StoreTable> with_columns;
  for (const StoreTable& t : tables) {
    if (!t.columns.empty()) with_columns.push_back(t);
  }
  for (const ClickHouseClient& shard : shards) {
    PROFCPU_RETURN_IF_ERROR(
        shard.Query(absl::StrCat("CREATE DATABASE IF NOT EXISTS ", kStoreDatabase)).status());
    for (const StoreTable& table : tables) {
      PROFCPU_RETURN_IF_ERROR(shard.Query(table.create_sql).status());
    }
    PROFCPU_RETURN_IF_ERROR(CheckTables(shard, with_columns));
  }
  return absl::OkStatus();
}

RetentionResult ApplyRetention(const std::vector<ClickHouseClient>& shards, absl::Duration keep,
                               absl::Duration keep_rollup, absl::Time now) {
  RetentionResult result;
  // A day partition D goes when D + 1 day <= now - keep, i.e. D is before
  // the day of (now - keep); months alike.
  const int64_t first_day_kept = DayNumber(now - keep);
  const int64_t first_month_kept = MonthNumber(now - keep_rollup);
  for (const ClickHouseClient& shard : shards) {
    // A shard without the tables (a wrong URL, init never run) is an error,
    // not "nothing to drop".
    absl::StatusOr<std::string> exists =
        shard.Query(absl::StrCat("EXISTS TABLE ", kStoreDatabase, ".samples_local"));
    if (!exists.ok()) {
      result.errors.push_back(std::string(exists.status().message()));
      continue;
    }
    if (*exists != "1\n") {
      result.errors.push_back(absl::StrCat("ClickHouse at ", shard.url(), " has no ",
                                           kStoreDatabase,
                                           ".samples_local: run profcpu fleet init first"));
      continue;
    }
    absl::StatusOr<std::string> answer = shard.Query(absl::StrCat(
        "SELECT DISTINCT table, partition_id FROM system.parts WHERE active AND database = ",
        SqlQuote(kStoreDatabase),
        " AND table IN ('samples_local', 'losses_local', 'samples_hourly_local') "
        "ORDER BY table, partition_id"));
    if (!answer.ok()) {
      result.errors.push_back(std::string(answer.status().message()));
      continue;
    }
    TsvLimits limits;
    limits.fields = 2;
    limits.max_rows = 100000;
    absl::StatusOr<std::vector<TsvRow>> rows = ParseTsvAnswer(*answer, limits);
    if (!rows.ok()) {
      result.errors.push_back(absl::StrCat("ClickHouse at ", shard.url(),
                                           ": unexpected answer listing partitions: ",
                                           rows.status().message()));
      continue;
    }
    for (const TsvRow& row : *rows) {
      const std::string& table = row[0];
      const std::string& id = row[1];
      const bool monthly = table == "samples_hourly_local";
      int64_t number = 0;
      const bool digits = std::all_of(id.begin(), id.end(), absl::ascii_isdigit);
      if (id.size() != (monthly ? 6u : 8u) || !digits || !absl::SimpleAtoi(id, &number)) {
        result.errors.push_back(absl::StrCat("ClickHouse at ", shard.url(), ": partition '",
                                             absl::CHexEscape(id.substr(0, 40)), "' of ", table,
                                             " is not a ", monthly ? "YYYYMM" : "YYYYMMDD",
                                             " id; left alone"));
        continue;
      }
      if (number >= (monthly ? first_month_kept : first_day_kept)) continue;
      absl::Status dropped = shard.Query(absl::StrCat("ALTER TABLE ", kStoreDatabase, ".", table,
                                                      " DROP PARTITION ID ", SqlQuote(id)))
                                 .status();
      if (!dropped.ok()) {
        result.errors.push_back(std::string(dropped.message()));
        continue;
      }
      result.dropped.push_back(DroppedPartition{shard.url(), table, id});
    }
  }
  return result;
}

}  // namespace profcpu::fleet
