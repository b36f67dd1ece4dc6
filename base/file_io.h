// Bounded file reading and whole-file writing. Everything profcpu reads from a
// target (perf maps, /proc files) is read with an explicit size limit so a
// hostile or runaway file cannot exhaust memory.
#ifndef PROFCPU_BASE_FILE_IO_H_
#define PROFCPU_BASE_FILE_IO_H_

#include <cstddef>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace profcpu::base {

// Reads at most `max_bytes` from `fd` (from its current position). If the file
// holds more, returns ResourceExhausted unless `truncate_ok`, in which case the
// first `max_bytes` are returned and `*truncated` (if given) is set.
absl::StatusOr<std::string> ReadFdBounded(int fd, size_t max_bytes, absl::string_view what,
                                          bool truncate_ok = false, bool* truncated = nullptr);

// Opens `path` read-only and reads it as ReadFdBounded does.
absl::StatusOr<std::string> ReadFileBounded(const std::string& path, size_t max_bytes,
                                            bool truncate_ok = false, bool* truncated = nullptr);

// Opens `path` read-only (O_CLOEXEC).
absl::StatusOr<UniqueFd> OpenReadOnly(const std::string& path);

// Writes `contents` to `path` (created or truncated, mode 0644).
absl::Status WriteFile(const std::string& path, absl::string_view contents);

// The part of `path` after its last '/' (all of it when it has none).
inline absl::string_view BaseName(absl::string_view path) {
  size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

// Writes all of `data` to `fd`, retrying on short writes and EINTR.
absl::Status WriteAll(int fd, absl::string_view data, absl::string_view what);

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_FILE_IO_H_
