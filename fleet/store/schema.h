// The fleet store's tables on every shard (`profcpu fleet init`) and their
// retention (`profcpu fleet retention`). Database `profcpu`, the same on
// every shard: local tables (X_local) hold the rows a shard was sent, and a
// Distributed table X over the cluster reads them all. An agent sends every
// row of its node to one shard (StableId(node) % shards), so a shard holds
// the stacks and frames its samples name: a slice is aggregated and joined
// with its names on each shard, then merged by the client (docs/fleet.md).
//
// ClickHouse 18.16 (Debian's) has no ON CLUSTER without ZooKeeper and no
// TTL: the tables are created on each shard in turn, and retention drops
// whole day (month) partitions listed in system.parts.
#ifndef PROFCPU_FLEET_STORE_SCHEMA_H_
#define PROFCPU_FLEET_STORE_SCHEMA_H_

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "fleet/store/clickhouse_client.h"

namespace profcpu::fleet {

inline constexpr char kStoreDatabase[] = "profcpu";
inline constexpr char kDefaultCluster[] = "profcpu";

// The label columns of samples_local and samples_hourly_local, in order.
inline constexpr std::array<const char*, 10> kLabelKeys = {
    "node", "container", "cgroup", "pod_uid", "pod", "namespace", "comm", "exe", "runtime",
    "build_id"};

// One table of the schema: its name in `profcpu` and its CREATE statement.
struct StoreTable {
  std::string name;
  std::string create_sql;
  // "name Type" of every column, in order (empty for the materialized view).
  std::vector<std::string> columns;
};

// Every statement `InitStore` runs on a shard, in order (local tables, the
// roll-up's materialized view, then the Distributed tables over `cluster`).
std::vector<StoreTable> StoreTables(std::string_view cluster);

// Creates the database and every table on every shard (IF NOT EXISTS: run
// again, it changes nothing), after checking that each shard knows `cluster`
// in its remote_servers with as many shards as `shards` lists; then checks
// every table is there with the columns this version writes (a store made
// by another version is an error naming the table, not a silent mismatch).
// `cluster`: letters, digits and '_'.
absl::Status InitStore(const std::vector<ClickHouseClient>& shards, std::string cluster);

struct DroppedPartition {
  std::string url;
  std::string table;      // "samples_local"
  std::string partition;  // ClickHouse's partition id: "20240131", or "202401" for roll-ups
};

struct RetentionResult {
  std::vector<DroppedPartition> dropped;
  // One line per shard or partition that failed; the others were done.
  std::vector<std::string> errors;
  bool ok() const { return errors.empty(); }
};

// Drops, on every shard, the partitions of samples_local and losses_local
// (UTC days) that end `keep` or more before `now`, and those of
// samples_hourly_local (UTC months) that end `keep_rollup` or more before.
// A partition id it does not understand is left alone (reported in errors).
RetentionResult ApplyRetention(const std::vector<ClickHouseClient>& shards, absl::Duration keep,
                               absl::Duration keep_rollup, absl::Time now);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_STORE_SCHEMA_H_
