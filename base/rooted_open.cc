#include "base/rooted_open.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "base/file_io.h"

namespace profcpu::base {

absl::StatusOr<std::shared_ptr<RootDir>> RootDir::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open root ", path));
  return std::shared_ptr<RootDir>(new RootDir(UniqueFd(fd), path));
}

absl::StatusOr<UniqueFd> RootDir::OpenInside(const std::string& path, uint64_t flags) const {
  struct open_how how = {};
  how.flags = flags | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, fd_.get(), path.c_str(), &how, sizeof(how));
  if (fd < 0) {
    return ErrnoStatus(errno, absl::StrCat("open ", path, " inside ", description_));
  }
  return UniqueFd(static_cast<int>(fd));
}

absl::StatusOr<UniqueFd> RootDir::OpenFile(const std::string& path) const {
  if (auto kept = kept_.find(path); kept != kept_.end()) {
    // A new open file description, so readers never share a file offset.
    int fd = ::open(absl::StrCat("/proc/self/fd/", kept->second.get()).c_str(),
                    O_RDONLY | O_CLOEXEC);
    if (fd >= 0) return UniqueFd(fd);
  }
  return OpenNow(path);
}

absl::Status RootDir::Keep(const std::string& path, const std::string& fallback) {
  if (kept_.contains(path)) return absl::OkStatus();
  if (kept_.size() >= kMaxKeptFiles) {
    return absl::ResourceExhaustedError(absl::StrCat("already keeping ", kept_.size(), " files"));
  }
  absl::StatusOr<UniqueFd> fd = OpenNow(path);
  if (!fd.ok() && !fallback.empty()) {
    // Outside this root on purpose: the caller names a file of the kernel's
    // own (/proc/PID/map_files), never a path taken from the target.
    int opened = ::open(fallback.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (opened >= 0) fd = UniqueFd(opened);
  }
  if (!fd.ok()) return fd.status();
  struct stat st;
  if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " is not a regular file"));
  }
  kept_.emplace(path, std::move(*fd));
  return absl::OkStatus();
}

absl::StatusOr<UniqueFd> RootDir::OpenNow(const std::string& path) const {
  auto fd = OpenInside(path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
  if (!fd.ok()) return fd;
  // /proc and /sys resolve "self" and pids from the reader's point of view:
  // a link in the target's root to /proc/self/environ (not a magic link, so
  // RESOLVE_NO_MAGICLINKS lets it through) would make profcpu read its own
  // environment, or another process's with profcpu's privileges. No file a
  // target can make us read (code, perf maps, jitdumps, debug files) lives there.
  struct statfs fs;
  if (::fstatfs(fd->get(), &fs) != 0) return ErrnoStatus(errno, absl::StrCat("statfs ", path));
  if (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC) {
    return absl::PermissionDeniedError(absl::StrCat(
        "refusing ", path, " inside ", description_, ": it leads into /proc or /sys"));
  }
  return fd;
}

absl::StatusOr<UniqueFd> RootDir::OpenPath(const std::string& path) const {
  return OpenInside(path, O_PATH | O_NOFOLLOW);
}

absl::StatusOr<std::vector<std::string>> RootDir::ListDirectory(const std::string& path,
                                                                size_t max_entries) const {
  auto fd = OpenInside(path, O_RDONLY | O_DIRECTORY);
  if (!fd.ok()) return fd.status();
  DIR* dir = ::fdopendir(fd->Release());
  if (dir == nullptr) return ErrnoStatus(errno, absl::StrCat("list ", path));
  std::vector<std::string> names;
  while (dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (names.size() >= max_entries) break;
    names.push_back(std::move(name));
  }
  ::closedir(dir);
  return names;
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
