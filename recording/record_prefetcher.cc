#include "recording/record_prefetcher.h"

#include <time.h>

#include <utility>

namespace profcpu::recording {
namespace {

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

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
    // Records are decoded into the recycled batch's: its samples' memory
    // is reused, and what is freed is freed here, where it was allocated.
    batch.resize(kBatchRecords);
    size_t filled = 0;
    while (filled < kBatchRecords) {
      absl::StatusOr<bool> read = reader_->NextInto(&batch[filled]);
      if (!read.ok()) {
        status = read.status();
        more = false;
        break;
      }
      if (!*read) {
        more = false;
        break;
      }
      ++filled;
    }
    batch.resize(filled);
    const double cpu = ThreadCpuSeconds();
    std::unique_lock<std::mutex> lock(mutex_);
    decode_cpu_seconds_ = cpu;
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

double RecordPrefetcher::decode_cpu_seconds() {
  std::lock_guard<std::mutex> lock(mutex_);
  return decode_cpu_seconds_;
}

absl::Status RecordPrefetcher::status() {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

}  // namespace profcpu::recording
