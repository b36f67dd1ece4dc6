#include "tests/fuzz/fuzz_support.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"

namespace profcpu::fuzz {

void Check(bool condition, absl::string_view message) {
  if (condition) return;
  std::fprintf(stderr, "fuzz invariant failed: %.*s\n", static_cast<int>(message.size()),
               message.data());
  std::abort();
}

MemFile::MemFile(absl::string_view contents) {
  fd_.Reset(::memfd_create("fuzz-input", MFD_CLOEXEC));
  Check(fd_.valid(), "memfd_create failed");
  Check(base::WriteAll(fd_.get(), contents, "memfd").ok(), "write to memfd failed");
  Check(::lseek(fd_.get(), 0, SEEK_SET) == 0, "lseek on memfd failed");
  path_ = absl::StrCat("/proc/self/fd/", fd_.get());
}

base::UniqueFd MemFile::Reopen() const {
  base::UniqueFd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  Check(fd.valid(), "reopening the memfd failed");
  return fd;
}

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp",
                                     "/profcpu-fuzz-XXXXXX");
  Check(::mkdtemp(pattern.data()) != nullptr, "mkdtemp failed");
  path_ = pattern;
}

ScratchDir::~ScratchDir() { RemoveTree(path_); }

void RemoveTree(const std::string& path) {
  ::nftw(
      path.c_str(),
      [](const char* file, const struct stat*, int type, struct FTW*) {
        return type == FTW_DP ? ::rmdir(file) : ::unlink(file);
      },
      16, FTW_DEPTH | FTW_PHYS);
}

}  // namespace profcpu::fuzz
