// `profcpu fleet init|retention`: the fleet store's tables on every
// ClickHouse shard, and dropping what is older than the store keeps.
// Parses flags and calls fleet/store (schema.h); nothing else.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "fleet/store/clickhouse_client.h"
#include "fleet/store/schema.h"
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/flags.h"

namespace profcpu::cli {
namespace {

constexpr char kFleetUsage[] =
    "Usage: profcpu fleet init -store URL[,URL...] [-cluster NAME]\n"
    "       profcpu fleet retention -store URL[,URL...] [-keep 7d] [-keep-rollup 90d]\n"
    "\n"
    "The fleet store: ClickHouse servers, one HTTP URL per shard (docs/fleet.md).\n"
    "  init       creates database profcpu and its tables on every shard (again: no change)\n"
    "  retention  drops the days and months of rows older than the store keeps\n"
    "\n"
    "Run 'profcpu fleet init --help' or 'profcpu fleet retention --help' for their flags.\n";

// "7d", "36h", "90m", "2w", "3600s" (a number and a unit) -> a duration.
absl::Status ParseFleetAge(const FlagSet& flags, absl::string_view name, absl::Duration* out) {
  const std::string value = flags.String(name);
  const std::string lower = absl::AsciiStrToLower(value);
  int64_t count = 0;
  absl::Duration unit;
  const char last = lower.empty() ? '\0' : lower.back();
  if (last == 's') unit = absl::Seconds(1);
  if (last == 'm') unit = absl::Minutes(1);
  if (last == 'h') unit = absl::Hours(1);
  if (last == 'd') unit = absl::Hours(24);
  if (last == 'w') unit = absl::Hours(24 * 7);
  if (unit == absl::ZeroDuration() ||
      !absl::SimpleAtoi(absl::string_view(lower).substr(0, lower.size() - 1), &count) ||
      count < 1 || count > 100000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "-", name, " must be a number and a unit (s, m, h, d or w), as 7d, got '", value, "'"));
  }
  *out = count * unit;
  return absl::OkStatus();
}

void AddFleetStoreFlags(FlagSet* flags) {
  flags->Add("store", "URL[,URL...]", "",
             "each ClickHouse shard's HTTP URL, http://HOST:PORT (required)");
  flags->Add("timeout", "SECONDS", "10",
             "longest wait to connect, and for each byte of an answer");
}

// The shards of -store, with -timeout; a usage error is returned as a status.
absl::StatusOr<std::vector<fleet::ClickHouseClient>> FleetStoreShards(const FlagSet& flags) {
  if (!flags.IsSet("store")) return absl::InvalidArgumentError("-store URL[,URL...] is required");
  absl::StatusOr<std::vector<std::string>> urls = fleet::SplitStoreUrls(flags.String("store"));
  if (!urls.ok()) return urls.status();
  double seconds = 0;
  if (absl::Status s = flags.Seconds("timeout", &seconds); !s.ok()) return s;
  if (seconds < 0.5 || seconds > 3600) {
    return absl::InvalidArgumentError("-timeout must be from 0.5 to 3600 seconds");
  }
  fleet::StoreLimits limits;
  limits.timeout = absl::Seconds(seconds);
  return fleet::StoreClients(*urls, limits);
}

