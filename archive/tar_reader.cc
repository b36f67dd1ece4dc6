#include "archive/tar_reader.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "archive/tar_header.h"

namespace profcpu::archive {
namespace {

uint64_t PaddingAfter(uint64_t size) { return (kTarBlock - size % kTarBlock) % kTarBlock; }

// A pax "size" value: decimal digits (18 at most: it fits an int64).
absl::StatusOr<uint64_t> ParsePaxSize(absl::string_view value) {
  if (value.empty() || value.size() > 18) {
    return absl::InvalidArgumentError(absl::StrCat("pax size '", value, "' is out of range"));
  }
  uint64_t size = 0;
  for (char c : value) {
    if (c < '0' || c > '9') {
      return absl::InvalidArgumentError(absl::StrCat("pax size '", value, "' is not a number"));
    }
    size = size * 10 + static_cast<uint64_t>(c - '0');
  }
  return size;
}

TarEntry::Kind KindOf(char typeflag, absl::string_view name) {
  switch (typeflag) {
    case kTypeFile:
    case kTypeOldFile:
    case kTypeContiguous:
      // Pre-POSIX tars marked directories by a trailing '/' alone.
      return absl::EndsWith(name, "/") ? TarEntry::Kind::kDirectory : TarEntry::Kind::kFile;
    case kTypeDirectory:
      return TarEntry::Kind::kDirectory;
    case kTypeHardLink:
      return TarEntry::Kind::kHardLink;
    case kTypeSymlink:
      return TarEntry::Kind::kSymlink;
    case kTypeCharDevice:
    case kTypeBlockDevice:
      return TarEntry::Kind::kDevice;
    case kTypeFifo:
      return TarEntry::Kind::kFifo;
    default:
      return TarEntry::Kind::kOther;
  }
}

// A name for errors: printable, and not 4 KiB of it.
std::string Shown(absl::string_view name) {
  std::string shown;
  for (char c : name.substr(0, 200)) {
    shown += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  if (name.size() > 200) shown += "...";
  return shown;
}

}  // namespace

std::string DescribeKind(const TarEntry& entry) {
  switch (entry.kind) {
    case TarEntry::Kind::kFile:
      return "file";
    case TarEntry::Kind::kDirectory:
      return "directory";
    case TarEntry::Kind::kHardLink:
      return "hard link";
    case TarEntry::Kind::kSymlink:
      return "symlink";
    case TarEntry::Kind::kDevice:
      return "device";
    case TarEntry::Kind::kFifo:
      return "FIFO";
    case TarEntry::Kind::kOther:
      break;
  }
  if (entry.typeflag == 'S') return "GNU sparse file";
  const auto type = static_cast<unsigned char>(entry.typeflag);
  return type >= 0x20 && type < 0x7f ? absl::StrCat("entry of type '", std::string(1, entry.typeflag), "'")
                                     : absl::StrCat("entry of type ", static_cast<int>(type));
}

absl::Status TarReader::Error(absl::string_view message) const {
  return absl::DataLossError(absl::StrCat(label_, ": ", message));
}

absl::Status TarReader::ReadExactly(char* out, size_t size, const std::string& what) {
  size_t got = 0;
  while (got < size) {
    absl::StatusOr<size_t> n = source_->Read(out + got, size - got);
    if (!n.ok()) return n.status();
    if (*n == 0) return Error(absl::StrCat("the archive ends inside ", what, " (truncated)"));
    got += *n;
  }
  offset_ += size;
  return absl::OkStatus();
}

absl::Status TarReader::SkipRestOfEntry() {
  char scratch[64 * 1024];
  uint64_t left = remaining_ + padding_;
  remaining_ = padding_ = 0;
  while (left > 0) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(left, sizeof(scratch)));
    absl::Status status = ReadExactly(scratch, n, absl::StrCat("entry '", Shown(current_), "'"));
    if (!status.ok()) return status;
    left -= n;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> TarReader::ReadMetadata(uint64_t size, const std::string& what) {
  if (size > kMaxMetadataBytes) {
    return Error(absl::StrCat(what, " at offset ", offset_ - kTarBlock, " holds ", size,
                              " bytes (at most ", kMaxMetadataBytes, ")"));
  }
  std::string data(size, '\0');
  absl::Status status = ReadExactly(data.data(), data.size(), what);
  char padding[kTarBlock];
  if (status.ok()) status = ReadExactly(padding, PaddingAfter(size), what);
  if (!status.ok()) return status;
  return data;
}

absl::StatusOr<std::optional<TarEntry>> TarReader::Next() {
  if (ended_) return std::nullopt;
  absl::Status skipped = SkipRestOfEntry();
  if (!skipped.ok()) return skipped;
  const std::string after =
      current_.empty() ? std::string() : absl::StrCat(" (after entry '", Shown(current_), "')");
  std::optional<std::string> pax_path;
  std::optional<std::string> long_name;
  std::optional<uint64_t> pax_size;
  bool pax_sparse = false;
  int metadata_headers = 0;
  while (true) {
    const uint64_t header_offset = offset_;
    char block[kTarBlock];
    size_t got = 0;
    while (got < kTarBlock) {
      absl::StatusOr<size_t> n = source_->Read(block + got, kTarBlock - got);
      if (!n.ok()) return n.status();
      if (*n == 0) break;
      got += *n;
    }
    offset_ += got;
    if (got == 0 && header_offset == 0) return absl::DataLossError(absl::StrCat(label_, " is empty, not a tar archive"));
    // The end: two zero blocks, or (tolerated, as GNU tar and libarchive do)
    // one, or none, where a header would start.
    if (got == 0 || (got == kTarBlock && IsZeroBlock(absl::string_view(block, kTarBlock)))) {
      if (metadata_headers > 0) {
        return Error(absl::StrCat("the archive ends after an extended header", after));
      }
      ended_ = true;
      return std::nullopt;
    }
    if (got < kTarBlock) {
      if (header_offset == 0) {
        return absl::DataLossError(
            absl::StrCat(label_, " is not a tar archive (shorter than one header)"));
      }
      return Error(absl::StrCat("the archive ends inside the header at offset ", header_offset,
                                after, " (truncated)"));
    }
    absl::StatusOr<HeaderBlock> header = DecodeHeaderBlock(absl::string_view(block, kTarBlock));
    if (!header.ok()) {
      if (header_offset == 0) {
        return absl::DataLossError(absl::StrCat(label_, " is not a tar archive (",
                                                header.status().message(), ")"));
      }
      return Error(absl::StrCat("corrupt header at offset ", header_offset, after, ": ",
                                header.status().message()));
    }
    const char type = header->typeflag;
    if (type == kTypePaxHeader || type == kTypePaxGlobal || type == kTypeGnuLongName ||
        type == kTypeGnuLongLink) {
      if (++metadata_headers > kMaxMetadataHeaders) {
        return Error(absl::StrCat("more than ", kMaxMetadataHeaders,
                                  " extended headers in a row at offset ", header_offset));
      }
      const std::string what = type == kTypePaxHeader   ? "a pax header"
                               : type == kTypePaxGlobal ? "a pax global header"
                                                        : "a GNU long name";
      absl::StatusOr<std::string> data = ReadMetadata(header->size, absl::StrCat(what, after));
      if (!data.ok()) return data.status();
      if (type == kTypeGnuLongName) {
        long_name = data->substr(0, data->find('\0'));
      } else if (type == kTypePaxHeader || type == kTypePaxGlobal) {
        auto records = ParsePaxRecords(*data);
        if (!records.ok()) {
          return Error(absl::StrCat(what, " at offset ", header_offset, after, ": ",
                                    records.status().message()));
        }
        // Global records (git archive's comment) name no entry: ignored.
        if (type == kTypePaxGlobal) continue;
        for (const auto& [key, value] : *records) {
          if (key == "path") {
            pax_path = value;
          } else if (key == "size") {
            absl::StatusOr<uint64_t> size = ParsePaxSize(value);
            if (!size.ok()) {
              return Error(absl::StrCat("pax header at offset ", header_offset, after, ": ",
                                        size.status().message()));
            }
            pax_size = *size;
          } else if (absl::StartsWith(key, "GNU.sparse.")) {
            pax_sparse = true;
          }
        }
      }
      continue;  // GNU long link names ('K') are for links, which are refused
    }
    TarEntry entry;
    entry.name = pax_path ? *pax_path : long_name ? *long_name : header->name;
    entry.typeflag = pax_sparse ? 'S' : type;
    entry.kind = pax_sparse ? TarEntry::Kind::kOther : KindOf(type, entry.name);
    entry.size = pax_size ? *pax_size : header->size;
    current_ = entry.name;
    if (entry.name.size() > kMaxNameBytes) {
      return Error(absl::StrCat("entry '", Shown(entry.name), "' has a name longer than ",
                                kMaxNameBytes, " bytes"));
    }
    if (entry.name.find('\0') != std::string::npos) {
      return Error(absl::StrCat("entry '", Shown(entry.name), "' has a NUL in its name"));
    }
    remaining_ = entry.size;
    padding_ = PaddingAfter(entry.size);
    return entry;
  }
}

absl::StatusOr<size_t> TarReader::ReadData(char* out, size_t size) {
  const size_t wanted = static_cast<size_t>(std::min<uint64_t>(size, remaining_));
  if (wanted == 0) return 0;
  absl::StatusOr<size_t> n = source_->Read(out, wanted);
  if (!n.ok()) return n.status();
  if (*n == 0) {
    return Error(absl::StrCat("the archive ends inside entry '", Shown(current_), "' (truncated)"));
  }
  remaining_ -= *n;
  offset_ += *n;
  return *n;
}

}  // namespace profcpu::archive
