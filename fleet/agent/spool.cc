#include "fleet/agent/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/errno_status.h"
#include "base/file_io.h"
#include "fleet/agent/spool_file.h"

namespace profcpu::fleet {
namespace {

constexpr absl::string_view kWindowSuffix = ".window";
constexpr absl::string_view kTempSuffix = ".window.tmp";
constexpr size_t kSeqDigits = 20;
constexpr absl::string_view kCorrupt = "corrupt spool file";
constexpr absl::string_view kCutShort = "spool write cut short";

// "<20 digits><suffix>" -> the digits' value.
std::optional<uint64_t> SeqOf(absl::string_view name, absl::string_view suffix) {
  if (!absl::ConsumeSuffix(&name, suffix) || name.size() != kSeqDigits) return std::nullopt;
  for (char c : name) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  uint64_t seq = 0;
  if (!absl::SimpleAtoi(name, &seq) || seq == 0) return std::nullopt;
  return seq;
}

// mkdir -p, the last directory 0700: windows hold what ran on the node.
absl::Status MakeSpoolDir(const std::string& dir) {
  for (size_t slash = dir.find('/', 1); slash != std::string::npos;
       slash = dir.find('/', slash + 1)) {
    const std::string parent = dir.substr(0, slash);
    if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
      return base::ErrnoStatus(errno, absl::StrCat("create ", parent));
    }
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return base::ErrnoStatus(errno, absl::StrCat("create the spool directory ", dir));
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return base::ErrnoStatus(errno, absl::StrCat("spool ", dir));
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("spool ", dir, " is not a directory"));
  }
  return absl::OkStatus();
}

absl::Status SyncDirectory(const std::string& dir) {
  base::UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid() || ::fsync(fd.get()) != 0) {
    return base::ErrnoStatus(errno, absl::StrCat("sync the spool directory ", dir));
  }
  return absl::OkStatus();
}

// The first kSpoolHeaderSize bytes of a file and its size.
absl::StatusOr<std::pair<std::string, uint64_t>> ReadHead(const std::string& path) {
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return base::ErrnoStatus(errno, absl::StrCat("open ", path));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return base::ErrnoStatus(errno, absl::StrCat("stat ", path));
  if (!S_ISREG(st.st_mode)) return absl::DataLossError(absl::StrCat(path, " is not a file"));
  std::string head(kSpoolHeaderSize, '\0');
  const ssize_t got = ::pread(fd.get(), head.data(), head.size(), 0);
  if (got < 0) return base::ErrnoStatus(errno, absl::StrCat("read ", path));
  head.resize(static_cast<size_t>(got));
  return std::make_pair(std::move(head), static_cast<uint64_t>(st.st_size));
}

}  // namespace

std::string Spool::FileName(uint64_t seq) {
  return absl::StrFormat("%020u%s", seq, kWindowSuffix);
}

std::string Spool::PathOf(uint64_t seq) const { return absl::StrCat(dir_, "/", FileName(seq)); }

std::string Spool::FullReason() const {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  return cap_bytes_ % kMiB == 0 ? absl::StrCat("spool full (cap ", cap_bytes_ / kMiB, " MB)")
                                : absl::StrCat("spool full (cap ", cap_bytes_, " bytes)");
}

absl::StatusOr<Spool> Spool::Open(const std::string& dir, uint64_t cap_bytes) {
  if (dir.empty()) return absl::InvalidArgumentError("no spool directory given");
  if (absl::Status made = MakeSpoolDir(dir); !made.ok()) return made;
  const std::string lock_path = dir + "/lock";
  base::UniqueFd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!lock.valid()) return base::ErrnoStatus(errno, absl::StrCat("open ", lock_path));
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          absl::StrCat("spool ", dir, " is in use by another agent (", lock_path, " is locked)"));
    }
    return base::ErrnoStatus(errno, absl::StrCat("lock ", lock_path));
  }
  Spool spool(dir, cap_bytes, std::move(lock));
  if (absl::Status recovered = spool.Recover(); !recovered.ok()) return recovered;
  return spool;
}

