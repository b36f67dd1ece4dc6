#include "recording/record_prefetcher.h"

#include <utility>

namespace profcpu::recording {

RecordPrefetcher::RecordPrefetcher(RecordingReader* reader)
    : reader_(reader), thread_([this] { ReadLoop(); }) {}

RecordPrefetcher::~RecordPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void RecordPrefetcher::ReadLoop() {
  absl::Status status;
  bool more = true;
  while (more) {
    std::vector<Record> batch;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!recycled_.empty()) {
        batch = std::move(recycled_.back());
        recycled_.pop_back();
      }
    }
    batch.clear();  // frees the records here, where they were made
    batch.reserve(kBatchRecords);
    while (batch.size() < kBatchRecords) {
      absl::StatusOr<std::optional<Record>> record = reader_->Next();
      if (!record.ok()) {
        status = record.status();
        more = false;
        break;
      }
      if (!record->has_value()) {
        more = false;
        break;
      }
      batch.push_back(std::move(**record));
    }
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return stopping_ || ready_.size() < kMaxWaitingBatches; });
    if (stopping_) return;
    if (!batch.empty()) ready_.push_back(std::move(batch));
    if (!more) {
      status_ = status;
      done_ = true;
    }
    changed_.notify_all();
  }
}

std::vector<Record> RecordPrefetcher::NextBatch() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !ready_.empty() || done_; });
  if (ready_.empty()) return {};
  std::vector<Record> batch = std::move(ready_.front());
  ready_.pop_front();
  changed_.notify_all();
  return batch;
}

void RecordPrefetcher::Recycle(std::vector<Record> batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!done_ && recycled_.size() < kMaxWaitingBatches) recycled_.push_back(std::move(batch));
}

absl::Status RecordPrefetcher::status() {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

}  // namespace profcpu::recording
