#include "collector/perf_map_tailer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "base/file_io.h"

namespace profcpu::collector {
namespace {

constexpr size_t kChunkBytes = 64 << 10;
// How much of a map's beginning is compared each tick to see it rewritten in
// place (truncated and written again past where the copy had got to).
constexpr size_t kHeadBytes = 256;

std::string CopyName(uint32_t pid) { return absl::StrCat("perf-", pid, ".map"); }

std::string SizeText(uint64_t bytes) {
  return bytes % (1 << 20) == 0 ? absl::StrCat(bytes >> 20, " MiB") : absl::StrCat(bytes, " bytes");
}

}  // namespace

std::string DescribeTailedPerfMap(const TailedPerfMap& map) {
  if (!map.found) {
    return absl::StrCat("no ", map.path, " of pid ", map.pid, " at any of ", map.looks,
                        " looks while it ran",
                        map.problem.empty() ? "" : absl::StrCat(" (", map.problem, ")"));
  }
  if (!map.kept) return absl::StrCat(map.path, " of pid ", map.pid, ": ", map.problem);
  std::string line = absl::StrCat("kept ", map.bytes_copied, " bytes of ", map.path, " of pid ",
                                  map.pid, " as jit/", CopyName(map.pid));
  if (map.removed) absl::StrAppend(&line, "; it was gone from its path by the end");
  if (map.restarts > 0) {
    absl::StrAppend(&line, "; it was truncated or replaced ", map.restarts,
                    " time(s), each copied after the last");
  }
  if (!map.problem.empty()) absl::StrAppend(&line, "; ", map.problem);
  return line;
}

struct PerfMapTailer::Watched {
  TailedPerfMap report;
  std::shared_ptr<base::RootDir> root;
  base::UniqueFd source;  // the map, once a regular file was found
  uint64_t dev = 0;       // ... and which file it is, to see it replaced
  uint64_t ino = 0;
  uint64_t offset = 0;    // bytes of `source` copied
  std::string head;       // its first kHeadBytes, as copied
  base::UniqueFd copy;    // COPY_DIR/perf-PID.map.partial
  bool copy_ends_line = true;  // empty, or its last byte is '\n'
  bool stopped = false;        // a cap or an error: nothing more is copied
  std::string last_refusal;    // warned once per reason
};

PerfMapTailer::PerfMapTailer(std::string copy_dir, Limits limits)
    : copy_dir_(std::move(copy_dir)), limits_(limits) {}

PerfMapTailer::~PerfMapTailer() = default;

void PerfMapTailer::Watch(uint32_t pid, std::shared_ptr<base::RootDir> root, std::string path,
                          uint64_t now_ns) {
  if (Knows(pid)) return;
  if (root == nullptr || watched_.size() >= limits_.max_files) passed_over_.insert(pid);
  if (root == nullptr) return;
  if (watched_.size() >= limits_.max_files) {
    if (!warned_max_files_) {
      warned_max_files_ = true;
      warnings_.push_back(absl::StrCat(
          "more than ", limits_.max_files, " processes run JIT code: the perf maps of the others "
          "(from pid ", pid, " on) are read only after collection, if they still exist then"));
    }
    return;
  }
  auto w = std::make_unique<Watched>();
  w->report.pid = pid;
  w->report.path = std::move(path);
  w->report.watched_from_ns = now_ns;
  w->root = std::move(root);
  by_pid_.emplace(pid, w.get());
  watched_.push_back(std::move(w));
  // At once, not at the next tick: a runtime opens its map before it maps
  // code, and a process that exits within the tick may remove it.
  if (!disk_full_) LookUp(watched_.back().get());
}

void PerfMapTailer::Tick() { Pass(/*last=*/false); }

std::vector<TailedPerfMap> PerfMapTailer::Finish() {
  Pass(/*last=*/true);
  std::vector<TailedPerfMap> reports;
  for (std::unique_ptr<Watched>& w : watched_) {
    if (w->copy.valid()) {
      w->copy.Reset();
      const std::string final_name = absl::StrCat(copy_dir_, "/", CopyName(w->report.pid));
      const std::string partial = absl::StrCat(final_name, ".partial");
      if (disk_full_ && StillThere(*w)) {
        // Cut short by the disk while the map is still there: the symbolizer
        // reads the map itself rather than a beginning of it.
        ::unlink(partial.c_str());
        w->report.problem = "not copied for lack of disk space; read in place after collection";
      } else if (::rename(partial.c_str(), final_name.c_str()) != 0) {
        warnings_.push_back(absl::StrCat("cannot keep the copy of ", w->report.path, " of pid ",
                                         w->report.pid, ": rename ", partial, ": ",
                                         std::strerror(errno)));
      } else {
        w->report.kept = true;
      }
    }
    w->source.Reset();
    reports.push_back(w->report);
  }
  return reports;
}

std::vector<std::string> PerfMapTailer::TakeWarnings() { return std::exchange(warnings_, {}); }

void PerfMapTailer::Pass(bool last) {
  const size_t n = watched_.size();
  if (n == 0) return;
  // Every watched path is looked at again, found or not: a map found may have
  // been removed or replaced since.
  const size_t lookups = last ? n : std::min(n, limits_.max_lookups_per_tick);
  const size_t first = next_lookup_ % n;
  for (size_t i = 0; i < lookups; ++i) {
    Watched* w = watched_[(first + i) % n].get();
    if (!w->stopped && !disk_full_) LookUp(w);
  }
  next_lookup_ = (first + lookups) % n;
  if (!RoomOnDisk()) return;
  uint64_t budget = last ? UINT64_MAX : limits_.max_tick_bytes;
  for (size_t i = 0; i < n && budget > 0; ++i) {
    budget -= CopyGrowth(watched_[(first + i) % n].get(), budget);
  }
}

bool PerfMapTailer::StillThere(const Watched& w) const {
  if (!w.source.valid()) return false;
  absl::StatusOr<base::UniqueFd> fd = w.root->OpenFile(w.report.path);
  struct stat now, held;
  return fd.ok() && ::fstat(fd->get(), &now) == 0 && ::fstat(w.source.get(), &held) == 0 &&
         now.st_dev == held.st_dev && now.st_ino == held.st_ino;
}

bool PerfMapTailer::RoomOnDisk() {
  if (disk_full_) return false;
  // The run folder (jit/ may not exist yet): the disk the recording is on.
  const std::string run_dir = copy_dir_.substr(0, copy_dir_.rfind('/'));
  struct statvfs fs;
  if (::statvfs(run_dir.empty() ? "/" : run_dir.c_str(), &fs) != 0) return true;
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free_bytes >= limits_.min_free_bytes) return true;
  disk_full_ = true;
  warnings_.push_back(absl::StrCat(
      "stopped copying perf maps into ", copy_dir_, ": ", free_bytes >> 20, " MiB",
      " free on its disk, less than the ", SizeText(limits_.min_free_bytes),
      " kept for the recording; what was copied is kept"));
  return false;
}

