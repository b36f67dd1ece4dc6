// Reads a recording's records on a thread of its own, a batch at a time, so
// that decompressing and decoding (a quarter of a replay) run on one core
// while the replay works through the batch before on the other. The records
// and the status come out exactly as RecordingReader::Next() gives them.
#ifndef PROFCPU_RECORDING_RECORD_PREFETCHER_H_
#define PROFCPU_RECORDING_RECORD_PREFETCHER_H_

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "recording/recording_reader.h"
#include "recording/records.h"

namespace profcpu::recording {

class RecordPrefetcher {
 public:
  // Starts reading `reader` (not owned; used by the thread until this object
  // is destroyed).
  explicit RecordPrefetcher(RecordingReader* reader);
  ~RecordPrefetcher();
  RecordPrefetcher(const RecordPrefetcher&) = delete;
  RecordPrefetcher& operator=(const RecordPrefetcher&) = delete;

  // The next batch of records (empty at the end, or on an error: then
  // status() says which). Batches are bounded, and so is how many wait.
  std::vector<Record> NextBatch();
  // Hands a batch back when done with it: the reading thread decodes the
  // next records into it (RecordingReader::NextInto), so samples reuse its
  // samples' memory, and what is freed is freed by the thread that
  // allocated it (glibc frees from another thread slowly).
  void Recycle(std::vector<Record> batch);
  absl::Status status();
  // CPU seconds the reading thread has spent so far (decompressing and
  // decoding): a parallel replay's part that does not split.
  double decode_cpu_seconds();

 private:
  static constexpr size_t kBatchRecords = 2048;
  static constexpr size_t kMaxWaitingBatches = 4;

  void ReadLoop();

  RecordingReader* reader_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<Record>> ready_;
  std::vector<std::vector<Record>> recycled_;
  bool done_ = false;       // the reader thread has read its last record
  bool stopping_ = false;   // the consumer is going away
  absl::Status status_;
  double decode_cpu_seconds_ = 0;
  std::thread thread_;
};

}  // namespace profcpu::recording

#endif  // PROFCPU_RECORDING_RECORD_PREFETCHER_H_
