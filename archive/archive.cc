#include "archive/archive.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/errno_status.h"
#include "base/file_io.h"
#include "base/status_macros.h"
#include "base/unique_fd.h"
#include "archive/libarchive_api.h"
#include "archive/parallel_gzip.h"

namespace profcpu::archive {
namespace {

struct ArchiveDeleter {
  const LibArchive* api;
  void operator()(::archive* a) const { api->free_archive(a); }
};
using ArchivePtr = std::unique_ptr<::archive, ArchiveDeleter>;

struct EntryDeleter {
  const LibArchive* api;
  void operator()(archive_entry* e) const { api->entry_free(e); }
};

absl::Status ArchiveError(const LibArchive& api, ::archive* a, absl::string_view what) {
  const char* message = api.error_string(a);
  return absl::InternalError(absl::StrCat(what, ": ", message ? message : "unknown error"));
}

absl::Status AddFile(const LibArchive& api, ::archive* a, const ArchiveEntry& entry) {
  base::UniqueFd fd(::open(entry.source_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return base::ErrnoStatus(errno, absl::StrCat("open ", entry.source_path));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return base::ErrnoStatus(errno, "stat");
  std::unique_ptr<archive_entry, EntryDeleter> header(api.entry_new(), EntryDeleter{&api});
  api.entry_set_pathname(header.get(), entry.name.c_str());
  api.entry_set_size(header.get(), st.st_size);
  api.entry_set_filetype(header.get(), AE_IFREG);
  api.entry_set_perm(header.get(), 0644);
  api.entry_set_mtime(header.get(), st.st_mtim.tv_sec, 0);
  if (api.write_header(a, header.get()) != ARCHIVE_OK) {
    return ArchiveError(api, a, absl::StrCat("add ", entry.name));
  }
  char buffer[256 * 1024];
  int64_t remaining = st.st_size;  // the header promised this many bytes
  while (remaining > 0) {
    ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return base::ErrnoStatus(errno, absl::StrCat("read ", entry.source_path));
    if (n == 0) return absl::DataLossError(absl::StrCat(entry.source_path, " shrank while archived"));
    if (n > remaining) n = static_cast<ssize_t>(remaining);
    if (api.write_data(a, buffer, static_cast<size_t>(n)) != n) {
      return ArchiveError(api, a, absl::StrCat("write ", entry.name));
    }
    remaining -= n;
  }
  return absl::OkStatus();
}

// libarchive's output for a tar.gz: the tar stream, into ParallelGzipWriter.
struct GzipSink {
  explicit GzipSink(int fd) : writer(fd) {}
  static la_ssize_t Write(::archive*, void* client, const void* data, size_t size) {
    auto* sink = static_cast<GzipSink*>(client);
    if (sink->status.ok()) {
      sink->status = sink->writer.Write(absl::string_view(static_cast<const char*>(data), size));
    }
    // A failed write fails libarchive's write_data, which reports it.
    return sink->status.ok() ? static_cast<la_ssize_t>(size) : -1;
  }
  ParallelGzipWriter writer;
  absl::Status status;
};

// "a/b.txt" is fine; "", "/etc/x", "../x", "a/../../x" are not.
bool IsSafeRelativePath(absl::string_view name) {
  if (name.empty() || name[0] == '/') return false;
  for (absl::string_view part : absl::StrSplit(name, '/')) {
    if (part == "..") return false;
  }
  return true;
}

absl::StatusOr<base::UniqueFd> CreateInside(int dir_fd, const std::string& name) {
  // Walk the path one directory at a time without following symlinks.
  std::vector<std::string> parts = absl::StrSplit(name, '/', absl::SkipEmpty());
  base::UniqueFd current(::dup(dir_fd));
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i] == ".") continue;
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
  return base::UniqueFd(fd);
}

}  // namespace

absl::Status WriteTarGz(const std::string& archive_path, const std::vector<ArchiveEntry>& entries) {
  return WriteArchive(archive_path, ArchiveFormat::kTarGz, entries);
}

absl::Status WriteArchive(const std::string& archive_path, ArchiveFormat format,
                          const std::vector<ArchiveEntry>& entries) {
  PROFCPU_ASSIGN_OR_RETURN(const LibArchive* api, LoadLibArchive());
  std::string temp_path = archive_path + ".partial";
  ArchivePtr a(api->write_new(), ArchiveDeleter{api});
  base::UniqueFd out;
  std::optional<GzipSink> gzip;
  if (format == ArchiveFormat::kZip) {
    api->write_set_format_zip(a.get());  // deflated entries, as PerfView reads them
    if (api->write_open_filename(a.get(), temp_path.c_str()) != ARCHIVE_OK) {
      return ArchiveError(*api, a.get(), absl::StrCat("create ", temp_path));
    }
  } else {
    // The tar stream is compressed here, on every core (parallel_gzip.h),
    // rather than by libarchive's gzip filter on one.
    api->write_set_format_pax_restricted(a.get());
    api->write_set_bytes_in_last_block(a.get(), 1);  // no padding to 10 KiB
    out.Reset(::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!out.valid()) return base::ErrnoStatus(errno, absl::StrCat("create ", temp_path));
    gzip.emplace(out.get());
    if (api->write_open(a.get(), &*gzip, nullptr, &GzipSink::Write, nullptr) != ARCHIVE_OK) {
      return ArchiveError(*api, a.get(), absl::StrCat("create ", temp_path));
    }
  }
  absl::Status status;
  for (const ArchiveEntry& entry : entries) {
    status = AddFile(*api, a.get(), entry);
    if (!status.ok()) break;
  }
  if (api->write_close(a.get()) != ARCHIVE_OK && status.ok()) {
    status = ArchiveError(*api, a.get(), absl::StrCat("finish ", temp_path));
  }
  if (gzip.has_value()) {
    // The sink's own error (a full disk, say) says more than libarchive's.
    if (!gzip->status.ok()) status = gzip->status;
    absl::Status finished = gzip->writer.Finish();
    if (status.ok()) status = finished;
    if (status.ok() && ::close(out.Release()) != 0) {
      status = base::ErrnoStatus(errno, absl::StrCat("close ", temp_path));
    }
  }
  if (status.ok()) {
    // Durable before it takes the final name.
    base::UniqueFd fd(::open(temp_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.valid() && ::fsync(fd.get()) != 0) status = base::ErrnoStatus(errno, "sync archive");
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
  PROFCPU_ASSIGN_OR_RETURN(const LibArchive* api, LoadLibArchive());
  ArchivePtr a(api->read_new(), ArchiveDeleter{api});
  api->read_support_filter_gzip(a.get());
  api->read_support_filter_none(a.get());
  api->read_support_format_tar(a.get());
  if (api->read_open_filename(a.get(), archive_path.c_str(), 256 * 1024) != ARCHIVE_OK) {
    return ArchiveError(*api, a.get(), absl::StrCat("open ", archive_path));
  }
  base::UniqueFd dir(::open(dest_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return base::ErrnoStatus(errno, absl::StrCat("open ", dest_dir));

  std::vector<std::string> extracted;
  uint64_t total = 0;
  uint32_t count = 0;
  // The early stop (ExtractSkip::inputs_marker): the marker was read, and no
  // skipped entry before it, so the archive keeps its skipped entries last.
  bool marker_seen = false;
  bool skipped_before_marker = false;
  archive_entry* header;
  while (true) {
    int r = api->read_next_header(a.get(), &header);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
      return ArchiveError(*api, a.get(), absl::StrCat("read ", archive_path));
    }
    if (++count > limits.max_entries) {
      return absl::ResourceExhaustedError(absl::StrCat(archive_path, " has too many entries"));
    }
    const char* raw_name = api->entry_pathname(header);
    std::string name = raw_name ? raw_name : "";
    if (api->entry_filetype(header) == AE_IFDIR) continue;
    if (api->entry_filetype(header) != AE_IFREG || !IsSafeRelativePath(name)) {
      return absl::DataLossError(absl::StrCat(archive_path, ": refusing entry '", name,
                                              "' (only plain relative files are allowed)"));
    }
    if (std::find(skip.names.begin(), skip.names.end(), name) != skip.names.end()) {
      // Skipped entries last: nothing after this one is wanted.
      if (marker_seen && !skipped_before_marker) break;
      if (!marker_seen) skipped_before_marker = true;  // another order: read on
      continue;  // the next header skips its data
    }
    if (!skip.inputs_marker.empty() && name == skip.inputs_marker) marker_seen = true;
    int64_t size = api->entry_size(header);
    if (size < 0 || static_cast<uint64_t>(size) > limits.max_entry_bytes ||
        total + static_cast<uint64_t>(size) > limits.max_total_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(archive_path, ": entry '", name, "' is too large"));
    }
    total += static_cast<uint64_t>(size);
    if (::faccessat(dir.get(), name.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) == 0) continue;
    auto out = CreateInside(dir.get(), name);
    if (!out.ok()) return out.status();
    char buffer[256 * 1024];
    uint64_t written = 0;
    while (true) {
      la_ssize_t n = api->read_data(a.get(), buffer, sizeof(buffer));
      if (n < 0) return ArchiveError(*api, a.get(), absl::StrCat("read ", name));
      if (n == 0) break;
      written += static_cast<uint64_t>(n);
      if (written > static_cast<uint64_t>(size)) {
        return absl::DataLossError(absl::StrCat(name, " is longer than its header says"));
      }
      absl::Status status = base::WriteAll(out->get(), absl::string_view(buffer, n), name);
      if (!status.ok()) return status;
    }
    extracted.push_back(name);
  }
  return extracted;
}

}  // namespace profcpu::archive
