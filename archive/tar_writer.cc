#include "archive/tar_writer.h"

#include "absl/strings/str_cat.h"
#include "archive/tar_header.h"

namespace profcpu::archive {
namespace {

// The pax header's own name: informative only (readers apply its records to
// the next entry); GNU tar and libarchive write a "PaxHeaders" name too.
std::string PaxHeaderName(absl::string_view name) {
  absl::string_view base = name.substr(name.rfind('/') + 1);
  return std::string(absl::StrCat("PaxHeaders/", base).substr(0, 100));
}

}  // namespace

std::string FileHeaderBlocks(absl::string_view name, uint64_t size, int64_t mtime) {
  absl::string_view prefix;
  absl::string_view rest;
  const bool name_fits = SplitUstarName(name, &prefix, &rest);
  const bool size_fits = size <= kMaxOctalSize;
  std::string records;
  if (!name_fits) {
    records += PaxRecord("path", name);
    // Readers that ignore pax still see the name's end.
    prefix = {};
    rest = name.substr(name.size() > 100 ? name.size() - 100 : 0);
  }
  if (!size_fits) records += PaxRecord("size", absl::StrCat(size));
  std::string blocks;
  if (!records.empty()) {
    blocks = EncodeHeaderBlock(PaxHeaderName(name), "", kTypePaxHeader, records.size(), mtime);
    blocks += records;
    blocks.append((kTarBlock - records.size() % kTarBlock) % kTarBlock, '\0');
  }
  // With the size in a pax record, ustar's field says 0, as Python's tarfile
  // writes it.
  blocks += EncodeHeaderBlock(rest, prefix, kTypeFile, size_fits ? size : 0, mtime);
  return blocks;
}

absl::Status TarWriter::BeginFile(absl::string_view name, uint64_t size, int64_t mtime) {
  if (in_file_) {
    absl::Status ended = EndFile();
    if (!ended.ok()) return ended;
  }
  if (name.empty() || name.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("cannot archive a file named '", name, "'"));
  }
  absl::Status status = sink_(FileHeaderBlocks(name, size, mtime));
  if (!status.ok()) return status;
  name_ = std::string(name);
  remaining_ = size;
  written_ = size;
  in_file_ = true;
  return absl::OkStatus();
}

absl::Status TarWriter::WriteData(absl::string_view data) {
  if (!in_file_ || data.size() > remaining_) {
    return absl::InternalError(absl::StrCat("tar: more data than the header of '", name_,
                                            "' announced"));
  }
  remaining_ -= data.size();
  return sink_(data);
}

absl::Status TarWriter::EndFile() {
  in_file_ = false;
  if (remaining_ != 0) {
    return absl::DataLossError(absl::StrCat("tar: '", name_, "' is ", remaining_,
                                            " bytes shorter than its header says"));
  }
  const size_t padding = (kTarBlock - written_ % kTarBlock) % kTarBlock;
  return sink_(std::string(padding, '\0'));
}

absl::Status TarWriter::Finish() {
  if (in_file_) {
    absl::Status ended = EndFile();
    if (!ended.ok()) return ended;
  }
  return sink_(std::string(2 * kTarBlock, '\0'));
}

}  // namespace profcpu::archive
