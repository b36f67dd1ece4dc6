// Debug files from debuginfod servers, through elfutils' libdebuginfod: the
// servers DEBUGINFOD_URLS names, libdebuginfod's own cache
// (DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client) and its other
// DEBUGINFOD_* settings, as gdb, perf and eu-stack use them. profcpu's limits
// (-symbol-timeout, -symbol-max-mb) become DEBUGINFOD_TIMEOUT and
// DEBUGINFOD_MAXSIZE where the user set neither.
#ifndef PROFCPU_SYMBOLIZE_DEBUGINFOD_FETCH_H_
#define PROFCPU_SYMBOLIZE_DEBUGINFOD_FETCH_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "symbolize/http_fetch.h"

namespace profcpu::symbolize {

// DEBUGINFOD_URLS, or "" when unset or empty.
std::string DebuginfodUrls();

// Fetches the debug file of `build_id` (raw bytes) and copies it into the
// file open at `fd`. NotFound when no server has it; other errors say what
// libdebuginfod reported (timed out, too large, ...).
absl::Status FetchFromDebuginfod(absl::string_view build_id, int fd, const FetchLimits& limits,
                                 const FetchProgress& progress, uint64_t* bytes);

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_DEBUGINFOD_FETCH_H_
