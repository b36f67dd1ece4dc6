#include "symbolize/archived_jit_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "base/file_io.h"
#include "recording/run_folder.h"

namespace profcpu::symbolize {
namespace {

// Perf maps and jitdumps of long-running JIT processes grow large (a jitdump
// carries every method's code bytes); past this the copy is cut, which the
// parsers read as a file that ends early.
constexpr uint64_t kMaxJitFileBytes = uint64_t{1} << 30;

// Copies at most `limit` bytes of `from` into a new file `to` (via a
// .partial name, so an interrupted copy is never mistaken for a whole one).
absl::Status CopyBounded(int from, const std::string& to, uint64_t limit, bool* cut) {
  std::string partial = absl::StrCat(to, ".partial");
  base::UniqueFd out(::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!out.valid()) return base::ErrnoStatus(errno, absl::StrCat("create ", partial));
  std::string buffer(1 << 16, '\0');
  uint64_t copied = 0;
  *cut = false;
  while (true) {
    ssize_t n = ::read(from, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      ::unlink(partial.c_str());
      return base::ErrnoStatus(errno, "read JIT file");
    }
    if (n == 0) break;
    size_t take = static_cast<size_t>(std::min<uint64_t>(static_cast<uint64_t>(n), limit - copied));
    absl::Status written = base::WriteAll(out.get(), absl::string_view(buffer.data(), take),
                                          partial);
    if (!written.ok()) {
      ::unlink(partial.c_str());
      return written;
    }
    copied += take;
    if (copied >= limit) {
      *cut = true;
      break;
    }
  }
  out.Reset();
  if (::rename(partial.c_str(), to.c_str()) != 0) {
    ::unlink(partial.c_str());
    return base::ErrnoStatus(errno, absl::StrCat("rename ", partial));
  }
  return absl::OkStatus();
}

}  // namespace

ArchivedJitFiles::ArchivedJitFiles(std::string run_dir, const ProcessFiles* target,
                                   base::RunLog* log, bool keep_copies)
    : run_dir_(std::move(run_dir)),
      target_(target),
      have_target_(target != nullptr),
      log_(log),
      keep_copies_(keep_copies) {}

absl::StatusOr<base::UniqueFd> ArchivedJitFiles::Open(uint32_t pid, JitFileKind kind,
                                                      const std::string& path) {
  const std::string name = absl::StrCat(recording::kJitDir, "/", JitFileName(kind, pid));
  const std::string copy = absl::StrCat(run_dir_, "/", name);
  absl::StatusOr<base::UniqueFd> existing = base::OpenReadOnly(copy);
  if (existing.ok() || !absl::IsNotFound(existing.status())) return existing;
  if (!have_target_) return absl::NotFoundError(absl::StrCat(name, " is not in the run folder"));
  if (!keep_copies_) return target_.Open(pid, kind, path);

  absl::StatusOr<base::UniqueFd> source = target_.Open(pid, kind, path);
  if (!source.ok()) return source.status();
  ::mkdir(absl::StrCat(run_dir_, "/", recording::kJitDir).c_str(), 0755);
  bool cut = false;
  absl::Status copied = CopyBounded(source->get(), copy, kMaxJitFileBytes, &cut);
  if (!copied.ok()) {
    log_->Warn(absl::StrCat("cannot keep a copy of ", path, " of pid ", pid, ": ",
                            copied.message(), "; reading it in place"));
    ::lseek(source->get(), 0, SEEK_SET);
    return source;
  }
  if (cut) {
    log_->Warn(absl::StrCat(path, " of pid ", pid, " is larger than ", kMaxJitFileBytes >> 20,
                            " MiB; only its beginning is kept and read"));
  }
  log_->Info(absl::StrCat("kept a copy of ", path, " of pid ", pid, " as ", name));
  return base::OpenReadOnly(copy);
}

std::vector<std::string> ListJitFiles(const std::string& run_dir) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(absl::StrCat(run_dir, "/", recording::kJitDir).c_str());
  if (dir == nullptr) return names;
  while (dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == ".." || name.find(".partial") != std::string::npos) continue;
    struct stat st;
    std::string relative = absl::StrCat(recording::kJitDir, "/", name);
    if (::lstat(absl::StrCat(run_dir, "/", relative).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      names.push_back(std::move(relative));
    }
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace profcpu::symbolize
