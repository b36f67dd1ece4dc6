#include "fleet/agent/agent_loop.h"

#include <malloc.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "collector/proc/cgroup.h"
#include "fleet/agent/agent_defaults.h"
#include "fleet/agent/delivery.h"
#include "fleet/agent/process_labels.h"
#include "fleet/agent/spool.h"
#include "fleet/agent/window_collection.h"
#include "fleet/store/stable_id.h"

namespace profcpu::fleet {
namespace {

// This process's resident memory now, in MB (0 if /proc does not say).
uint64_t ResidentMegabytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long pages = 0, resident = 0;
  const int read = std::fscanf(f, "%llu %llu", &pages, &resident);
  std::fclose(f);
  return read == 2 ? resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) >> 20 : 0;
}

// Lines on stderr (the container's log), whole lines from either thread.
class AgentLog {
 public:
  void Line(bool warning, std::string_view text) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::fprintf(stderr, "%s profcpu agent: %s%.*s\n",
                 absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone()).c_str(),
                 warning ? "warning: " : "", static_cast<int>(text.size()), text.data());
  }

 private:
  std::mutex mutex_;
};

// The delivery thread: takes the loop's windows, spools and sends them.
class DeliveryThread {
 public:
  DeliveryThread(Delivery* delivery, AgentLog* log) : delivery_(delivery), log_(log) {
    thread_ = std::thread([this] { Run(); });
  }
  ~DeliveryThread() { Finish(); }

  void Hand(TakenWindow window) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      handed_.push_back(std::move(window));
    }
    wake_.notify_one();
  }
  // Spools what was handed, makes one last attempt to send, and joins.
  void Finish() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finishing_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

 private:
  void Run() {
    absl::Duration backoff = absl::Seconds(1);
    absl::Time retry_at = absl::InfinitePast();
    bool store_down = false;
    while (true) {
      std::deque<TakenWindow> windows;
      bool finishing = false;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        const auto wait = std::chrono::nanoseconds(
            absl::ToInt64Nanoseconds(std::max(retry_at - absl::Now(), absl::ZeroDuration())));
        wake_.wait_for(lock, delivery_->spool_empty() ? std::chrono::hours(1) : wait,
                       [&] { return !handed_.empty() || finishing_; });
        windows.swap(handed_);
        finishing = finishing_;
      }
      for (const TakenWindow& window : windows) {
        delivery_->Enqueue(BuildWindowPayload(window.rows, window.window_id,
                                              delivery_->delivered_ids()));
      }
      if (absl::Now() < retry_at && !finishing) continue;
      if (absl::Status sent = delivery_->SendSpooled(); sent.ok()) {
        if (store_down) log_->Line(false, "the store answers again; the spool is empty");
        store_down = false;
        backoff = absl::Seconds(1);
        retry_at = absl::InfinitePast();
      } else {
        if (!store_down) {
          log_->Line(true, absl::StrCat(sent.message(), "; windows wait in the spool"));
        }
        store_down = true;
        retry_at = absl::Now() + backoff;
        backoff = std::min(backoff * 2, absl::Seconds(30));
      }
      if (finishing) return;
    }
  }

  Delivery* delivery_;
  AgentLog* log_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<TakenWindow> handed_;
  bool finishing_ = false;
  std::thread thread_;
};

}  // namespace

