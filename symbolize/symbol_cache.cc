#include "symbolize/symbol_cache.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "base/status_macros.h"
#include "symbolize/elf_symbols.h"

namespace profcpu::symbolize {
namespace {

// mkdir -p, for the cache's own directories.
absl::Status MakeDirs(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return base::ErrnoStatus(errno, absl::StrCat("create ", prefix));
    }
    if (slash == std::string::npos) return absl::OkStatus();
  }
}

}  // namespace

std::string DefaultSymbolCacheDir() {
  if (const char* xdg = ::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return absl::StrCat(xdg, "/profcpu/symbols");
  }
  if (const char* home = ::getenv("HOME"); home != nullptr && home[0] == '/') {
    return absl::StrCat(home, "/.cache/profcpu/symbols");
  }
  return "";
}

absl::StatusOr<std::string> ReadElfBuildId(int fd) {
  // The symbolizer's own bounded reader: a download is outside input.
  PROFCPU_ASSIGN_OR_RETURN(std::unique_ptr<ElfSymbols> elf,
                           ElfSymbols::FromFd(fd, "the downloaded file"));
  if (elf->build_id().empty()) return absl::NotFoundError("no GNU build-id");
  return elf->build_id();
}

std::string SymbolCache::PathFor(absl::string_view build_id) const {
  const std::string hex = absl::BytesToHexString(build_id);
  return absl::StrCat(dir_, "/.build-id/", hex.substr(0, 2), "/", hex.substr(2), ".debug");
}

bool SymbolCache::Has(absl::string_view build_id) const {
  base::UniqueFd fd(::open(PathFor(build_id).c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  absl::StatusOr<std::string> id = ReadElfBuildId(fd.get());
  return id.ok() && *id == build_id;
}

absl::StatusOr<base::UniqueFd> SymbolCache::CreateTemp(std::string* path) const {
  if (absl::Status made = MakeDirs(dir_); !made.ok()) return made;
  std::string name = absl::StrCat(dir_, "/.download-XXXXXX");
  int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return base::ErrnoStatus(errno, absl::StrCat("create a file in ", dir_));
  *path = std::move(name);
  return base::UniqueFd(fd);
}

absl::Status SymbolCache::Adopt(const std::string& temp, absl::string_view build_id) const {
  absl::Status verdict;
  {
    base::UniqueFd fd(::open(temp.c_str(), O_RDONLY | O_CLOEXEC));
    absl::StatusOr<std::string> id =
        fd.valid() ? ReadElfBuildId(fd.get()) : base::ErrnoStatus(errno, "open the download");
    if (!id.ok()) {
      verdict = absl::InvalidArgumentError(
          absl::StrCat("not a debug file with a build-id (", id.status().message(), ")"));
    } else if (*id != build_id) {
      verdict = absl::InvalidArgumentError(
          absl::StrCat("build-id mismatch: the file's is ", absl::BytesToHexString(*id)));
    }
  }
  if (verdict.ok()) {
    const std::string path = PathFor(build_id);
    verdict = MakeDirs(path.substr(0, path.rfind('/')));
    if (verdict.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
      verdict = base::ErrnoStatus(errno, absl::StrCat("move the download to ", path));
    }
  }
  if (!verdict.ok()) ::unlink(temp.c_str());
  return verdict;
}

}  // namespace profcpu::symbolize
