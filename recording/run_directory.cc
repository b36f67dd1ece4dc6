#include "recording/run_directory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "recording/run_folder.h"

namespace profcpu::recording {

absl::Status MakeDirectories(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("empty directory name");
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string prefix = path.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return base::ErrnoStatus(errno, absl::StrCat("cannot create directory ", prefix));
    }
    if (slash == std::string::npos) break;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return base::ErrnoStatus(errno, absl::StrCat("cannot create directory ", path));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " exists and is not a directory"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> CreateRunDirectory(const std::string& parent, std::time_t when) {
  absl::Status made = MakeDirectories(parent);
  if (!made.ok()) return made;
  std::tm local;
  ::localtime_r(&when, &local);
  char name[64];
  std::strftime(name, sizeof(name), "%H-%M-%S_%Y-%m-%d", &local);
  for (int attempt = 1; attempt < 1000; ++attempt) {
    std::string path = absl::StrCat(parent, "/", name);
    if (attempt > 1) absl::StrAppend(&path, "-", attempt);
    if (::mkdir(path.c_str(), 0755) == 0) return path;
    if (errno != EEXIST) {
      return base::ErrnoStatus(errno, absl::StrCat("cannot create output directory ", path));
    }
  }
  return absl::AlreadyExistsError(absl::StrCat("too many runs named ", name, " in ", parent));
}

std::vector<std::string> MissingDirectories(const std::string& path) {
  std::vector<std::string> missing;
  std::string dir = path;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  struct stat st;
  while (!dir.empty() && dir != "/" && dir != "." && ::stat(dir.c_str(), &st) != 0 &&
         errno == ENOENT) {
    missing.push_back(dir);
    const size_t slash = dir.rfind('/');
    if (slash == std::string::npos) break;
    dir.resize(slash);
  }
  return missing;
}

void RemoveEmptyDirectories(const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs) ::rmdir(dir.c_str());  // fails, harmlessly, if not empty
}

void RemoveUnstartedRun(const std::string& dir) {
  for (const char* name : {kRecordingFile, kLogFile}) {
    ::unlink(absl::StrCat(dir, "/", name).c_str());
  }
  ::rmdir(absl::StrCat(dir, "/", kDotnetEventsDir).c_str());  // empty: nothing was collected
  ::rmdir(dir.c_str());
}

}  // namespace profcpu::recording