absl::StatusOr<AgentTotals> RunAgent(const AgentOptions& options) {
  AgentLog log;
  if (options.store_urls.empty()) return absl::InvalidArgumentError("no store URL");
  const ClickHouseClient shard(
      options.store_urls[StableId({options.node}) % options.store_urls.size()],
      options.store_limits);
  PROFCPU_ASSIGN_OR_RETURN(Spool spool, Spool::Open(options.spool_dir, options.spool_cap_bytes));
  std::error_code error;
  std::filesystem::create_directories(options.work_dir, error);
  if (error) {
    return absl::InternalError(absl::StrCat("create ", options.work_dir, ": ", error.message()));
  }
  log.Line(false, absl::StrCat("profcpu ", options.version, " on node ", options.node,
                               ": windows of ", absl::FormatDuration(options.window), " at ",
                               options.collection.sampler.rate, " Hz, to ", shard.url(),
                               "; spool ", options.spool_dir, " (",
                               spool.windows(), " windows waiting)"));
  Delivery delivery(&spool, shard, options.node,
                    [&log](bool warning, std::string_view line) { log.Line(warning, line); });
  LabelSources sources;
  sources.node = options.node;
  sources.kubelet_pods = absl::StrCat(options.kubelet_root, "/pods");
  // In a container of its own, the agent sees other pods' cgroups relative
  // to its cgroup namespace; the namespace's root on the node makes them whole.
  if (absl::StatusOr<std::string> mount = collector::CgroupV2Mount(); mount.ok()) {
    sources.cgroup_namespace_root = FindCgroupNamespaceRoot("/proc", *mount);
  }
  ProcessLabelCache labels(std::move(sources));
  symbolize::LoadedSymbolCacheOptions cache_options;
  cache_options.max_bytes = kAgentSymbolCacheBytes;
  symbolize::LoadedSymbolCache symbols(cache_options);
  AgentTotals totals;
  // The same warning every window (a process's missing perf map) is said once.
  absl::flat_hash_set<std::string> warnings_seen;
  {
    DeliveryThread sender(&delivery, &log);
    for (uint64_t n = 0; !options.stop_requested->load(); ++n) {
      const std::string folder = absl::StrCat(options.work_dir, "/window-", n);
      auto taken = TakeWindow(options.collection, options.window, folder, options.node, &labels, &symbols);
      if (!taken.ok()) {
        log.Line(true, absl::StrCat("window ", n, ": ", taken.status().message()));
        // A machine that cannot sample at all will not start sampling by
        // retrying at once; a passing failure (a process gone mid-setup)
        // costs a window.
        if (n == 0) return taken.status();
        absl::SleepFor(absl::Seconds(1));
        continue;
      }
      for (const std::string& warning : taken->warnings) {
        if (warnings_seen.size() >= 4096) warnings_seen.clear();  // bounded: may repeat
        if (warnings_seen.insert(warning).second) log.Line(true, warning);
      }
      ++totals.windows;
      totals.samples += taken->rows.total;
      // What naming freed goes back to the system: the agent's footprint
      // is what it keeps, not its largest window.
      ::malloc_trim(0);
      log.Line(false, absl::StrFormat(
                          "window %d: %d samples (%d lost), %d stacks, %d processes' labels; "
                          "sampled %s, named in %s; %d MB resident",
                          taken->window_id, taken->rows.total, taken->lost,
                          taken->rows.stacks.size(), taken->rows.labels.size(),
                          absl::FormatDuration(taken->collected),
                          absl::FormatDuration(taken->named), ResidentMegabytes()));
      sender.Hand(*std::move(taken));
    }
    sender.Finish();
  }
  const DeliveryCounts& sent = delivery.counts();
  totals.windows_sent = sent.windows_sent;
  totals.samples_sent = sent.samples_sent;
  totals.windows_lost = sent.windows_lost;
  totals.samples_lost = sent.samples_lost;
  totals.windows_waiting = spool.windows();
  log.Line(false, absl::StrFormat(
                      "stopped: %d windows, %d samples taken; %d windows (%d samples) stored, "
                      "%d already stored on retry; %d windows (%d samples) lost; "
                      "%d windows wait in the spool",
                      totals.windows, totals.samples, sent.windows_sent, sent.samples_sent,
                      sent.windows_found_stored, sent.windows_lost, sent.samples_lost,
                      totals.windows_waiting));
  std::filesystem::remove_all(options.work_dir, error);
  return totals;
}

}  // namespace profcpu::fleet