int RunFleetInit(const std::vector<std::string>& args) {
  FlagSet flags("fleet init", "profcpu fleet init -store URL[,URL...] [-cluster NAME]",
                "Creates database profcpu on every ClickHouse shard of -store, with the tables\n"
                "agents write and queries read: samples_local (time, labels, stack id, count;\n"
                "a partition per UTC day), stacks_local (id -> frame ids), frames_local (id ->\n"
                "name, module, build-id), losses_local (what agents lost, and why) and\n"
                "samples_hourly_local (the hourly roll-up a materialized view fills), each with a\n"
                "Distributed table of the same name without _local over cluster NAME. First\n"
                "checks that every shard's remote_servers has cluster NAME with as many shards as\n"
                "-store lists. Running it again changes nothing (CREATE ... IF NOT EXISTS), and\n"
                "says so when a table exists with other columns.");
  AddFleetStoreFlags(&flags);
  flags.Add("cluster", "NAME", fleet::kDefaultCluster,
            "the cluster in the servers' remote_servers that lists every shard");
  if (std::optional<int> done = ParseCommandFlags(args, &flags)) return *done;
  if (!flags.positionals().empty()) return UsageError(flags, "fleet init takes no arguments");
  absl::StatusOr<std::vector<fleet::ClickHouseClient>> shards = FleetStoreShards(flags);
  if (!shards.ok()) return UsageError(flags, shards.status().message());
  const std::string cluster = flags.String("cluster");
  if (absl::Status s = fleet::InitStore(*shards, cluster); !s.ok()) {
    return CommandFailure("fleet init", s.message());
  }
  std::printf("store ready on %zu shard%s (cluster %s): tables samples, stacks, frames, losses, "
              "samples_hourly in database profcpu\n",
              shards->size(), shards->size() == 1 ? "" : "s", cluster.c_str());
  return kExitOk;
}

int RunFleetRetention(const std::vector<std::string>& args) {
  FlagSet flags("fleet retention",
                "profcpu fleet retention -store URL[,URL...] [-keep 7d] [-keep-rollup 90d]",
                "Drops, on every shard of -store, the partitions of samples and losses (one per\n"
                "UTC day) that ended -keep or longer ago, and those of the hourly roll-up\n"
                "samples_hourly (one per UTC month) that ended -keep-rollup or longer ago.\n"
                "Stacks and frames stay. Prints each partition dropped; a shard that fails is\n"
                "reported and the others are still done (exit 1). Run it daily (cron, a\n"
                "Kubernetes CronJob): ClickHouse 18.16 has no TTL to do it by itself.");
  AddFleetStoreFlags(&flags);
  flags.Add("keep", "AGE", "7d", "how long samples and losses stay (s, m, h, d, w)");
  flags.Add("keep-rollup", "AGE", "90d", "how long the hourly roll-up stays");
  if (std::optional<int> done = ParseCommandFlags(args, &flags)) return *done;
  if (!flags.positionals().empty()) return UsageError(flags, "fleet retention takes no arguments");
  absl::StatusOr<std::vector<fleet::ClickHouseClient>> shards = FleetStoreShards(flags);
  if (!shards.ok()) return UsageError(flags, shards.status().message());
  absl::Duration keep, keep_rollup;
  if (absl::Status s = ParseFleetAge(flags, "keep", &keep); !s.ok()) {
    return UsageError(flags, s.message());
  }
  if (absl::Status s = ParseFleetAge(flags, "keep-rollup", &keep_rollup); !s.ok()) {
    return UsageError(flags, s.message());
  }
  if (keep_rollup < keep) {
    return UsageError(flags, "-keep-rollup must be at least -keep (the roll-up outlives the rows)");
  }
  const fleet::RetentionResult result =
      fleet::ApplyRetention(*shards, keep, keep_rollup, absl::Now());
  for (const fleet::DroppedPartition& d : result.dropped) {
    std::printf("dropped %s partition %s on %s\n", d.table.c_str(), d.partition.c_str(),
                d.url.c_str());
  }
  std::printf("%zu partition%s dropped\n", result.dropped.size(),
              result.dropped.size() == 1 ? "" : "s");
  for (const std::string& error : result.errors) CommandFailure("fleet retention", error);
  return result.ok() ? kExitOk : kExitFailure;
}

}  // namespace

int RunFleet(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(kFleetUsage, stderr);
    return kExitUsage;
  }
  const std::string& sub = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (sub == "init") return RunFleetInit(rest);
  if (sub == "retention") return RunFleetRetention(rest);
  if (sub == "help" || sub == "-help" || sub == "--help" || sub == "-h") {
    std::fputs(kFleetUsage, stdout);
    return kExitOk;
  }
  std::fprintf(stderr, "profcpu fleet: unknown subcommand '%s'\n%s", sub.c_str(), kFleetUsage);
  return kExitUsage;
}

}  // namespace profcpu::cli
