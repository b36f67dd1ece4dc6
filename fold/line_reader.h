// Splits a text stream into lines without copying them: lines are views into
// a reused buffer, refilled with large reads. Memory is bounded: a line longer
// than `max_line_bytes` is skipped (and counted), never buffered whole, since
// perf script text may come from a hostile target's symbol names.
#ifndef PROFCPU_FOLD_LINE_READER_H_
#define PROFCPU_FOLD_LINE_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/unique_fd.h"

namespace profcpu::fold {

class LineReader {
 public:
  // Real perf output stays far below this; C++ template names reach tens of KiB.
  static constexpr size_t kDefaultMaxLineBytes = size_t{1} << 20;

  // Reads the file at `path`.
  static absl::StatusOr<LineReader> Open(const std::string& path,
                                         size_t max_line_bytes = kDefaultMaxLineBytes);
  // Reads from `fd` (a file or a pipe) until end of file.
  static LineReader FromFd(base::UniqueFd fd, size_t max_line_bytes = kDefaultMaxLineBytes);
  // Reads `text`, which must outlive the reader. Same line rules as a file.
  static LineReader FromString(absl::string_view text,
                               size_t max_line_bytes = kDefaultMaxLineBytes);

  LineReader(LineReader&&) = default;
  LineReader& operator=(LineReader&&) = default;

  // Sets `*line` to the next line without its '\n' (a last line without one
  // counts too) and returns true; false at the end of input or after a read
  // error (see status()). The view is valid until the next call.
  bool Next(absl::string_view* line);

  const absl::Status& status() const { return status_; }
  uint64_t overlong_lines() const { return overlong_lines_; }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  LineReader(base::UniqueFd fd, size_t max_line_bytes);
  LineReader(absl::string_view text, size_t max_line_bytes);

  // Moves the unfinished line to the front and reads more. False at the end
  // of input or on error.
  bool Refill();

  base::UniqueFd fd_;
  size_t max_line_bytes_;
  std::unique_ptr<char[]> storage_;
  size_t capacity_ = 0;
  const char* data_ = nullptr;  // storage_ or the caller's text
  size_t begin_ = 0;            // start of the unread data
  size_t scanned_ = 0;          // [begin_, scanned_) holds no '\n'
  size_t end_ = 0;              // end of the valid data
  bool eof_ = false;
  bool skipping_ = false;  // inside an overlong line, dropping until '\n'
  absl::Status status_;
  uint64_t overlong_lines_ = 0;
  uint64_t bytes_read_ = 0;
};

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_LINE_READER_H_
