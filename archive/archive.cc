#include "archive/archive.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "archive/archive_input.h"
#include "archive/parallel_gzip.h"
#include "archive/tar_reader.h"
#include "archive/tar_writer.h"
#include "archive/zip_writer.h"
#include "base/errno_status.h"
#include "base/file_io.h"
#include "base/status_macros.h"
#include "base/unique_fd.h"

namespace profcpu::archive {
namespace {

// The file behind one entry, opened and measured before its header is written.
struct SourceFile {
  base::UniqueFd fd;
  uint64_t size = 0;
  int64_t mtime = 0;
};

absl::StatusOr<SourceFile> OpenSource(const ArchiveEntry& entry) {
  SourceFile file;
  file.fd.Reset(::open(entry.source_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file.fd.valid()) return base::ErrnoStatus(errno, absl::StrCat("open ", entry.source_path));
  struct stat st;
  if (::fstat(file.fd.get(), &st) != 0) {
    return base::ErrnoStatus(errno, absl::StrCat("stat ", entry.source_path));
  }
  file.size = static_cast<uint64_t>(st.st_size);
  file.mtime = st.st_mtim.tv_sec;
  return file;
}

absl::Status AddToTar(TarWriter& tar, const ArchiveEntry& entry) {
  PROFCPU_ASSIGN_OR_RETURN(SourceFile file, OpenSource(entry));
  PROFCPU_RETURN_IF_ERROR(tar.BeginFile(entry.name, file.size, file.mtime));
  auto buffer = std::make_unique<char[]>(256 * 1024);
  uint64_t remaining = file.size;  // the header promised this many bytes
  while (remaining > 0) {
    ssize_t n = ::read(file.fd.get(), buffer.get(), std::min<uint64_t>(remaining, 256 * 1024));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return base::ErrnoStatus(errno, absl::StrCat("read ", entry.source_path));
    if (n == 0) return absl::DataLossError(absl::StrCat(entry.source_path, " shrank while archived"));
    PROFCPU_RETURN_IF_ERROR(tar.WriteData(absl::string_view(buffer.get(), static_cast<size_t>(n))));
    remaining -= static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

// The tar stream, compressed on every core (parallel_gzip.h).
absl::Status WriteTarGzTo(int fd, const std::vector<ArchiveEntry>& entries) {
  ParallelGzipWriter gzip(fd);
  TarWriter tar([&gzip](absl::string_view bytes) { return gzip.Write(bytes); });
  absl::Status status;
  for (const ArchiveEntry& entry : entries) {
    status = AddToTar(tar, entry);
    if (!status.ok()) break;
  }
  if (status.ok()) status = tar.Finish();
  absl::Status finished = gzip.Finish();  // joins the workers whatever happened
  return status.ok() ? finished : status;
}

absl::Status WriteZipTo(int fd, const std::vector<ArchiveEntry>& entries) {
  ZipWriter zip(fd);
  for (const ArchiveEntry& entry : entries) {
    PROFCPU_ASSIGN_OR_RETURN(SourceFile file, OpenSource(entry));
    PROFCPU_RETURN_IF_ERROR(
        zip.AddFile(entry.name, file.fd.get(), entry.source_path, file.size, file.mtime));
  }
  return zip.Finish();
}

// The name an entry is written under: "./a//b.txt" is "a/b.txt" (GNU tar
// archives of "." name their files "./NAME"); nullopt for "/etc/x", "../x",
// "a/../../x" and any other name with a ".." part.
std::optional<std::string> NameInside(absl::string_view name) {
  if (absl::StartsWith(name, "/")) return std::nullopt;
  std::vector<absl::string_view> parts;
  for (absl::string_view part : absl::StrSplit(name, '/', absl::SkipEmpty())) {
    if (part == "..") return std::nullopt;
    if (part != ".") parts.push_back(part);
  }
  return absl::StrJoin(parts, "/");
}

// A file created for an entry: removed again unless Keep() is called, so an
// entry cut short leaves no truncated file posing as whole.
class CreatedFile {
 public:
  CreatedFile(base::UniqueFd dir, std::string leaf, base::UniqueFd fd)
      : dir_(std::move(dir)), leaf_(std::move(leaf)), fd_(std::move(fd)) {}
  CreatedFile(CreatedFile&&) = default;
  ~CreatedFile() {
    if (!kept_ && dir_.valid()) ::unlinkat(dir_.get(), leaf_.c_str(), 0);
  }
  int fd() const { return fd_.get(); }
  void Keep() { kept_ = true; }

 private:
  base::UniqueFd dir_;
  std::string leaf_;
  base::UniqueFd fd_;
  bool kept_ = false;
};

// Creates `name` (NameInside's) below `dir_fd`, a folder at a time, never
// following a symlink and never replacing a file.
absl::StatusOr<CreatedFile> CreateInside(int dir_fd, const std::string& name) {
  std::vector<std::string> parts = absl::StrSplit(name, '/');
  base::UniqueFd current(::dup(dir_fd));
  if (!current.valid()) return base::ErrnoStatus(errno, "dup");
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (::mkdirat(current.get(), parts[i].c_str(), 0755) != 0 && errno != EEXIST) {
      return base::ErrnoStatus(errno, absl::StrCat("create directory for ", name));
    }
    int next = ::openat(current.get(), parts[i].c_str(),
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return base::ErrnoStatus(errno, absl::StrCat("open directory for ", name));
    current.Reset(next);
  }
  int fd = ::openat(current.get(), parts.back().c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return base::ErrnoStatus(errno, absl::StrCat("create ", name));
  return CreatedFile(std::move(current), parts.back(), base::UniqueFd(fd));
}

// Copies the current entry's data (`size` bytes) into `out`.
absl::Status CopyData(TarReader& reader, int out, const std::string& name) {
  auto buffer = std::make_unique<char[]>(256 * 1024);
  while (true) {
    PROFCPU_ASSIGN_OR_RETURN(size_t n, reader.ReadData(buffer.get(), 256 * 1024));
    if (n == 0) return absl::OkStatus();
    PROFCPU_RETURN_IF_ERROR(base::WriteAll(out, absl::string_view(buffer.get(), n), name));
  }
}

}  // namespace

absl::Status WriteTarGz(const std::string& archive_path, const std::vector<ArchiveEntry>& entries) {
  return WriteArchive(archive_path, ArchiveFormat::kTarGz, entries);
}

absl::Status WriteArchive(const std::string& archive_path, ArchiveFormat format,
                          const std::vector<ArchiveEntry>& entries) {
  std::string temp_path = archive_path + ".partial";
  base::UniqueFd out(::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!out.valid()) return base::ErrnoStatus(errno, absl::StrCat("create ", temp_path));
  absl::Status status = format == ArchiveFormat::kZip ? WriteZipTo(out.get(), entries)
                                                      : WriteTarGzTo(out.get(), entries);
  // Durable before it takes the final name.
  if (status.ok() && ::fsync(out.get()) != 0) status = base::ErrnoStatus(errno, "sync archive");
  if (status.ok() && ::close(out.Release()) != 0) {
    status = base::ErrnoStatus(errno, absl::StrCat("close ", temp_path));
  }
  if (status.ok() && ::rename(temp_path.c_str(), archive_path.c_str()) != 0) {
    status = base::ErrnoStatus(errno, absl::StrCat("rename to ", archive_path));
  }
  if (!status.ok()) ::unlink(temp_path.c_str());
  return status;
}

absl::StatusOr<std::vector<std::string>> ExtractTarGz(const std::string& archive_path,
                                                      const std::string& dest_dir,
                                                      const ExtractLimits& limits,
                                                      const ExtractSkip& skip) {
  PROFCPU_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> input, OpenArchiveInput(archive_path));
  base::UniqueFd dir(::open(dest_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return base::ErrnoStatus(errno, absl::StrCat("open ", dest_dir));
  TarReader reader(input.get(), archive_path);

  std::vector<std::string> extracted;
  uint64_t total = 0;
  uint32_t count = 0;
  // The early stop (ExtractSkip::inputs_marker): the marker was read, and no
  // skipped entry before it, so the archive keeps its skipped entries last.
  bool marker_seen = false;
  bool skipped_before_marker = false;
  while (true) {
    PROFCPU_ASSIGN_OR_RETURN(std::optional<TarEntry> entry, reader.Next());
    if (!entry.has_value()) break;
    if (++count > limits.max_entries) {
      return absl::ResourceExhaustedError(absl::StrCat(archive_path, " has more than ",
                                                       limits.max_entries, " entries"));
    }
    const std::optional<std::string> inside = NameInside(entry->name);
    const bool directory = entry->kind == TarEntry::Kind::kDirectory;
    if (!inside.has_value() || (!directory && inside->empty()) ||
        (entry->kind != TarEntry::Kind::kFile && !directory)) {
      return absl::DataLossError(absl::StrCat(
          archive_path, ": refusing ", DescribeKind(*entry), " '", entry->name,
          "' (only plain files with relative names inside the folder are extracted)"));
    }
    // Folders are made as the files in them need them.
    if (directory) continue;
    const std::string& name = *inside;
    if (entry->size > limits.max_entry_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(archive_path, ": entry '", name, "' holds ",
                                                       entry->size, " bytes (at most ",
                                                       limits.max_entry_bytes, ")"));
    }
    if (std::find(skip.names.begin(), skip.names.end(), name) != skip.names.end()) {
      // Skipped entries last: nothing after this one is wanted.
      if (marker_seen && !skipped_before_marker) break;
      if (!marker_seen) skipped_before_marker = true;  // another order: read on
      continue;  // Next() skips its data
    }
    if (!skip.inputs_marker.empty() && name == skip.inputs_marker) marker_seen = true;
    if (total + entry->size > limits.max_total_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(archive_path, ": entry '", name,
                                                       "' passes the limit of ",
                                                       limits.max_total_bytes,
                                                       " bytes extracted in all"));
    }
    total += entry->size;
    if (::faccessat(dir.get(), name.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) == 0) continue;
    absl::StatusOr<CreatedFile> out = CreateInside(dir.get(), name);
    if (!out.ok()) {
      return absl::Status(out.status().code(),
                          absl::StrCat(archive_path, ": ", out.status().message()));
    }
    PROFCPU_RETURN_IF_ERROR(CopyData(reader, out->fd(), name));
    out->Keep();
    extracted.push_back(name);
  }
  return extracted;
}

}  // namespace profcpu::archive
