// Reads a tar stream entry by entry: POSIX ustar and pax (extended headers'
// path and size), GNU tar's format (././@LongLink names, base-256 sizes) and
// v7, as GNU tar, bsdtar, Python's tarfile and tar_writer.h write them. The
// stream is hostile: every header's checksum is verified, pax headers and
// long names are bounded (kMaxMetadataBytes), so is the run of them before one
// entry, and names longer than a path can be are refused. Errors name the
// archive (the label given) and the entry. What an entry may be (a symlink, a
// device) is for the caller to judge: archive.h refuses all but files.
#ifndef PROFCPU_ARCHIVE_TAR_READER_H_
#define PROFCPU_ARCHIVE_TAR_READER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

#include "archive/archive_input.h"

namespace profcpu::archive {

struct TarEntry {
  enum class Kind { kFile, kDirectory, kHardLink, kSymlink, kDevice, kFifo, kOther };
  std::string name;  // as archived: pax path, GNU long name, or ustar prefix/name
  Kind kind = Kind::kFile;
  char typeflag = '0';
  uint64_t size = 0;  // data bytes that follow the header
};

// "symlink", "GNU sparse file (type 'S')": for errors.
std::string DescribeKind(const TarEntry& entry);

class TarReader {
 public:
  static constexpr size_t kMaxMetadataBytes = 1 << 20;  // one pax header or long name
  static constexpr int kMaxMetadataHeaders = 16;        // in a row, before an entry
  static constexpr size_t kMaxNameBytes = 4096;         // PATH_MAX

  // Reads `source` (not owned); `label` (the archive's path) starts errors.
  TarReader(ByteSource* source, std::string label) : source_(source), label_(std::move(label)) {}

  // The next entry, skipping what is left of the current one's data;
  // nullopt at the end of the archive.
  absl::StatusOr<std::optional<TarEntry>> Next();
  // Up to `size` bytes of the current entry's data; 0 once all were read.
  absl::StatusOr<size_t> ReadData(char* out, size_t size);

 private:
  // Exactly `size` bytes, or an error saying the archive ends inside `what`.
  absl::Status ReadExactly(char* out, size_t size, const std::string& what);
  absl::Status SkipRestOfEntry();
  // A pax header's or long name's data, bounded.
  absl::StatusOr<std::string> ReadMetadata(uint64_t size, const std::string& what);
  absl::Status Error(absl::string_view message) const;

  ByteSource* source_;
  std::string label_;
  std::string current_;        // the entry being read, for errors
  uint64_t remaining_ = 0;     // its data not yet read
  uint64_t padding_ = 0;       // then zeros to the next block
  uint64_t offset_ = 0;        // bytes of the stream consumed
  bool ended_ = false;
};

}  // namespace profcpu::archive

#endif  // PROFCPU_ARCHIVE_TAR_READER_H_
