// A main() for fuzz targets in builds without libFuzzer (g++, ASan): runs the
// target once on each file named, or on every file of each directory named,
// so committed corpora (seeds and past crashers) are regression tests.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

// Far above any committed input; a bigger file is a mistake in the corpus.
constexpr size_t kMaxInput = 64 << 20;

std::vector<std::string> FilesIn(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return {};
  if (!S_ISDIR(st.st_mode)) return {path};
  std::vector<std::string> files;
  if (DIR* dir = ::opendir(path.c_str())) {
    while (const dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name == "." || name == ".." || name[0] == '.') continue;
      std::string child = path + "/" + name;
      if (::stat(child.c_str(), &st) == 0 && S_ISREG(st.st_mode)) files.push_back(child);
    }
    ::closedir(dir);
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    std::vector<std::string> files = FilesIn(argv[i]);
    if (files.empty()) {
      std::fprintf(stderr, "%s: no inputs in %s\n", argv[0], argv[i]);
      return 1;
    }
    for (const std::string& file : files) {
      auto bytes = profcpu::base::ReadFileBounded(file, kMaxInput);
      if (!bytes.ok()) {
        std::fprintf(stderr, "%s: %s\n", argv[0], std::string(bytes.status().message()).c_str());
        return 1;
      }
      std::fprintf(stderr, "replaying %s (%zu bytes)\n", file.c_str(), bytes->size());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
      ++replayed;
    }
  }
  std::printf("%zu inputs replayed without a crash\n", replayed);
  return 0;
}
