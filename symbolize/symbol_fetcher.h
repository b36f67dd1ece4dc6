// Debug files fetched by build-id for the modules a run could not name:
// from debuginfod servers (DEBUGINFOD_URLS, debuginfod_fetch.h) and from
// SSQP symbol servers (dotnet/symstore's Simple Symbol Query Protocol:
// SERVER/_.debug/elf-buildid-sym-<hex build-id>/_.debug, what dotnet-symbol
// asks Microsoft's server for libcoreclr.so.dbg), into the local cache
// (symbol_cache.h), which the symbolizer then searches like a -symbols DIR.
//
// Every server is asked in turn until one gives a file whose build-id
// matches; each attempt's outcome is kept, so a run can say where it looked
// and why each place failed.
#ifndef PROFCPU_SYMBOLIZE_SYMBOL_FETCHER_H_
#define PROFCPU_SYMBOLIZE_SYMBOL_FETCHER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/run_log.h"
#include "symbolize/http_fetch.h"

namespace profcpu::symbolize {

// Microsoft's public symbol server, `-symbol-server msdl`.
inline constexpr absl::string_view kMicrosoftSymbolServerName = "msdl";
inline constexpr absl::string_view kMicrosoftSymbolServer =
    "https://msdl.microsoft.com/download/symbols";

// A -symbol-server value as a URL: the short name, or an http(s) URL (its
// trailing '/' dropped). InvalidArgument for anything else.
absl::StatusOr<std::string> SymbolServerUrl(absl::string_view value);

// SERVER/_.debug/elf-buildid-sym-<hex>/_.debug.
std::string SsqpDebugFileUrl(absl::string_view server, absl::string_view build_id);

struct SymbolFetchOptions {
  std::vector<std::string> servers;  // SSQP servers, as SymbolServerUrl gives them
  bool debuginfod = false;           // ask DEBUGINFOD_URLS' servers (first)
  std::string cache_dir;
  FetchLimits limits;
  bool fetch = true;  // false: only say what the cache holds
};

// A module with frames left unknown.
struct ModuleToFetch {
  std::string module;    // its path, as the run recorded it
  std::string build_id;  // raw bytes; empty when it has none
  uint64_t unknown_frames = 0;
};

struct FetchAttempt {
  std::string server;  // a URL, or "debuginfod (URLS)"
  std::string result;  // "404", "timed out ...", "build-id mismatch: ..."
};

struct ModuleFetchResult {
  enum class Status { kCached, kFetched, kNotFound, kNotInCache, kNoBuildId };
  ModuleToFetch module;
  Status status = Status::kNotFound;
  std::string source;  // where it came from (kFetched)
  uint64_t bytes = 0;  // its size (kFetched)
  std::vector<FetchAttempt> tried;
};

// "cached", "fetched", "not_found", "not_in_cache", "no_build_id".
absl::string_view FetchStatusName(ModuleFetchResult::Status status);

// One line for a result: "fetched from URL (12 MB)", "not found (URL: 404;
// debuginfod (...): timed out ...)", "cached", ...
std::string DescribeFetch(const ModuleFetchResult& result);

// Looks up each module in the cache and, if options.fetch, asks the servers
// for the rest; logs each fetch, each miss and progress on large downloads.
std::vector<ModuleFetchResult> FetchDebugFiles(const std::vector<ModuleToFetch>& modules,
                                               const SymbolFetchOptions& options,
                                               base::RunLog* log);

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_SYMBOL_FETCHER_H_
