// The fields of one 512-byte tar header block, encoded and decoded: POSIX
// ustar (pax's base, IEEE Std 1003.1-2017 "pax", "ustar Interchange Format"),
// the older GNU and v7 layouts readers still meet, and pax extended header
// records ("%d %s=%s\n"). No I/O here: tar_writer.h and tar_reader.h frame
// the blocks; every decoder treats its bytes as hostile.
#ifndef PROFCPU_ARCHIVE_TAR_HEADER_H_
#define PROFCPU_ARCHIVE_TAR_HEADER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::archive {

inline constexpr size_t kTarBlock = 512;
// The largest size an 11-digit octal field holds (8 GiB - 1); beyond it the
// size goes into a pax record.
inline constexpr uint64_t kMaxOctalSize = 077777777777ull;

// Typeflags (ustar, plus the GNU and pax extensions a reader meets).
inline constexpr char kTypeFile = '0';
inline constexpr char kTypeOldFile = '\0';  // pre-POSIX regular file
inline constexpr char kTypeHardLink = '1';
inline constexpr char kTypeSymlink = '2';
inline constexpr char kTypeCharDevice = '3';
inline constexpr char kTypeBlockDevice = '4';
inline constexpr char kTypeDirectory = '5';
inline constexpr char kTypeFifo = '6';
inline constexpr char kTypeContiguous = '7';  // a regular file to every reader
inline constexpr char kTypePaxHeader = 'x';   // records for the next entry
inline constexpr char kTypePaxGlobal = 'g';   // records for the whole archive
inline constexpr char kTypeGnuLongName = 'L';
inline constexpr char kTypeGnuLongLink = 'K';

// What one header block says, before pax records or GNU long names replace
// any of it.
struct HeaderBlock {
  std::string name;  // ustar prefix + '/' + name when the prefix is set
  char typeflag = kTypeFile;
  uint64_t size = 0;
};

// ustar's name (100 bytes) and prefix (155 bytes) fields for `name`, split
// at a '/'; false when it fits neither way (a pax path record then).
bool SplitUstarName(absl::string_view name, absl::string_view* prefix, absl::string_view* rest);

// One ustar header block: mode 0644, owner 0, `name_field` and `prefix_field`
// must fit (100, 155 bytes), `size` at most kMaxOctalSize.
std::string EncodeHeaderBlock(absl::string_view name_field, absl::string_view prefix_field,
                              char typeflag, uint64_t size, int64_t mtime);

// One pax record: "LEN key=value\n", LEN counting itself.
std::string PaxRecord(absl::string_view key, absl::string_view value);

bool IsZeroBlock(absl::string_view block);

// Decodes a 512-byte block; InvalidArgument when its checksum or a numeric
// field is wrong (the caller adds where).
absl::StatusOr<HeaderBlock> DecodeHeaderBlock(absl::string_view block);

// The records of a pax extended header, in order.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParsePaxRecords(
    absl::string_view data);

}  // namespace profcpu::archive

#endif  // PROFCPU_ARCHIVE_TAR_HEADER_H_
