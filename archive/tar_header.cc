#include "archive/tar_header.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace profcpu::archive {
namespace {

// Field offsets and widths of the ustar header (POSIX pax, "ustar Header Block").
struct Field {
  size_t offset;
  size_t width;
};
constexpr Field kName{0, 100};
constexpr Field kMode{100, 8};
constexpr Field kUid{108, 8};
constexpr Field kGid{116, 8};
constexpr Field kSize{124, 12};
constexpr Field kMtime{136, 12};
constexpr Field kChecksum{148, 8};
constexpr size_t kTypeflagOffset = 156;
constexpr Field kMagic{257, 6};
constexpr Field kVersion{263, 2};
constexpr Field kPrefix{345, 155};

// POSIX ustar's magic; GNU tar's own format writes "ustar " + " \0" and keeps
// other data where ustar has its prefix, so only this one has a prefix.
constexpr absl::string_view kPosixMagic("ustar\0", 6);

void PutOctal(std::string& block, Field field, uint64_t value) {
  // width - 1 digits and a NUL, as ustar asks of numeric fields.
  std::string digits = absl::StrFormat("%0*o", static_cast<int>(field.width - 1), value);
  std::memcpy(&block[field.offset], digits.data(), field.width - 1);
  block[field.offset + field.width - 1] = '\0';
}

void PutText(std::string& block, Field field, absl::string_view text) {
  if (text.empty()) return;  // (an empty view may hold a null pointer)
  std::memcpy(&block[field.offset], text.data(), std::min(text.size(), field.width));
}

absl::string_view Get(absl::string_view block, Field field) {
  return block.substr(field.offset, field.width);
}

// Up to the first NUL: text fields fill their width or end with one.
std::string Text(absl::string_view field) {
  return std::string(field.substr(0, field.find('\0')));
}

// An octal number, or GNU's base-256 (first byte's high bit set: the rest is
// a big-endian binary number; 0xff first marks a negative one). Leading
// spaces, then digits up to a space, NUL or the field's end.
absl::StatusOr<uint64_t> ParseNumber(absl::string_view field, absl::string_view what) {
  const auto first = static_cast<unsigned char>(field[0]);
  if (first & 0x80) {
    if (first != 0x80) return absl::InvalidArgumentError(absl::StrCat("negative ", what));
    uint64_t value = 0;
    for (size_t i = 1; i < field.size(); ++i) {
      if (value >> 55) return absl::InvalidArgumentError(absl::StrCat(what, " out of range"));
      value = (value << 8) | static_cast<unsigned char>(field[i]);
    }
    if (value >> 63) return absl::InvalidArgumentError(absl::StrCat(what, " out of range"));
    return value;
  }
  size_t i = 0;
  while (i < field.size() && field[i] == ' ') ++i;
  uint64_t value = 0;
  for (; i < field.size() && field[i] != ' ' && field[i] != '\0'; ++i) {
    if (field[i] < '0' || field[i] > '7') {
      return absl::InvalidArgumentError(absl::StrCat(what, " is not an octal number"));
    }
    value = value * 8 + static_cast<uint64_t>(field[i] - '0');  // 12 digits: no overflow
  }
  return value;
}

// The header's sums with the checksum field counted as spaces: unsigned, as
// POSIX says, and signed, as some old tars computed it.
void Checksums(absl::string_view block, uint64_t* unsigned_sum, int64_t* signed_sum) {
  *unsigned_sum = 0;
  *signed_sum = 0;
  for (size_t i = 0; i < kTarBlock; ++i) {
    const bool in_checksum = i >= kChecksum.offset && i < kChecksum.offset + kChecksum.width;
    const char c = in_checksum ? ' ' : block[i];
    *unsigned_sum += static_cast<unsigned char>(c);
    *signed_sum += static_cast<signed char>(c);
  }
}

}  // namespace

bool SplitUstarName(absl::string_view name, absl::string_view* prefix, absl::string_view* rest) {
  if (name.size() <= kName.width) {
    *prefix = {};
    *rest = name;
    return true;
  }
  if (name.size() > kPrefix.width + 1 + kName.width) return false;
  // The last '/' that leaves a prefix short enough; the rest must then fit.
  for (size_t slash = std::min(name.size() - 1, kPrefix.width);; --slash) {
    if (name[slash] == '/') {
      if (slash == 0 || name.size() - slash - 1 > kName.width || slash + 1 == name.size()) {
        return false;
      }
      *prefix = name.substr(0, slash);
      *rest = name.substr(slash + 1);
      return true;
    }
    if (slash == 0) return false;
  }
}

