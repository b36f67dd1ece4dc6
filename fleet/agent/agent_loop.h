// `profcpu agent`: profiles a node window after window until stopped and
// delivers every window to the fleet's store (ClickHouse).
//
//   the loop's thread:   collect a window (collector::Collect, -backend bpf,
//                        a low rate) ─► name it (window_profile.h, symbols
//                        cached across windows) ─► rows with labels
//                        (window_rows.h, process_labels.h) ─► handed over
//   the delivery thread: rows ─► payload ─► spool on disk ─► the shard
//                        (delivery.h), in order, retried while the store is
//                        down, nothing counted twice
//
// Each node writes to one shard (by its name's stable id), so a shard holds
// the stacks and frames of every sample it holds. SIGTERM or SIGINT ends the
// window being taken, which is delivered like the others; what the store
// cannot take before the agent exits stays in the spool for its next start.
#ifndef PROFCPU_FLEET_AGENT_AGENT_LOOP_H_
#define PROFCPU_FLEET_AGENT_AGENT_LOOP_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "collector/collection_options.h"
#include "fleet/store/clickhouse_client.h"

namespace profcpu::fleet {

struct AgentOptions {
  // The target and sampling, as collect's flags give them; the agent sets
  // each window's duration, recording and copies.
  collector::CollectionOptions collection;
  std::vector<std::string> store_urls;
  StoreLimits store_limits;
  std::string node;  // this node's name (the hostname unless -node)
  absl::Duration window = absl::Seconds(30);
  std::string spool_dir;
  uint64_t spool_cap_bytes = uint64_t{256} << 20;
  // Where each window's recording is made and removed once named.
  std::string work_dir;
  std::string kubelet_root = "/var/lib/kubelet";
  std::string version;  // profcpu's, for the log
  const std::atomic<bool>* stop_requested = nullptr;
  const std::atomic<int>* stop_signal = nullptr;
};

struct AgentTotals {
  uint64_t windows = 0;
  uint64_t samples = 0;  // taken and named
  uint64_t windows_sent = 0;
  uint64_t samples_sent = 0;
  uint64_t windows_lost = 0;
  uint64_t samples_lost = 0;
  uint64_t windows_waiting = 0;  // left in the spool at exit
};

// Runs until *stop_requested; logs a line per window to stderr.
absl::StatusOr<AgentTotals> RunAgent(const AgentOptions& options);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_AGENT_AGENT_LOOP_H_
