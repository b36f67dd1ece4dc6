#include "fold/output_buffer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"

namespace profcpu::fold {

OutputBuffer::OutputBuffer(std::FILE* file) : file_(file), buffer_(&owned_) {
  owned_.reserve(kFlushBytes + (kFlushBytes >> 2));
}

OutputBuffer::OutputBuffer(std::string* text) : buffer_(text) {}

OutputBuffer::~OutputBuffer() {
  // A writer that returned early still leaves what it wrote.
  if (file_ != nullptr) Flush();
  if (writer_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    writer_.join();
  }
}

void OutputBuffer::WriterLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return pending_ || stopping_; });
    if (!pending_) return;
    const bool failed = !status_.ok();
    lock.unlock();
    // in_flight_ is ours while pending_ is set: the other side only waits.
    const bool short_write =
        !failed && std::fwrite(in_flight_.data(), 1, in_flight_.size(), file_) != in_flight_.size();
    const int error = errno;
    lock.lock();
    if (!failed && !short_write) written_ += in_flight_.size();
    if (short_write && status_.ok()) status_ = base::ErrnoStatus(error, "write output");
    in_flight_.clear();
    pending_ = false;
    changed_.notify_all();
  }
}

void OutputBuffer::WaitForWriter() {
  if (!writer_.joinable()) return;
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !pending_; });
}

void OutputBuffer::Flush() {
  if (buffer_->empty()) return;
  WaitForWriter();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    in_flight_.swap(*buffer_);
    pending_ = true;
  }
  if (!writer_.joinable()) {
    writer_ = std::thread([this] { WriterLoop(); });
  } else {
    changed_.notify_all();
  }
  // The swapped-in string kept its capacity from an earlier block (or is new).
  if (buffer_->capacity() < kFlushBytes) buffer_->reserve(kFlushBytes + (kFlushBytes >> 2));
}

void OutputBuffer::Preallocate(uint64_t bytes) {
  if (file_ == nullptr || bytes == 0) return;
  const int fd = ::fileno(file_);
  // Only a new, empty regular file: the bound is of this output alone.
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0) return;
  // KEEP_SIZE: the blocks are reserved past the end, the size still grows with
  // the writes, so a run killed mid-write leaves the text it wrote and no
  // zeros after it (Finish's truncate gives back the blocks left unused).
  preallocated_ = ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(bytes)) == 0;
}

absl::Status OutputBuffer::Finish() {
  if (file_ != nullptr) {
    Flush();
    WaitForWriter();
    std::lock_guard<std::mutex> lock(mutex_);
    if (status_.ok() && std::fflush(file_) != 0) status_ = base::ErrnoStatus(errno, "flush output");
    if (preallocated_) {
      // Whatever happened, the file ends where the text does.
      if (::ftruncate(::fileno(file_), static_cast<off_t>(written_)) != 0 && status_.ok()) {
        status_ = base::ErrnoStatus(errno, "truncate output");
      }
      preallocated_ = false;
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

absl::Status WriteFileThrough(const std::string& path,
                              const std::function<absl::Status(OutputBuffer*)>& write) {
  std::FILE* file = std::fopen(path.c_str(), "we");
  if (file == nullptr) return base::ErrnoStatus(errno, absl::StrCat("create ", path));
  absl::Status status;
  {
    OutputBuffer out(file);
    status = write(&out);
  }
  if (std::fclose(file) != 0 && status.ok()) {
    status = base::ErrnoStatus(errno, absl::StrCat("close ", path));
  }
  return status;
}

}  // namespace profcpu::fold
