#include "collector/base/rooted_open.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "collector/base/errno_status.h"
#include "collector/base/file_io.h"

namespace profcpu::base {

absl::StatusOr<std::shared_ptr<RootDir>> RootDir::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open root ", path));
  return std::shared_ptr<RootDir>(new RootDir(UniqueFd(fd), path));
}

absl::StatusOr<UniqueFd> RootDir::OpenFile(const std::string& path) const {
  struct open_how how = {};
  how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, fd_.get(), path.c_str(), &how, sizeof(how));
  if (fd < 0) {
    return ErrnoStatus(errno, absl::StrCat("open ", path, " inside ", description_));
  }
  return UniqueFd(static_cast<int>(fd));
}

absl::StatusOr<std::string> RootDir::ReadFile(const std::string& path, size_t max_bytes) const {
  auto fd = OpenFile(path);
  if (!fd.ok()) return fd.status();
  // A FIFO or device planted by the target must not block or feed us forever.
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", path));
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " inside ", description_, " is not a regular file"));
  }
  return ReadFdBounded(fd->get(), max_bytes, absl::StrCat(description_, path));
}

}  // namespace profcpu::base