void PerfMapTailer::LookUp(Watched* w) {
  const std::string& path = w->report.path;
  auto refuse = [&](std::string why) {
    if (why == w->last_refusal) return;
    if (!w->report.found) w->report.problem = why;
    w->last_refusal = why;
    warnings_.push_back(absl::StrCat("not reading ", path, " of pid ", w->report.pid, ": ", why));
  };
  ++w->report.looks;
  absl::StatusOr<base::UniqueFd> fd = w->root->OpenFile(path);
  if (!fd.ok()) {
    if (absl::IsNotFound(fd.status())) {
      w->report.removed = w->report.found;
    } else {
      // A symlink into /proc, a loop, a path the target made unreadable.
      refuse(std::string(fd.status().message()));
    }
    return;
  }
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return;
  if (!S_ISREG(st.st_mode)) {
    // A FIFO would block a reader and a device could feed it forever.
    refuse("it is not a regular file");
    return;
  }
  w->report.removed = false;
  if (w->source.valid() && st.st_dev == w->dev && st.st_ino == w->ino) return;
  Restart(w, std::move(*fd), st.st_dev, st.st_ino);
}

void PerfMapTailer::Restart(Watched* w, base::UniqueFd source, uint64_t dev, uint64_t ino) {
  if (w->source.valid()) {
    // Replaced: first what the old file gained since the last tick, then the
    // new one from its start, after a line break (later lines win).
    CopyGrowth(w, UINT64_MAX);
    if (w->stopped || disk_full_) return;
    ++w->report.restarts;
    if (!EndLine(w)) return;
  }
  w->source = std::move(source);
  w->dev = dev;
  w->ino = ino;
  w->offset = 0;
  w->head.clear();
  w->report.found = true;
  EnsureCopyOpen(w);  // an empty map leaves an empty copy: found, but empty
}

