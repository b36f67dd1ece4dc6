#include "fold/line_reader.h"

#include <errno.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "base/errno_status.h"
#include "base/file_io.h"

namespace profcpu::fold {
namespace {

// Large reads keep syscalls rare; the buffer also holds one unfinished line.
constexpr size_t kReadChunk = size_t{1} << 20;

}  // namespace

absl::StatusOr<LineReader> LineReader::Open(const std::string& path, size_t max_line_bytes) {
  absl::StatusOr<base::UniqueFd> fd = base::OpenReadOnly(path);
  if (!fd.ok()) return fd.status();
  return LineReader(*std::move(fd), max_line_bytes);
}

LineReader LineReader::FromFd(base::UniqueFd fd, size_t max_line_bytes) {
  return LineReader(std::move(fd), max_line_bytes);
}

LineReader LineReader::FromString(absl::string_view text, size_t max_line_bytes) {
  return LineReader(text, max_line_bytes);
}

LineReader::LineReader(base::UniqueFd fd, size_t max_line_bytes)
    : fd_(std::move(fd)),
      max_line_bytes_(max_line_bytes),
      storage_(new char[max_line_bytes + kReadChunk]),
      capacity_(max_line_bytes + kReadChunk) {
  data_ = storage_.get();
}

LineReader::LineReader(absl::string_view text, size_t max_line_bytes)
    : max_line_bytes_(max_line_bytes), data_(text.data()), end_(text.size()), eof_(true) {
  bytes_read_ = text.size();
}

bool LineReader::Next(absl::string_view* line) {
  while (true) {
    const void* newline = end_ > scanned_
                              ? std::memchr(data_ + scanned_, '\n', end_ - scanned_)
                              : nullptr;
    if (newline != nullptr) {
      size_t at = static_cast<const char*>(newline) - data_;
      size_t length = at - begin_;
      size_t start = begin_;
      begin_ = scanned_ = at + 1;
      if (skipping_) {
        skipping_ = false;  // the overlong line ends here
        continue;
      }
      if (length > max_line_bytes_) {
        ++overlong_lines_;
        continue;
      }
      *line = absl::string_view(data_ + start, length);
      return true;
    }
    scanned_ = end_;
    if (!skipping_ && end_ - begin_ > max_line_bytes_) {
      ++overlong_lines_;
      skipping_ = true;
    }
    if (skipping_) begin_ = end_;  // drop what we have of it
    if (eof_) {
      if (begin_ == end_) return false;
      *line = absl::string_view(data_ + begin_, end_ - begin_);
      begin_ = scanned_ = end_;
      return true;
    }
    if (!Refill()) return false;
  }
}

bool LineReader::Refill() {
  if (begin_ > 0) {
    std::memmove(storage_.get(), storage_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    scanned_ -= begin_;
    begin_ = 0;
  }
  while (true) {
    ssize_t n = ::read(fd_.get(), storage_.get() + end_, capacity_ - end_);
    if (n < 0) {
      if (errno == EINTR) continue;
      status_ = base::ErrnoStatus(errno, "read perf script text");
      return false;
    }
    if (n == 0) {
      eof_ = true;
    } else {
      end_ += static_cast<size_t>(n);
      bytes_read_ += static_cast<uint64_t>(n);
    }
    return true;
  }
}

}  // namespace profcpu::fold
