// Helpers shared by the fuzz targets: the parsers under test read files and
// fds as well as strings, so inputs are also offered through an in-memory file.
#ifndef PROFCPU_TESTS_FUZZ_FUZZ_SUPPORT_H_
#define PROFCPU_TESTS_FUZZ_FUZZ_SUPPORT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "base/unique_fd.h"

// libFuzzer's entry point, defined by every target.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace profcpu::fuzz {

// Aborts (a crash libFuzzer records) with `message` when an invariant fails.
void Check(bool condition, absl::string_view message);

inline absl::string_view AsText(const uint8_t* data, size_t size) {
  return absl::string_view(reinterpret_cast<const char*>(data), size);
}

// An anonymous in-memory file (memfd_create) holding some bytes, opened at
// offset 0; path() names it for APIs that take a path (/proc/self/fd/N).
class MemFile {
 public:
  explicit MemFile(absl::string_view contents);
  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  // A new read-only descriptor of the file, positioned at its start.
  base::UniqueFd Reopen() const;

 private:
  base::UniqueFd fd_;
  std::string path_;
};

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it
// when destroyed.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Removes `path` and everything below it, never following symlinks.
void RemoveTree(const std::string& path);

}  // namespace profcpu::fuzz

#endif  // PROFCPU_TESTS_FUZZ_FUZZ_SUPPORT_H_
