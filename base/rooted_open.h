// Opening files inside another process's root directory without ever leaving it.
//
// The sidecar runs privileged next to a target that may be compromised. A path
// taken from the target (a mapping's file name, /tmp/perf-PID.map) is resolved
// with openat2(RESOLVE_IN_ROOT): ".." and absolute symlinks are clamped to the
// target's root, and "magic" /proc links are refused, so a symlink planted in
// the target (perf-1.map -> /etc/shadow) resolves to the target's own file or
// fails, never to the host's. See openat2(2).
#ifndef PROFCPU_BASE_ROOTED_OPEN_H_
#define PROFCPU_BASE_ROOTED_OPEN_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace profcpu::base {

// A directory that paths are resolved under, e.g. /proc/PID/root or "/".
class RootDir {
 public:
  // Opens `path` as a root (O_PATH directory). The fd stays valid after the
  // process owning /proc/PID/root exits, so files can be read afterwards.
  static absl::StatusOr<std::shared_ptr<RootDir>> Open(const std::string& path);

  // Opens `path` (absolute or relative, interpreted inside this root)
  // read-only: the copy kept by Keep() if there is one, else the file there
  // now. Files on procfs or sysfs are refused (PermissionDenied): seen from
  // inside a root, /proc/self is still profcpu.
  absl::StatusOr<UniqueFd> OpenFile(const std::string& path) const;

  // Opens `path` now and keeps it open, so that OpenFile(path) still finds
  // this file after the process that used it exits, after its container's
  // mounts are gone, or after a deploy replaced it. `fallback` is opened
  // instead when given and `path` cannot be (e.g. /proc/PID/map_files/A-B for
  // a mapped file that was deleted). At most kMaxKeptFiles are kept.
  absl::Status Keep(const std::string& path, const std::string& fallback = "");
  static constexpr size_t kMaxKeptFiles = 10000;

  // Reads `path` inside this root, bounded as base::ReadFdBounded.
  absl::StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes) const;

  // Opens `path` inside this root as an O_PATH descriptor without following a
  // final symlink: for sockets, which cannot be opened for reading, and can be
  // connected through /proc/self/fd/N once we know where they really are.
  absl::StatusOr<UniqueFd> OpenPath(const std::string& path) const;

  // Names in directory `path` inside this root (no "." or ".."), at most
  // `max_entries` of them.
  absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path,
                                                         size_t max_entries = 100000) const;

  const std::string& description() const { return description_; }

 private:
  absl::StatusOr<UniqueFd> OpenInside(const std::string& path, uint64_t flags) const;
  absl::StatusOr<UniqueFd> OpenNow(const std::string& path) const;
  RootDir(UniqueFd fd, std::string description)
      : fd_(std::move(fd)), description_(std::move(description)) {}
  UniqueFd fd_;
  std::string description_;
  absl::flat_hash_map<std::string, UniqueFd> kept_;
};

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_ROOTED_OPEN_H_
