#include "nettrace/source.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/errno_status.h"

namespace profcpu::nettrace {

absl::StatusOr<size_t> NettraceStringSource::Read(char* buffer, size_t n) {
  n = std::min(n, bytes_.size());
  std::memcpy(buffer, bytes_.data(), n);
  bytes_.remove_prefix(n);
  return n;
}

absl::StatusOr<size_t> NettraceFdSource::Read(char* buffer, size_t n) {
  while (true) {
    ssize_t r = ::read(fd_, buffer, n);
    if (r >= 0) return static_cast<size_t>(r);
    if (errno != EINTR) return base::ErrnoStatus(errno, "read the nettrace stream");
  }
}

}  // namespace profcpu::nettrace
