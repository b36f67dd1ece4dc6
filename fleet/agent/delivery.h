// Delivery of the agent's windows to their shard, losing nothing silently.
// Windows go to the spool on disk first (spool.h), then to the store in the
// order they were taken; while the store is down or slow they wait there,
// and a restarted agent sends what an earlier one left. A window is sent
// again only after asking the store whether it holds it already (a send can
// time out after the store took it): one INSERT per table, and the samples'
// INSERT is one part of one partition (a window never spans UTC midnight),
// so a window is there whole or not at all. What the spool's cap pushes out
// is counted with its reason, in the log and in the store's losses table.
//
// Not thread-safe: the agent runs it on a thread of its own (agent_loop.h).
#ifndef PROFCPU_FLEET_AGENT_DELIVERY_H_
#define PROFCPU_FLEET_AGENT_DELIVERY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "fleet/agent/spool.h"
#include "fleet/agent/window_payload.h"
#include "fleet/store/clickhouse_client.h"

namespace profcpu::fleet {

struct DeliveryCounts {
  uint64_t windows_sent = 0;
  uint64_t samples_sent = 0;
  uint64_t windows_found_stored = 0;  // retried windows the store already held
  uint64_t windows_lost = 0;
  uint64_t samples_lost = 0;
};

class Delivery {
 public:
  using LogLine = std::function<void(bool warning, std::string_view line)>;

  Delivery(Spool* spool, ClickHouseClient shard, std::string node, LogLine log);

  // Into the spool; a loss the cap forces is counted and queued for the store.
  void Enqueue(const WindowPayload& window);
  // Sends the queued losses, then the spooled windows oldest first, until the
  // spool is empty (OK) or the store fails (its error; the rest waits).
  absl::Status SendSpooled();

  // Stacks and frames the shard holds (from windows delivered by this
  // agent): later windows leave them out. Bounded: cleared when full (the
  // store keeps one copy of ids sent twice).
  const absl::flat_hash_set<uint64_t>& delivered_ids() const { return delivered_ids_; }
  const DeliveryCounts& counts() const { return counts_; }
  bool spool_empty() const { return spool_->windows() == 0; }

 private:
  absl::Status SendLosses();
  // Whether the store holds the window's samples already.
  absl::StatusOr<bool> Stored(const WindowPayload& window) const;
  absl::Status Send(const WindowPayload& window);
  void CountLosses(const std::vector<SpoolLoss>& losses);

  Spool* spool_;
  ClickHouseClient shard_;
  std::string node_;
  LogLine log_;
  DeliveryCounts counts_;
  absl::flat_hash_set<uint64_t> delivered_ids_;
  // Windows whose outcome the store may know better than this agent: every
  // window recovered from the spool at start, and every window whose send
  // failed.
  absl::flat_hash_set<uint64_t> uncertain_;
  size_t recovered_;  // windows an earlier agent left, not yet sent
  std::string pending_losses_;  // losses_local rows, RowBinary
  uint64_t pending_loss_rows_ = 0;
};

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_AGENT_DELIVERY_H_
