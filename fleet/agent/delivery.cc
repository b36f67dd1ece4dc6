#include "fleet/agent/delivery.h"

#include <ctime>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "fleet/store/row_binary.h"

namespace profcpu::fleet {
namespace {

// A million ids (about 40 MB with the set's overhead) before starting over.
constexpr size_t kMaxDeliveredIds = 1'000'000;
// Loss rows waiting for the store beyond this are merged into one.
constexpr uint64_t kMaxPendingLossRows = 10'000;

constexpr char kInsertFrames[] =
    "INSERT INTO profcpu.frames_local (id, name, module, build_id) FORMAT RowBinary";
constexpr char kInsertStacks[] =
    "INSERT INTO profcpu.stacks_local (id, frame_ids) FORMAT RowBinary";
constexpr char kInsertSamples[] =
    "INSERT INTO profcpu.samples_local (time, node, container, cgroup, pod_uid, pod, namespace, "
    "comm, exe, runtime, build_id, stack_id, count, window) FORMAT RowBinary";
constexpr char kInsertLosses[] =
    "INSERT INTO profcpu.losses_local (time, node, window, samples, reason) FORMAT RowBinary";

}  // namespace

Delivery::Delivery(Spool* spool, ClickHouseClient shard, std::string node, LogLine log)
    : spool_(spool),
      shard_(std::move(shard)),
      node_(std::move(node)),
      log_(std::move(log)),
      recovered_(spool->windows()) {}

void Delivery::CountLosses(const std::vector<SpoolLoss>& losses) {
  for (const SpoolLoss& loss : losses) {
    ++counts_.windows_lost;
    counts_.samples_lost += loss.samples;
    log_(true, absl::StrCat("window ", loss.window_id, " lost (", loss.samples,
                            " samples): ", loss.reason));
    if (pending_loss_rows_ >= kMaxPendingLossRows) continue;  // the log has it
    ++pending_loss_rows_;
    AppendUInt32(&pending_losses_, static_cast<uint32_t>(std::time(nullptr)));
    AppendString(&pending_losses_, node_);
    AppendUInt64(&pending_losses_, loss.window_id);
    AppendUInt64(&pending_losses_, loss.samples);
    AppendString(&pending_losses_, loss.reason);
  }
}

void Delivery::Enqueue(const WindowPayload& window) {
  auto losses = spool_->Put(window.window_id, window.samples, EncodeWindowPayload(window));
  if (!losses.ok()) {
    // The disk refused the window itself (full, read-only): it is lost.
    CountLosses({{window.window_id, window.samples,
                  absl::StrCat("spool write failed: ", losses.status().message())}});
    return;
  }
  CountLosses(*losses);
  CountLosses(spool_->TakeLosses());
}

absl::Status Delivery::SendLosses() {
  if (pending_loss_rows_ == 0) return absl::OkStatus();
  PROFCPU_RETURN_IF_ERROR(shard_.Insert(kInsertLosses, pending_losses_));
  pending_losses_.clear();
  pending_loss_rows_ = 0;
  return absl::OkStatus();
}

absl::StatusOr<bool> Delivery::Stored(const WindowPayload& window) const {
  PROFCPU_ASSIGN_OR_RETURN(
      std::string answer,
      shard_.Query(absl::StrCat("SELECT count() FROM profcpu.samples_local WHERE window = ",
                                window.window_id, " AND time BETWEEN toDateTime(",
                                window.first_second, ") AND toDateTime(", window.last_second,
                                ")")));
  uint64_t rows = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(answer), &rows)) {
    return absl::DataLossError(
        absl::StrCat("ClickHouse at ", shard_.url(), " answered a count with '",
                     answer.substr(0, 40), "'"));
  }
  return rows > 0;
}

absl::Status Delivery::Send(const WindowPayload& window) {
  if (!window.frames_body.empty()) PROFCPU_RETURN_IF_ERROR(shard_.Insert(kInsertFrames, window.frames_body));
  if (!window.stacks_body.empty()) PROFCPU_RETURN_IF_ERROR(shard_.Insert(kInsertStacks, window.stacks_body));
  if (!window.samples_body.empty()) {
    PROFCPU_RETURN_IF_ERROR(shard_.Insert(kInsertSamples, window.samples_body));
  }
  return absl::OkStatus();
}

absl::Status Delivery::SendSpooled() {
  CountLosses(spool_->TakeLosses());
  PROFCPU_RETURN_IF_ERROR(SendLosses());
  while (std::optional<SpoolEntry> entry = spool_->Oldest()) {
    auto window = DecodeWindowPayload(entry->payload);
    if (!window.ok()) {
      CountLosses({{entry->window_id, entry->samples,
                    absl::StrCat("unreadable spool file: ", window.status().message())}});
      if (recovered_ > 0) --recovered_;
      PROFCPU_RETURN_IF_ERROR(spool_->Remove(entry->seq));
      continue;
    }
    bool stored = false;
    // Whatever an earlier agent left may have reached the store already:
    // the windows found at start come first, oldest first.
    if (recovered_ > 0) {
      --recovered_;
      uncertain_.insert(window->window_id);
    }
    if (uncertain_.contains(window->window_id)) {
      PROFCPU_ASSIGN_OR_RETURN(stored, Stored(*window));
    }
    if (stored) {
      ++counts_.windows_found_stored;
      log_(false, absl::StrCat("window ", window->window_id,
                               " was stored by an earlier send that timed out: not sent again"));
    } else if (absl::Status sent = Send(*window); !sent.ok()) {
      uncertain_.insert(window->window_id);
      return sent;
    }
    uncertain_.erase(window->window_id);
    ++counts_.windows_sent;
    counts_.samples_sent += window->samples;
    if (delivered_ids_.size() + window->stack_ids.size() + window->frame_ids.size() >
        kMaxDeliveredIds) {
      delivered_ids_.clear();
    }
    delivered_ids_.insert(window->stack_ids.begin(), window->stack_ids.end());
    delivered_ids_.insert(window->frame_ids.begin(), window->frame_ids.end());
    PROFCPU_RETURN_IF_ERROR(spool_->Remove(entry->seq));
  }
  return absl::OkStatus();
}

}  // namespace profcpu::fleet