uint64_t PerfMapTailer::CopyGrowth(Watched* w, uint64_t budget) {
  if (!w->source.valid() || w->stopped || disk_full_) return 0;
  struct stat st;
  if (::fstat(w->source.get(), &st) != 0) return 0;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < w->offset || !SameHead(*w)) {
    // Truncated in place, and maybe written again past where the copy had
    // got to (fopen "w" and a burst of lines): copy it again from its start.
    ++w->report.restarts;
    w->offset = 0;
    w->head.clear();
    if (!EndLine(w)) return 0;
  }
  if (buffer_.empty()) buffer_.resize(kChunkBytes);
  uint64_t copied = 0;
  while (w->offset < size && copied < budget && !w->stopped && !disk_full_) {
    const uint64_t room = limits_.max_file_bytes - std::min(limits_.max_file_bytes,
                                                            w->report.bytes_copied);
    if (room == 0) {
      StopAtCap(w);
      break;
    }
    const size_t want = static_cast<size_t>(
        std::min<uint64_t>({buffer_.size(), size - w->offset, budget - copied, room}));
    ssize_t n = ::pread(w->source.get(), buffer_.data(), want, static_cast<off_t>(w->offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Stop(w, absl::StrCat("read failed: ", std::strerror(errno)));
      break;
    }
    if (n == 0) break;  // shrank meanwhile: the next tick sees it
    if (!Append(w, buffer_.data(), static_cast<size_t>(n))) break;
    if (w->head.size() == w->offset && w->offset < kHeadBytes) {
      w->head.append(buffer_.data(), std::min<size_t>(static_cast<size_t>(n),
                                                      kHeadBytes - w->head.size()));
    }
    w->offset += static_cast<uint64_t>(n);
    copied += static_cast<uint64_t>(n);
  }
  return copied;
}

bool PerfMapTailer::SameHead(const Watched& w) const {
  if (w.head.empty()) return true;
  char now[kHeadBytes];
  ssize_t n = ::pread(w.source.get(), now, w.head.size(), 0);
  // A short read means the file shrank: the size check sees that.
  return n != static_cast<ssize_t>(w.head.size()) ||
         std::memcmp(now, w.head.data(), w.head.size()) == 0;
}

bool PerfMapTailer::EndLine(Watched* w) {
  if (w->copy_ends_line) return true;
  if (w->report.bytes_copied >= limits_.max_file_bytes) {
    StopAtCap(w);
    return false;
  }
  return Append(w, "\n", 1);
}

bool PerfMapTailer::EnsureCopyOpen(Watched* w) {
  if (w->copy.valid()) return true;
  ::mkdir(copy_dir_.c_str(), 0755);
  const std::string partial = absl::StrCat(copy_dir_, "/", CopyName(w->report.pid), ".partial");
  w->copy.Reset(::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!w->copy.valid()) {
    Stop(w, absl::StrCat("cannot create ", partial, ": ", std::strerror(errno)));
    return false;
  }
  return true;
}

bool PerfMapTailer::Append(Watched* w, const char* data, size_t size) {
  if (!EnsureCopyOpen(w)) return false;
  absl::Status written = base::WriteAll(w->copy.get(), absl::string_view(data, size),
                                        CopyName(w->report.pid));
  if (written.ok()) {
    w->report.bytes_copied += size;
    w->copy_ends_line = data[size - 1] == '\n';
    return true;
  }
  if (absl::IsResourceExhausted(written)) {
    // ENOSPC or EDQUOT: every copy would fail alike.
    disk_full_ = true;
    w->report.problem = std::string(written.message());
    warnings_.push_back(absl::StrCat("stopped copying perf maps into ", copy_dir_, ": ",
                                     written.message(), "; what was copied is kept"));
    return false;
  }
  Stop(w, absl::StrCat("cannot write its copy: ", written.message()));
  return false;
}

void PerfMapTailer::StopAtCap(Watched* w) {
  Stop(w, absl::StrCat("copied its first ", SizeText(limits_.max_file_bytes),
                       " (the limit); the rest is not read"));
}

void PerfMapTailer::Stop(Watched* w, std::string problem) {
  w->stopped = true;
  warnings_.push_back(absl::StrCat(w->report.path, " of pid ", w->report.pid, ": ", problem));
  w->report.problem = std::move(problem);
}

}  // namespace profcpu::collector
