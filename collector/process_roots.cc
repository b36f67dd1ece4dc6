#include "collector/process_roots.h"

#include <sys/stat.h>

#include <cerrno>

#include "absl/strings/str_cat.h"

namespace profcpu::collector {

std::shared_ptr<base::RootDir> ProcessRoots::Add(pid_t pid) {
  auto known = by_pid_.find(static_cast<uint32_t>(pid));
  if (known != by_pid_.end()) return known->second;
  std::string path = absl::StrCat("/proc/", pid, "/root");
  // stat() follows the /proc magic link to the root directory itself.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    last_error_ = absl::ErrnoToStatus(errno, path);
    return nullptr;
  }
  std::pair<uint64_t, uint64_t> identity(st.st_dev, st.st_ino);
  std::shared_ptr<base::RootDir> root;
  if (auto it = by_identity_.find(identity); it != by_identity_.end()) {
    root = it->second;
  } else {
    auto opened = base::RootDir::Open(path);
    if (!opened.ok()) {
      last_error_ = opened.status();
      return nullptr;
    }
    root = *opened;
    by_identity_.emplace(identity, root);
  }
  by_pid_.emplace(static_cast<uint32_t>(pid), root);
  return root;
}

namespace {

bool SameDirectory(const base::RootDir& a, const base::RootDir& b) {
  absl::StatusOr<base::UniqueFd> fa = a.OpenPath("/");
  absl::StatusOr<base::UniqueFd> fb = b.OpenPath("/");
  struct stat sa, sb;
  return fa.ok() && fb.ok() && ::fstat(fa->get(), &sa) == 0 && ::fstat(fb->get(), &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

std::shared_ptr<base::RootDir> ProcessRoots::Current(pid_t pid) {
  std::shared_ptr<base::RootDir> earlier = Add(pid);
  if (earlier == nullptr) return nullptr;
  auto now = base::RootDir::Open(absl::StrCat("/proc/", pid, "/root"));
  if (!now.ok()) return nullptr;
  return SameDirectory(**now, *earlier) ? *now : earlier;
}

}  // namespace profcpu::collector
