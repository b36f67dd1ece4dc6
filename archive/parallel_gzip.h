// Compresses a stream into a .gz file on every core: the input is cut into
// 1 MiB pieces, each compressed by zlib (level 6, as gzip and libarchive use)
// into a gzip member of its own on a worker thread, and the members are
// written in order. A file of several members is one gzip file (RFC 1952
// 2.2): gzip, tar, libarchive, Python and archive_input.h read it whole. prof.tar.gz holds
// every output, perf_script.out hundreds of megabytes of it on deep stacks:
// compressing it on one core was most of what collect's user waited for
// after the samples were taken. 1 MiB rather than larger pieces: on a deep
// stack's perf script the archive is 3% larger than with 4 MiB pieces, and
// collect's peak memory 9 MiB smaller (at most workers + 2 pieces are held).
#ifndef PROFCPU_ARCHIVE_PARALLEL_GZIP_H_
#define PROFCPU_ARCHIVE_PARALLEL_GZIP_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace profcpu::archive {

class ParallelGzipWriter {
 public:
  // Writes to `fd` (not owned).
  explicit ParallelGzipWriter(int fd, size_t piece_bytes = size_t{1} << 20);
  ~ParallelGzipWriter();
  ParallelGzipWriter(const ParallelGzipWriter&) = delete;
  ParallelGzipWriter& operator=(const ParallelGzipWriter&) = delete;

  absl::Status Write(absl::string_view data);
  // Compresses and writes what is left; the first error of all.
  absl::Status Finish();

 private:
  struct Piece {
    std::string input;
    std::string output;
    bool done = false;
    absl::Status status;
  };

  void Submit();
  void WorkerLoop();
  // Writes the finished pieces at the front, in order; with `all`, waits
  // for every piece.
  absl::Status WriteFinished(bool all);

  const int fd_;
  const size_t piece_bytes_;
  const size_t max_in_flight_;
  std::string current_;
  bool submitted_any_ = false;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Piece>> in_order_;  // submitted, not yet written
  std::deque<std::shared_ptr<Piece>> todo_;      // submitted, not yet taken
  std::vector<std::thread> workers_;
  bool stopping_ = false;
  absl::Status status_;
};

}  // namespace profcpu::archive

#endif  // PROFCPU_ARCHIVE_PARALLEL_GZIP_H_
