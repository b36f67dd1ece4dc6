// `profcpu query`: a slice of the fleet's store drawn as profile.html, a
// flame graph, folded stacks or pprof (fleet/query/query_run.h does the work;
// this file only reads the flags).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fleet/query/query_run.h"
#include "fleet/store/clickhouse_client.h"
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/flags.h"
#include "scripts/cli/version.h"

namespace profcpu::cli {
namespace {

int QueryFailed(absl::string_view message) { return CommandFailure("query", message); }

}  // namespace

int RunQuery(const std::vector<std::string>& args) {
  FlagSet flags(
      "query",
      "profcpu query -store URL[,URL...] -from T -to T [-where FILTER] [-diff FROM..TO | "
      "-diff-where FILTER] [-by LABEL [-top N]] [-max-stacks N] -o FILE",
      "Draws a slice of the fleet's store (profcpu agent's samples in ClickHouse):\n"
      "every shard aggregates its own samples and names its own stacks, profcpu merges\n"
      "them. FILE's extension says what to write: .html (profile.html, its heatmap the\n"
      "slice's time axis), .svg (flame graph), .folded (folded stacks), .pb.gz (pprof).\n"
      "Times: RFC 3339 (2026-11-27T14:02:00Z) or relative to now (now, -1h, -30m, -2d).\n"
      "FILTER: label matchers joined by commas, KEY=VALUE, KEY!=VALUE, KEY=~REGEX,\n"
      "KEY!~REGEX (regexes RE2, anchored), KEY one of node container cgroup pod_uid pod\n"
      "namespace comm exe runtime build_id:\n"
      "  profcpu query -store http://ch1:8123,http://ch2:8123 -from -1h -to now \\\n"
      "    -where 'namespace=shop,pod=~api-.*' -o profile.html\n"
      "Ranges older than -keep, or longer than 2 days, read the hourly roll-up.");
  flags.Add("store", "URL[,URL...]", "", "every shard's ClickHouse HTTP URL (required)");
  flags.Add("from", "T", "", "start of the slice (required)");
  flags.Add("to", "T", "now", "end of the slice");
  flags.Add("where", "FILTER", "", "keep only samples whose labels match");
  flags.Add("diff", "FROM..TO", "",
            "differential view against this range (the baseline), e.g. -diff -2h..-1h");
  flags.Add("diff-where", "FILTER", "",
            "differential view against the same range under this filter (.svg or .folded)");
  flags.Add("by", "LABEL", "", "one output per value of LABEL (FILE.VALUE.ext), top -top values");
  flags.Add("top", "N", "10", "with -by: how many values (by samples)");
  flags.Add("max-stacks", "N", "2000",
            "keep the N stacks with most samples; the rest count as one [other] stack");
  flags.Add("keep", "DURATION", "7d",
            "how long the store keeps raw samples (fleet retention's -keep): older ranges read "
            "the hourly roll-up");
  flags.Add("timeout", "SEC", "30", "per request to a shard");
  flags.Add("o", "FILE", "", "the output (required): .html, .svg, .folded or .pb.gz");
  if (std::optional<int> done = ParseCommandFlags(args, &flags)) return *done;
  if (!flags.positionals().empty()) return UsageError(flags, "takes no positional arguments");
  for (const char* required : {"store", "from", "o"}) {
    if (flags.String(required).empty()) {
      return UsageError(flags, absl::StrCat("-", required, " is required"));
    }
  }

  fleet::QueryRequest request;
  request.now = absl::Now();
  request.output = flags.String("o");
  request.generator = absl::StrCat("profcpu ", kProfcpuVersion);
  auto range = fleet::ParseTimeRange(flags.String("from"), flags.String("to"), request.now);
  if (!range.ok()) return UsageError(flags, range.status().message());
  request.range = *range;
  auto filter = fleet::ParseLabelFilter(flags.String("where"));
  if (!filter.ok()) return UsageError(flags, filter.status().message());
  request.filter = *filter;
  if (flags.IsSet("diff")) {
    auto span = fleet::ParseTimeSpan(flags.String("diff"), request.now);
    if (!span.ok()) return UsageError(flags, absl::StrCat("-diff: ", span.status().message()));
    request.diff_range = *span;
  }
  if (flags.IsSet("diff-where")) {
    auto other = fleet::ParseLabelFilter(flags.String("diff-where"));
    if (!other.ok()) return UsageError(flags, other.status().message());
    request.diff_filter = *other;
  }
  request.by_label = flags.String("by");
  if (!request.by_label.empty() && !fleet::IsLabelKey(request.by_label)) {
    return UsageError(flags, absl::StrCat("-by ", request.by_label, ": not a label key"));
  }
  int64_t top = 0, max_stacks = 0;
  if (absl::Status s = flags.Int("top", 1, 1000, &top); !s.ok()) return UsageError(flags, s.message());
  if (absl::Status s = flags.Int("max-stacks", 1, fleet::kMaxStacksLimit, &max_stacks); !s.ok()) {
    return UsageError(flags, s.message());
  }
  request.top_values = static_cast<uint64_t>(top);
  request.max_stacks = static_cast<uint64_t>(max_stacks);
  auto keep = fleet::ParseDurationText(flags.String("keep"));
  if (!keep.ok()) return UsageError(flags, absl::StrCat("-keep ", keep.status().message()));
  request.raw_keep = *keep;
  double timeout_s = 0;
  if (absl::Status s = flags.Seconds("timeout", &timeout_s); !s.ok() || timeout_s <= 0) {
    return UsageError(flags, "-timeout: a positive number of seconds");
  }

  auto urls = fleet::SplitStoreUrls(flags.String("store"));
  if (!urls.ok()) return UsageError(flags, urls.status().message());
  fleet::StoreLimits limits;
  limits.timeout = absl::Seconds(timeout_s);
  const std::vector<fleet::ClickHouseClient> clients = fleet::StoreClients(*urls, limits);
  fleet::Shards shards{clients.size(), [&clients](size_t shard, const std::string& sql) {
                         return clients[shard].Query(sql);
                       }};

  absl::StatusOr<fleet::QueryReport> report = fleet::RunQuery(shards, request);
  if (!report.ok()) return QueryFailed(report.status().message());
  if (report->hourly) {
    std::fprintf(stderr, "profcpu query: read the hourly roll-up, %s .. %s\n",
                 fleet::FormatTimePoint(report->read_range.from).c_str(),
                 fleet::FormatTimePoint(report->read_range.to).c_str());
  }
  if (report->outputs.empty()) {
    std::fprintf(stderr, "profcpu query: no samples match: no %s value, nothing written\n",
                 request.by_label.c_str());
  }
  for (const fleet::QueryOutput& output : report->outputs) {
    std::string line = absl::StrCat("profcpu query: wrote ", output.path, ": ", output.samples,
                                    " samples");
    if (output.other > 0) {
      absl::StrAppend(&line, ", ", output.other, " in [other] (past -max-stacks ",
                      request.max_stacks, ")");
    }
    if (request.diff_range || request.diff_filter) {
      absl::StrAppend(&line, "; baseline ", output.baseline_samples, " samples");
    }
    if (output.names.stacks_without_names + output.names.frames_without_names > 0) {
      absl::StrAppend(&line, "; not in the store's names: ", output.names.stacks_without_names,
                      " stacks, ", output.names.frames_without_names, " frames");
    }
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  return kExitOk;
}

}  // namespace profcpu::cli
