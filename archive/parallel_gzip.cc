#include "archive/parallel_gzip.h"

#include <algorithm>
#include <utility>

#include "base/file_io.h"
#include "archive/deflate.h"

namespace profcpu::archive {

namespace {

size_t Workers() {
  const unsigned cores = std::thread::hardware_concurrency();
  return std::clamp<size_t>(cores, 1, 8);
}

}  // namespace

ParallelGzipWriter::ParallelGzipWriter(int fd, size_t piece_bytes)
    : fd_(fd), piece_bytes_(piece_bytes), max_in_flight_(Workers() + 1) {
  current_.reserve(piece_bytes_);
}

ParallelGzipWriter::~ParallelGzipWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ParallelGzipWriter::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || !todo_.empty(); });
    if (todo_.empty()) return;
    std::shared_ptr<Piece> piece = std::move(todo_.front());
    todo_.pop_front();
    lock.unlock();
    absl::StatusOr<std::string> compressed =
        Deflate(piece->input, DeflateContainer::kGzip);
    std::string().swap(piece->input);
    // Deflate sized it for incompressible input; a piece waiting its turn to
    // be written holds what it compressed to (a tenth of it, typically).
    if (compressed.ok()) compressed->shrink_to_fit();
    lock.lock();
    if (compressed.ok()) {
      piece->output = std::move(*compressed);
    } else {
      piece->status = compressed.status();
    }
    piece->done = true;
    changed_.notify_all();
  }
}

void ParallelGzipWriter::Submit() {
  // An empty stream is still one (empty) member: a .gz file is never empty.
  if (current_.empty() && submitted_any_) return;
  submitted_any_ = true;
  auto piece = std::make_shared<Piece>();
  piece->input.swap(current_);
  current_.reserve(piece_bytes_);
  std::lock_guard<std::mutex> lock(mutex_);
  in_order_.push_back(piece);
  todo_.push_back(std::move(piece));
  // Workers start with the first pieces, up to one per core.
  if (workers_.size() < Workers()) workers_.emplace_back([this] { WorkerLoop(); });
  changed_.notify_all();
}

absl::Status ParallelGzipWriter::WriteFinished(bool all) {
  for (;;) {
    std::shared_ptr<Piece> piece;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (in_order_.empty()) return status_;
      // Without `all`, wait only while too many pieces are in memory.
      const bool must_wait = all || in_order_.size() > max_in_flight_;
      if (!in_order_.front()->done) {
        if (!must_wait) return status_;
        changed_.wait(lock, [this] { return in_order_.front()->done; });
      }
      piece = std::move(in_order_.front());
      in_order_.pop_front();
    }
    if (status_.ok()) status_ = piece->status;
    if (status_.ok()) status_ = base::WriteAll(fd_, piece->output, "the archive");
  }
}

absl::Status ParallelGzipWriter::Write(absl::string_view data) {
  while (!data.empty()) {
    const size_t n = std::min(data.size(), piece_bytes_ - current_.size());
    current_.append(data.data(), n);
    data.remove_prefix(n);
    if (current_.size() == piece_bytes_) {
      Submit();
      absl::Status status = WriteFinished(/*all=*/false);
      if (!status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

absl::Status ParallelGzipWriter::Finish() {
  Submit();
  return WriteFinished(/*all=*/true);
}

}  // namespace profcpu::archive