std::string EncodeHeaderBlock(absl::string_view name_field, absl::string_view prefix_field,
                              char typeflag, uint64_t size, int64_t mtime) {
  std::string block(kTarBlock, '\0');
  PutText(block, kName, name_field);
  PutOctal(block, kMode, 0644);
  PutOctal(block, kUid, 0);
  PutOctal(block, kGid, 0);
  PutOctal(block, kSize, size);
  // Eleven octal digits reach the year 4147; before 1970 is written as 1970.
  PutOctal(block, kMtime, mtime < 0 ? 0 : std::min<uint64_t>(mtime, kMaxOctalSize));
  block[kTypeflagOffset] = typeflag;
  PutText(block, kMagic, kPosixMagic);
  PutText(block, kVersion, "00");
  PutText(block, kPrefix, prefix_field);
  uint64_t sum;
  int64_t signed_sum;
  Checksums(block, &sum, &signed_sum);
  // Six digits, a NUL and a space (POSIX; what GNU tar writes).
  std::string digits = absl::StrFormat("%06o", sum);
  std::memcpy(&block[kChecksum.offset], digits.data(), 6);
  block[kChecksum.offset + 6] = '\0';
  block[kChecksum.offset + 7] = ' ';
  return block;
}

std::string PaxRecord(absl::string_view key, absl::string_view value) {
  // The length counts its own digits: try the length without them, and
  // once more if adding them made it one digit longer.
  const size_t body = 1 + key.size() + 1 + value.size() + 1;  // ' ', '=', '\n'
  size_t length = body + std::to_string(body).size();
  if (std::to_string(length).size() != std::to_string(body).size()) {
    length = body + std::to_string(length).size();
  }
  return absl::StrCat(length, " ", key, "=", value, "\n");
}

bool IsZeroBlock(absl::string_view block) {
  for (char c : block) {
    if (c != '\0') return false;
  }
  return true;
}

absl::StatusOr<HeaderBlock> DecodeHeaderBlock(absl::string_view block) {
  if (block.size() != kTarBlock) return absl::InvalidArgumentError("short header block");
  absl::StatusOr<uint64_t> recorded = ParseNumber(Get(block, kChecksum), "checksum");
  if (!recorded.ok()) return recorded.status();
  uint64_t sum;
  int64_t signed_sum;
  Checksums(block, &sum, &signed_sum);
  if (*recorded != sum && static_cast<int64_t>(*recorded) != signed_sum) {
    return absl::InvalidArgumentError("header checksum mismatch");
  }
  HeaderBlock header;
  header.typeflag = block[kTypeflagOffset];
  absl::StatusOr<uint64_t> size = ParseNumber(Get(block, kSize), "size field");
  if (!size.ok()) return size.status();
  header.size = *size;
  header.name = Text(Get(block, kName));
  if (Get(block, kMagic) == kPosixMagic) {
    std::string prefix = Text(Get(block, kPrefix));
    if (!prefix.empty()) header.name = absl::StrCat(prefix, "/", header.name);
  }
  return header;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParsePaxRecords(
    absl::string_view data) {
  std::vector<std::pair<std::string, std::string>> records;
  while (!data.empty()) {
    // "LEN key=value\n": LEN decimal digits, the whole record's length.
    size_t length = 0;
    size_t i = 0;
    while (i < data.size() && data[i] >= '0' && data[i] <= '9' && i < 20) {
      length = length * 10 + static_cast<size_t>(data[i] - '0');
      ++i;
    }
    if (i == 0 || i >= data.size() || data[i] != ' ' || length <= i + 1 || length > data.size()) {
      // GNU tar and libarchive pad the header's data with NULs.
      if (IsZeroBlock(data)) break;
      return absl::InvalidArgumentError("malformed pax record length");
    }
    absl::string_view record = data.substr(i + 1, length - i - 1);
    data.remove_prefix(length);
    if (record.back() != '\n') return absl::InvalidArgumentError("pax record without newline");
    record.remove_suffix(1);
    const size_t equals = record.find('=');
    if (equals == absl::string_view::npos || equals == 0) {
      return absl::InvalidArgumentError("pax record without key=value");
    }
    records.emplace_back(std::string(record.substr(0, equals)),
                         std::string(record.substr(equals + 1)));
  }
  return records;
}

}  // namespace profcpu::archive
