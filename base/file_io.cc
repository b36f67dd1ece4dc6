#include "base/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"

namespace profcpu::base {

absl::StatusOr<std::string> ReadFdBounded(int fd, size_t max_bytes, absl::string_view what,
                                          bool truncate_ok, bool* truncated) {
  std::string out;
  if (truncated != nullptr) *truncated = false;
  char buffer[64 * 1024];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, absl::StrCat("read ", what));
    }
    if (n == 0) break;
    size_t room = max_bytes - out.size();
    if (static_cast<size_t>(n) > room) {
      out.append(buffer, room);
      if (!truncate_ok) {
        return absl::ResourceExhaustedError(
            absl::StrCat(what, " is larger than the limit of ", max_bytes, " bytes"));
      }
      if (truncated != nullptr) *truncated = true;
      break;
    }
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

absl::StatusOr<UniqueFd> OpenReadOnly(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open ", path));
  return UniqueFd(fd);
}

absl::StatusOr<std::string> ReadFileBounded(const std::string& path, size_t max_bytes,
                                            bool truncate_ok, bool* truncated) {
  auto fd = OpenReadOnly(path);
  if (!fd.ok()) return fd.status();
  return ReadFdBounded(fd->get(), max_bytes, path, truncate_ok, truncated);
}

absl::Status WriteAll(int fd, absl::string_view data, absl::string_view what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, absl::StrCat("write ", what));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status WriteFile(const std::string& path, absl::string_view contents) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("create ", path));
  absl::Status status = WriteAll(fd.get(), contents, path);
  if (!status.ok()) return status;
  if (::close(fd.Release()) != 0) return ErrnoStatus(errno, absl::StrCat("close ", path));
  return absl::OkStatus();
}

}  // namespace profcpu::base
