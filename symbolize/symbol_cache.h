// The local cache of debug files fetched from symbol servers
// (symbol_fetcher.h): a directory laid out as a debug directory's build-id
// tree, CACHE/.build-id/xx/rest.debug, so the symbolizer searches it like a
// `-symbols DIR` (debug_file_finder.h) in this run and every later one.
//
// A file enters the cache only whole and only if its GNU build-id is the one
// asked for: it is downloaded to a temporary file in the cache directory,
// checked, then renamed into place (a server's wrong or damaged answer never
// reaches the symbolizer, and two profcpu runs never see half a file).
#ifndef PROFCPU_SYMBOLIZE_SYMBOL_CACHE_H_
#define PROFCPU_SYMBOLIZE_SYMBOL_CACHE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/unique_fd.h"

namespace profcpu::symbolize {

// $XDG_CACHE_HOME/profcpu/symbols, else $HOME/.cache/profcpu/symbols; "" when
// neither variable is set.
std::string DefaultSymbolCacheDir();

// The GNU build-id (NT_GNU_BUILD_ID) of the ELF file open at `fd`, as raw
// bytes, read by ElfSymbols; NotFound when it has none, an error when it is
// not an ELF executable, shared object or debug file of one.
absl::StatusOr<std::string> ReadElfBuildId(int fd);

class SymbolCache {
 public:
  explicit SymbolCache(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }

  // CACHE/.build-id/xx/rest.debug for a raw build-id (at least 2 bytes).
  std::string PathFor(absl::string_view build_id) const;

  // Whether the cache holds a debug file carrying `build_id`.
  bool Has(absl::string_view build_id) const;

  // A new empty temporary file in the cache directory (created with its
  // parents), for a download: its path in *path.
  absl::StatusOr<base::UniqueFd> CreateTemp(std::string* path) const;

  // Moves the temporary file at `temp` into place if its build-id is
  // `build_id`; otherwise removes it and says why ("build-id mismatch: the
  // file is abc..., not def...").
  absl::Status Adopt(const std::string& temp, absl::string_view build_id) const;

 private:
  std::string dir_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_SYMBOL_CACHE_H_
