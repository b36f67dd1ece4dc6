// prof.tar.gz handed to `profcpu postprocess` (archive/archive.h): the
// archive may come from anywhere. Extraction must stay inside the destination:
// the target extracts into DEST inside a scratch folder and checks that
// nothing appeared beside DEST, that everything under DEST is a plain file or
// folder (no symlink, device or FIFO), and that each name returned exists.
#include <dirent.h>
#include <sys/stat.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "archive/archive.h"
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
  }
  return 0;
}
