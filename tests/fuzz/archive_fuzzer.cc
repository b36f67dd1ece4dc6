// prof.tar.gz handed to `profcpu postprocess` (archive/archive.h): the
// archive may come from anywhere. The input is read as a .tar.gz or, when it
// is not gzip, as a plain tar (so mutations reach the tar headers directly).
// - Extraction must stay inside the destination: the target extracts into
//   DEST inside a scratch folder and checks that nothing appeared beside DEST,
//   that everything under DEST is a plain file or folder (no symlink, device
//   or FIFO), and that each name returned exists; extracting with
//   postprocess's skip list returns no name the full extraction did not.
// - tar_reader.h straight on the bytes: the data it hands out adds up to the
//   sizes it announced, and what it read, written again by tar_writer.h,
//   reads back the same (names of any length and bytes, sizes).
#include <dirent.h>
#include <sys/stat.h>

#include <string>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "archive/archive.h"
#include "archive/archive_input.h"
#include "archive/run_archive.h"
#include "archive/tar_reader.h"
#include "archive/tar_writer.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;

namespace {

int CountEntries(const std::string& dir) {
  int count = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") ++count;
    }
    ::closedir(d);
  }
  return count;
}

// True if everything below `dir` is a regular file or a directory.
bool OnlyPlainFiles(const std::string& dir, int depth) {
  Check(depth < 4096, "extraction nested folders absurdly deep");
  bool plain = true;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      std::string path = absl::StrCat(dir, "/", name);
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode)) {
        plain = plain && OnlyPlainFiles(path, depth + 1);
      } else if (!S_ISREG(st.st_mode)) {
        plain = false;
      }
    }
    ::closedir(d);
  }
  return plain;
}

struct Read {
  std::string name;
  profcpu::archive::TarEntry::Kind kind;
  std::string data;
};

// Every entry of `tar` with its data (up to 4 MiB in all), or nullopt at the
// first error.
std::optional<std::vector<Read>> ReadAll(absl::string_view tar) {
  profcpu::archive::StringSource source(tar);
  profcpu::archive::TarReader reader(&source, "input");
  std::vector<Read> entries;
  size_t total = 0;
  while (true) {
    auto entry = reader.Next();
    if (!entry.ok()) return std::nullopt;
    if (!entry->has_value()) return entries;
    Read read{(*entry)->name, (*entry)->kind, ""};
    const uint64_t announced = (*entry)->size;
    char buffer[4096];
    while (true) {
      auto n = reader.ReadData(buffer, sizeof(buffer));
      if (!n.ok()) return std::nullopt;
      if (*n == 0) break;
      total += *n;
      if (total > (4u << 20)) return std::nullopt;
      read.data.append(buffer, *n);
    }
    Check(read.data.size() == announced, "an entry's data is not the size its header gave");
    entries.push_back(std::move(read));
  }
}

void CheckRoundTrip(absl::string_view input) {
  std::optional<std::vector<Read>> entries = ReadAll(input);
  if (!entries.has_value()) return;
  std::string tar;
  profcpu::archive::TarWriter writer([&tar](absl::string_view bytes) {
    tar.append(bytes.data(), bytes.size());
    return absl::OkStatus();
  });
  std::vector<Read> written;
  for (const Read& entry : *entries) {
    if (entry.kind != profcpu::archive::TarEntry::Kind::kFile || entry.name.empty()) continue;
    Check(writer.BeginFile(entry.name, entry.data.size(), 0).ok(), "the writer refused a name read");
    Check(writer.WriteData(entry.data).ok(), "the writer refused data");
    written.push_back(entry);
  }
  Check(writer.Finish().ok(), "the writer did not finish");
  std::optional<std::vector<Read>> again = ReadAll(tar);
  Check(again.has_value(), "what the writer wrote does not read back");
  Check(again->size() == written.size(), "a different number of entries read back");
  for (size_t i = 0; i < written.size(); ++i) {
    Check((*again)[i].name == written[i].name, "a name did not read back the same");
    Check((*again)[i].data == written[i].data, "data did not read back the same");
    Check((*again)[i].kind == profcpu::archive::TarEntry::Kind::kFile, "a file read back as not one");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  profcpu::fuzz::MemFile archive(profcpu::fuzz::AsText(data, size));
  profcpu::fuzz::ScratchDir scratch;
  std::string dest = absl::StrCat(scratch.path(), "/dest");
  Check(::mkdir(dest.c_str(), 0755) == 0, "mkdir failed");
  profcpu::archive::ExtractLimits limits;
  limits.max_entry_bytes = 1 << 20;
  limits.max_total_bytes = 4 << 20;
  limits.max_entries = 1000;
  auto extracted = profcpu::archive::ExtractTarGz(archive.path(), dest, limits);
  Check(CountEntries(scratch.path()) == 1, "extraction wrote outside its destination");

  Check(OnlyPlainFiles(dest, 0), "extraction created something other than plain files");
  if (extracted.ok()) {
    for (const std::string& name : *extracted) {
      struct stat st;
      Check(::lstat(absl::StrCat(dest, "/", name).c_str(), &st) == 0 && S_ISREG(st.st_mode),
            "an extracted name is not a file in the destination");
    }
    std::string skipping = absl::StrCat(scratch.path(), "/skipping");
    Check(::mkdir(skipping.c_str(), 0755) == 0, "mkdir failed");
    auto some = profcpu::archive::ExtractTarGz(archive.path(), skipping, limits,
                                               profcpu::archive::PostprocessSkip(true));
    Check(CountEntries(scratch.path()) == 2, "extraction wrote outside its destination");
    if (some.ok()) {
      for (const std::string& name : *some) {
        Check(std::find(extracted->begin(), extracted->end(), name) != extracted->end(),
              "extracting with a skip list returned a name the full extraction did not");
      }
    }
  }
  CheckRoundTrip(profcpu::fuzz::AsText(data, size));
  return 0;
}
