// Test helpers: tar streams built block by block, the way a hostile or a
// foreign writer would (any typeflag, any name, pax records as given).
#ifndef PROFCPU_ARCHIVE_TAR_TESTING_H_
#define PROFCPU_ARCHIVE_TAR_TESTING_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "archive/deflate.h"
#include "archive/tar_header.h"
#include "base/file_io.h"

namespace profcpu::archive::testing {

struct RawEntry {
  RawEntry(std::string name, char typeflag = kTypeFile, std::string data = "abc",
           std::string pax = "")
      : name(std::move(name)), typeflag(typeflag), data(std::move(data)), pax(std::move(pax)) {}
  std::string name;
  char typeflag;
  std::string data;
  std::string pax;  // records (PaxRecord) for a pax header before the entry
};

inline std::string Padded(absl::string_view data) {
  std::string out(data);
  out.append((kTarBlock - data.size() % kTarBlock) % kTarBlock, '\0');
  return out;
}

// A tar stream of `entries` as given (names up to 100 bytes, unless in `pax`),
// with the end-of-archive blocks.
inline std::string RawTar(const std::vector<RawEntry>& entries) {
  std::string tar;
  for (const RawEntry& entry : entries) {
    if (!entry.pax.empty()) {
      tar += EncodeHeaderBlock("PaxHeaders/x", "", kTypePaxHeader, entry.pax.size(), 0);
      tar += Padded(entry.pax);
    }
    tar += EncodeHeaderBlock(entry.name.substr(0, 100), "", entry.typeflag, entry.data.size(), 0);
    tar += Padded(entry.data);
  }
  return tar + std::string(2 * kTarBlock, '\0');
}

// The same gzipped, written to `path`.
inline void WriteRawTarGz(const std::string& path, const std::vector<RawEntry>& entries) {
  (void)base::WriteFile(path, *Deflate(RawTar(entries), DeflateContainer::kGzip));
}

}  // namespace profcpu::archive::testing

#endif  // PROFCPU_ARCHIVE_TAR_TESTING_H_