absl::Status Spool::Recover() {
  std::vector<std::pair<uint64_t, std::string>> windows;  // seq, name
  std::vector<std::pair<uint64_t, std::string>> temps;
  {
    DIR* listing = ::opendir(dir_.c_str());
    if (listing == nullptr) return base::ErrnoStatus(errno, absl::StrCat("list spool ", dir_));
    while (const dirent* entry = ::readdir(listing)) {
      absl::string_view name = entry->d_name;
      if (auto seq = SeqOf(name, kWindowSuffix)) windows.emplace_back(*seq, name);
      if (auto seq = SeqOf(name, kTempSuffix)) temps.emplace_back(*seq, name);
    }
    ::closedir(listing);
  }
  for (const auto& [seq, name] : windows) {
    next_seq_ = std::max(next_seq_, seq + 1);
    const std::string path = absl::StrCat(dir_, "/", name);
    auto head = ReadHead(path);
    absl::StatusOr<SpoolHeader> header =
        head.ok() ? ParseSpoolHeader(head->first) : absl::StatusOr<SpoolHeader>(head.status());
    if (header.ok() && head->second == kSpoolHeaderSize + header->payload_size) {
      files_[seq] = FileInfo{header->window_id, header->samples, head->second};
      size_bytes_ += head->second;
      continue;
    }
    // A bad header or a size the header does not announce: the window is
    // unreadable; its id and samples are counted when the header still says.
    pending_losses_.push_back(header.ok() ? SpoolLoss{header->window_id, header->samples,
                                                      std::string(kCorrupt)}
                                          : SpoolLoss{0, 0, std::string(kCorrupt)});
    ::unlink(path.c_str());
  }
  for (const auto& [seq, name] : temps) {
    next_seq_ = std::max(next_seq_, seq + 1);
    const std::string path = absl::StrCat(dir_, "/", name);
    // The crash came after the write completed (before the rename) when the
    // file parses whole: the window is kept. Otherwise it was cut short.
    auto bytes = base::ReadFileBounded(path, cap_bytes_ + kSpoolHeaderSize);
    auto contents = bytes.ok() ? ParseSpoolFile(*bytes)
                               : absl::StatusOr<SpoolFileContents>(bytes.status());
    if (contents.ok() && !files_.contains(seq) &&
        ::rename(path.c_str(), PathOf(seq).c_str()) == 0) {
      files_[seq] = FileInfo{contents->header.window_id, contents->header.samples, bytes->size()};
      size_bytes_ += bytes->size();
      continue;
    }
    auto header = bytes.ok() ? ParseSpoolHeader(*bytes) : absl::StatusOr<SpoolHeader>(bytes.status());
    pending_losses_.push_back(header.ok() ? SpoolLoss{header->window_id, header->samples,
                                                      std::string(kCutShort)}
                                          : SpoolLoss{0, 0, std::string(kCutShort)});
    ::unlink(path.c_str());
  }
  // A cap lowered since the last run: the oldest go, counted.
  MakeRoom(0, &pending_losses_);
  return SyncDirectory(dir_);
}

void Spool::Drop(uint64_t seq) {
  auto it = files_.find(seq);
  if (it == files_.end()) return;
  ::unlink(PathOf(seq).c_str());
  size_bytes_ -= it->second.bytes;
  files_.erase(it);
}

void Spool::MakeRoom(uint64_t incoming, std::vector<SpoolLoss>* losses) {
  while (!files_.empty() && size_bytes_ + incoming > cap_bytes_) {
    const auto& [seq, info] = *files_.begin();
    losses->push_back(SpoolLoss{info.window_id, info.samples, FullReason()});
    Drop(seq);
  }
}

absl::StatusOr<std::vector<SpoolLoss>> Spool::Put(uint64_t window_id, uint64_t samples,
                                                  absl::string_view payload) {
  const uint64_t bytes = kSpoolHeaderSize + payload.size();
  if (bytes > cap_bytes_) return std::vector<SpoolLoss>{{window_id, samples, FullReason()}};

  const uint64_t seq = next_seq_;
  const std::string path = PathOf(seq);
  const std::string temp = absl::StrCat(path, ".tmp");
  {
    base::UniqueFd fd(
        ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd.valid()) return base::ErrnoStatus(errno, absl::StrCat("create ", temp));
    absl::Status written = base::WriteAll(fd.get(), EncodeSpoolHeader(window_id, samples, payload),
                                          temp);
    if (written.ok()) written = base::WriteAll(fd.get(), payload, temp);
    if (written.ok() && ::fsync(fd.get()) != 0) {
      written = base::ErrnoStatus(errno, absl::StrCat("sync ", temp));
    }
    if (!written.ok()) {
      ::unlink(temp.c_str());
      return written;
    }
  }
  next_seq_ = seq + 1;  // even if the rename fails: never reuse a name
  std::vector<SpoolLoss> losses;
  MakeRoom(bytes, &losses);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    absl::Status failed = base::ErrnoStatus(errno, absl::StrCat("rename ", temp));
    ::unlink(temp.c_str());
    // The evicted windows are gone all the same: count them.
    for (SpoolLoss& loss : losses) pending_losses_.push_back(std::move(loss));
    return failed;
  }
  files_[seq] = FileInfo{window_id, samples, bytes};
  size_bytes_ += bytes;
  // The rename is durable only once the directory is; a failure here leaves
  // the window in place, so it is not an error of Put.
  (void)SyncDirectory(dir_);
  return losses;
}

std::optional<SpoolEntry> Spool::Oldest() {
  while (!files_.empty()) {
    const auto [seq, info] = *files_.begin();
    const std::string path = PathOf(seq);
    auto bytes = base::ReadFileBounded(path, info.bytes);
    auto contents = bytes.ok() ? ParseSpoolFile(*bytes)
                               : absl::StatusOr<SpoolFileContents>(bytes.status());
    if (contents.ok()) {
      SpoolEntry entry{seq, contents->header.window_id, contents->header.samples, {}};
      entry.payload = std::move(*bytes);  // the payload is the rest: no second copy
      entry.payload.erase(0, kSpoolHeaderSize);
      return entry;
    }
    // Damaged since it was written (or replaced): what the header said when
    // it was spooled is what is lost.
    pending_losses_.push_back(SpoolLoss{info.window_id, info.samples, std::string(kCorrupt)});
    Drop(seq);
  }
  return std::nullopt;
}

absl::Status Spool::Remove(uint64_t seq) {
  if (!files_.contains(seq)) {
    return absl::NotFoundError(absl::StrCat("no window ", seq, " in spool ", dir_));
  }
  Drop(seq);
  return absl::OkStatus();
}

std::vector<SpoolLoss> Spool::TakeLosses() { return std::exchange(pending_losses_, {}); }

}  // namespace profcpu::fleet
