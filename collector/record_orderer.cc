#include "collector/record_orderer.h"

#include <algorithm>

namespace profcpu::collector {

void RecordOrderer::Add(recording::Record record) {
  round_max_ = std::max(round_max_, recording::RecordTime(record));
  pending_.push_back(std::move(record));
}

absl::Status RecordOrderer::EndRound() {
  absl::Status status = EmitUpTo(previous_round_max_);
  previous_round_max_ = round_max_;
  return status;
}

absl::Status RecordOrderer::Flush() { return EmitUpTo(UINT64_MAX); }

absl::Status RecordOrderer::EmitUpTo(uint64_t time_ns) {
  // Stable: records with equal times keep their drain order (a FORK before
  // the new thread's first sample on the same CPU).
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const recording::Record& a, const recording::Record& b) {
                     return recording::RecordTime(a) < recording::RecordTime(b);
                   });
  size_t emitted = 0;
  absl::Status status;
  for (; emitted < pending_.size(); ++emitted) {
    if (recording::RecordTime(pending_[emitted]) > time_ns) break;
    status = sink_(pending_[emitted]);
    if (!status.ok()) {
      ++emitted;
      break;
    }
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(emitted));
  return status;
}

}  // namespace profcpu::collector
