// Fills a fleet store for bench/fleet.sh with NODES nodes' worth of HOURS of
// windows grown from a real agent's recording: the windows one node stored
// (its rows per second, process and stack, as the agent wrote them) are
// replayed for every synthetic node, shifted in time, each node starting at
// another of the real windows. Stacks and frames are copied to every shard
// (a synthetic node's shard holds its names, as an agent's would).
// Prints the ingest rate of profcpu's client (RowBinary, gzip) in batches of
// windows.
//
// Usage: fleet_fill STORE_URLS SOURCE_NODE NODES HOURS END_UNIX_SECONDS [BATCH]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "fleet/store/clickhouse_client.h"
#include "fleet/store/row_binary.h"
#include "fleet/store/stable_id.h"
#include "fleet/store/tsv_answer.h"

namespace {

using profcpu::fleet::ClickHouseClient;

struct Row {
  uint32_t offset;  // seconds into its window
  std::vector<std::string> labels;  // container .. build_id, without node
  uint64_t stack_id;
  uint64_t count;
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "fleet_fill: %s\n", message.c_str());
  std::exit(1);
}

template <typename T>
T Check(absl::StatusOr<T> value) {
  if (!value.ok()) Die(std::string(value.status().message()));
  return *std::move(value);
}

uint64_t U64(const std::string& text) {
  uint64_t v = 0;
  if (!absl::SimpleAtoi(text, &v)) Die(absl::StrCat("not a number: ", text));
  return v;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) Die("usage: fleet_fill STORE_URLS SOURCE_NODE NODES HOURS END [BATCH]");
  const auto urls = Check(profcpu::fleet::SplitStoreUrls(argv[1]));
  const std::string source = argv[2];
  const uint64_t nodes = U64(argv[3]), hours = U64(argv[4]), end = U64(argv[5]);
  const uint64_t batch = argc > 6 ? U64(argv[6]) : 20;
  profcpu::fleet::StoreLimits limits;
  limits.timeout = absl::Seconds(120);
  limits.max_answer_bytes = uint64_t{1} << 30;
  std::vector<ClickHouseClient> shards = profcpu::fleet::StoreClients(urls, limits);
  const ClickHouseClient& home = shards[profcpu::fleet::StableId({source}) % shards.size()];

  // The source node's windows, as stored.
  const std::string quoted = profcpu::fleet::SqlQuote(source);
  profcpu::fleet::TsvLimits big;
  big.max_rows = 20'000'000;
  big.max_cells = 400'000'000;
  const auto stored = Check(profcpu::fleet::ParseTsvAnswer(
      Check(home.Query(absl::StrCat(
          "SELECT window, toUInt32(time), container, cgroup, pod_uid, pod, namespace, comm, exe, "
          "runtime, build_id, stack_id, count FROM profcpu.samples_local WHERE node = ",
          quoted, " ORDER BY window, time"))),
      big));
  std::vector<std::vector<Row>> windows;
  std::string last_window;
  uint32_t window_start = 0;
  for (const auto& r : stored) {
    if (r.size() != 13) Die("unexpected row");
    if (windows.empty() || r[0] != last_window) {
      windows.emplace_back();
      last_window = r[0];
      window_start = static_cast<uint32_t>(U64(r[1]));
    }
    windows.back().push_back({static_cast<uint32_t>(U64(r[1]) - window_start),
                              std::vector<std::string>(r.begin() + 2, r.begin() + 11), U64(r[11]),
                              U64(r[12])});
  }
  if (windows.empty()) Die(absl::StrCat("no windows of node ", source, " in the store"));
  uint64_t real_rows = 0;
  for (const auto& w : windows) real_rows += w.size();
  std::printf("source: %zu windows, %llu rows of node %s\n", windows.size(),
              static_cast<unsigned long long>(real_rows), source.c_str());
  std::fflush(stdout);  // before the progress on stderr, when both go to one file

  // Its stacks and frames onto every shard.
  for (const char* table : {"stacks_local", "frames_local"}) {
    const std::string rows = Check(home.Query(absl::StrCat(
        "SELECT * FROM profcpu.", table, " FORMAT RowBinary")));
    for (const ClickHouseClient& shard : shards) {
      if (&shard == &home) continue;
      if (auto s = shard.Insert(absl::StrCat("INSERT INTO profcpu.", table, " FORMAT RowBinary"),
                                rows);
          !s.ok()) {
        Die(std::string(s.message()));
      }
    }
  }

  // NODES x HOURS of 30 s windows, each node replaying the real windows from
  // its own starting point, BATCH windows per INSERT.
  constexpr uint32_t kWindow = 30;
  const uint64_t per_node = hours * 3600 / kWindow;
  const uint32_t first = static_cast<uint32_t>(end - per_node * kWindow);
  uint64_t inserted = 0, inserts = 0;
  double busy = 0;
  for (uint64_t n = 0; n < nodes; ++n) {
    const std::string node = absl::StrCat("bench-node-", n < 10 ? "0" : "", n);
    const ClickHouseClient& shard = shards[profcpu::fleet::StableId({node}) % shards.size()];
    std::string body;
    uint64_t body_rows = 0;
    auto flush = [&] {
      if (body.empty()) return;
      const auto started = std::chrono::steady_clock::now();
      if (auto s = shard.Insert(
              "INSERT INTO profcpu.samples_local (time, node, container, cgroup, pod_uid, pod, "
              "namespace, comm, exe, runtime, build_id, stack_id, count, window) FORMAT RowBinary",
              body);
          !s.ok()) {
        Die(std::string(s.message()));
      }
      busy += Seconds(started);
      inserted += body_rows;
      ++inserts;
      body.clear();
      body_rows = 0;
    };
    for (uint64_t w = 0; w < per_node; ++w) {
      const std::vector<Row>& real = windows[(w + n * 7) % windows.size()];
      const uint32_t start = first + static_cast<uint32_t>(w * kWindow);
      const uint64_t window_id = profcpu::fleet::StableId({node, absl::StrCat(start)});
      for (const Row& row : real) {
        profcpu::fleet::AppendUInt32(&body, start + std::min(row.offset, kWindow - 1));
        profcpu::fleet::AppendString(&body, node);
        for (const std::string& label : row.labels) profcpu::fleet::AppendString(&body, label);
        profcpu::fleet::AppendUInt64(&body, row.stack_id);
        profcpu::fleet::AppendUInt64(&body, row.count);
        profcpu::fleet::AppendUInt64(&body, window_id);
        ++body_rows;
      }
      if ((w + 1) % batch == 0) flush();
    }
    flush();
    std::fprintf(stderr, "\rfilled %llu of %llu nodes", static_cast<unsigned long long>(n + 1),
                 static_cast<unsigned long long>(nodes));
  }
  std::fprintf(stderr, "\n");
  std::printf("ingest (profcpu's client, RowBinary + gzip, %llu windows per INSERT): %llu rows in "
              "%llu INSERTs, %.1f s: %.0f rows/s\n",
              static_cast<unsigned long long>(batch), static_cast<unsigned long long>(inserted),
              static_cast<unsigned long long>(inserts), busy, inserted / busy);
  return 0;
}
