#include "collector/proc/cgroup.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/errno_status.h"
#include "base/file_io.h"

namespace profcpu::collector {
namespace {

bool IsHex64(absl::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::string CgroupV2Path(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, "0::")) return std::string(line);
  }
  return "";
}

std::string ContainerIdFromCgroup(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    size_t colon = line.rfind(':');
    absl::string_view path = colon == absl::string_view::npos ? line : line.substr(colon + 1);
    for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
      absl::ConsumeSuffix(&part, ".scope");
      size_t dash = part.rfind('-');
      absl::string_view id = dash == absl::string_view::npos ? part : part.substr(dash + 1);
      if (IsHex64(id)) return std::string(id);
    }
  }
  return "";
}

absl::StatusOr<std::string> ReadProcCgroup(pid_t pid, const std::string& proc) {
  return base::ReadFileBounded(absl::StrCat(proc, "/", pid, "/cgroup"), 64 << 10);
}

absl::StatusOr<std::string> CgroupV2Mount() {
  for (const char* path : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    struct statfs fs;
    if (::statfs(path, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC) return std::string(path);
  }
  return absl::NotFoundError(
      "no cgroup v2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified; container profiling "
      "needs cgroup v2 (mount it, or profile the container's processes with -pid)");
}

absl::StatusOr<CgroupIdentity> CgroupIdentityOf(const std::string& dir) {
  auto mount = CgroupV2Mount();
  if (!mount.ok()) return mount.status();
  char real_dir[PATH_MAX];
  char real_mount[PATH_MAX];
  if (::realpath(dir.c_str(), real_dir) == nullptr) {
    return base::ErrnoStatus(errno, absl::StrCat("cgroup ", dir));
  }
  if (::realpath(mount->c_str(), real_mount) == nullptr) {
    return base::ErrnoStatus(errno, absl::StrCat("cgroup v2 mount ", *mount));
  }
  absl::string_view inside = real_dir;
  if (!absl::ConsumePrefix(&inside, real_mount) || (!inside.empty() && inside[0] != '/')) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, " is not a cgroup: it is outside the cgroup v2 hierarchy at ", *mount));
  }
  CgroupIdentity identity;
  // realpath leaves no doubled or trailing slash: one per level below the root.
  identity.level = static_cast<uint32_t>(std::count(inside.begin(), inside.end(), '/'));
  // The kernfs file handle of a cgroup directory is its 64-bit id (perf and
  // bpftool read it the same way).
  struct {
    struct file_handle handle;
    unsigned char bytes[sizeof(uint64_t)];
  } id_handle;
  id_handle.handle.handle_bytes = sizeof(uint64_t);
  int mount_id = 0;
  if (::name_to_handle_at(AT_FDCWD, real_dir, &id_handle.handle, &mount_id, 0) != 0) {
    return base::ErrnoStatus(errno, absl::StrCat("the id of cgroup ", dir));
  }
  std::memcpy(&identity.id, id_handle.handle.f_handle, sizeof(identity.id));
  return identity;
}

}  // namespace profcpu::collector
