#include "base/direct_file_writer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "base/file_io.h"

namespace profcpu::base {

absl::StatusOr<std::unique_ptr<DirectFileWriter>> DirectFileWriter::Create(
    const std::string& path) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
  bool direct = true;
  int fd = ::open(path.c_str(), kFlags | O_DIRECT, 0666);
  if (fd < 0 && errno == EINVAL) {  // a filesystem without O_DIRECT (older tmpfs)
    direct = false;
    fd = ::open(path.c_str(), kFlags, 0666);
  }
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("create ", path));
  return std::unique_ptr<DirectFileWriter>(new DirectFileWriter(UniqueFd(fd), path, direct));
}

DirectFileWriter::DirectFileWriter(UniqueFd fd, std::string path, bool direct)
    : fd_(std::move(fd)), path_(std::move(path)), direct_(direct) {
  blocks_[0] = NewBlock();  // the second once the first is full
}

std::unique_ptr<char, DirectFileWriter::FreeDeleter> DirectFileWriter::NewBlock() {
  // On huge pages where the kernel allows (THP "madvise"): O_DIRECT pins
  // the block's pages for every write, 4 kB pages being a tenth of the
  // writer thread's cycles.
  std::unique_ptr<char, FreeDeleter> block(
      static_cast<char*>(std::aligned_alloc(kHugePageBytes, kBlockBytes)));
  if (block == nullptr) throw std::bad_alloc();
  ::madvise(block.get(), kBlockBytes, MADV_HUGEPAGE);
  return block;
}

DirectFileWriter::~DirectFileWriter() { Finish().IgnoreError(); }

void DirectFileWriter::AppendAcrossBlocks(absl::string_view text) {
  while (!text.empty()) {
    const size_t n = std::min(text.size(), kBlockBytes - filled_);
    std::memcpy(blocks_[filling_].get() + filled_, text.data(), n);
    filled_ += n;
    text.remove_prefix(n);
    if (filled_ == kBlockBytes) Submit();
  }
}

void DirectFileWriter::Reserve(uint64_t bytes) {
  if (bytes == 0 || submitted_ != 0 || reserved_) return;
  // KEEP_SIZE: a run killed mid-write leaves the text it wrote, no zeros.
  reserved_ = ::fallocate(fd_.get(), FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(bytes)) == 0;
}

void DirectFileWriter::Submit() {
  WaitForWriter();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!status_.ok()) {  // the file is broken: nothing more is written
      filled_ = 0;
      return;
    }
    in_flight_ = filling_;
    in_flight_bytes_ = filled_;
    pending_ = true;
  }
  if (!writer_.joinable()) {
    writer_ = std::thread([this] { WriterLoop(); });
  } else {
    changed_.notify_all();
  }
  submitted_ += filled_;
  filling_ ^= 1;
  filled_ = 0;
  if (blocks_[filling_] == nullptr) blocks_[filling_] = NewBlock();
}

void DirectFileWriter::WaitForWriter() {
  if (!writer_.joinable()) return;
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !pending_; });
}

void DirectFileWriter::WriterLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return pending_ || stopping_; });
    if (!pending_) return;
    lock.unlock();
    // blocks_[in_flight_] and direct_ are the writer's while pending_ is set.
    absl::Status status = WriteAll(blocks_[in_flight_].get(), in_flight_bytes_);
    lock.lock();
    if (!status.ok() && status_.ok()) status_ = std::move(status);
    pending_ = false;
    changed_.notify_all();
  }
}

void DirectFileWriter::DropDirect() {
  const int flags = ::fcntl(fd_.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd_.get(), F_SETFL, flags & ~O_DIRECT);
  direct_ = false;
}

absl::Status DirectFileWriter::WriteAll(const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd_.get(), data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      // O_DIRECT refused at the write (a device with larger blocks, a
      // filesystem that accepted the flag at open): the same bytes, cached.
      if (errno == EINVAL && direct_) {
        DropDirect();
        continue;
      }
      return ErrnoStatus(errno, absl::StrCat("write ", path_));
    }
    data += n;
    size -= static_cast<size_t>(n);
    // A short direct write leaves the file's end unaligned for the next one.
    if (size > 0 && direct_ && static_cast<size_t>(n) % kAlignment != 0) DropDirect();
  }
  return absl::OkStatus();
}

absl::Status DirectFileWriter::Finish() {
  if (finished_) {
    std::lock_guard<std::mutex> lock(mutex_);
    return status_;
  }
  finished_ = true;
  WaitForWriter();
  if (writer_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    writer_.join();
  }
  // The writer thread has ended: everything below is this thread's.
  absl::Status status = status_;
  if (status.ok() && filled_ > 0) {
    const char* block = blocks_[filling_].get();
    const size_t aligned = direct_ ? filled_ / kAlignment * kAlignment : filled_;
    status = WriteAll(block, aligned);
    if (status.ok() && aligned < filled_) {
      DropDirect();  // the tail's length is not a multiple of the alignment
      status = WriteAll(block + aligned, filled_ - aligned);
    }
    submitted_ += filled_;
    filled_ = 0;
  }
  if (reserved_ && status.ok() &&
      ::ftruncate(fd_.get(), static_cast<off_t>(submitted_)) != 0) {
    status = ErrnoStatus(errno, absl::StrCat("truncate ", path_));
  }
  if (::close(fd_.Release()) != 0 && status.ok()) {
    status = ErrnoStatus(errno, absl::StrCat("close ", path_));
  }
  status_ = status;
  return status;
}

absl::Status WriteFileDirect(const std::string& path, absl::string_view contents) {
  // A file smaller than a block costs the kernel little; the block's pages
  // would cost more.
  if (contents.size() < kDirectFileMinBytes) return WriteFile(path, contents);
  absl::StatusOr<std::unique_ptr<DirectFileWriter>> file = DirectFileWriter::Create(path);
  if (!file.ok()) return file.status();
  (*file)->Append(contents);
  return (*file)->Finish();
}

}  // namespace profcpu::base
