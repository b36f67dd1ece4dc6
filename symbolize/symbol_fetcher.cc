#include "symbolize/symbol_fetcher.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "symbolize/debuginfod_fetch.h"
#include "symbolize/symbol_cache.h"

namespace profcpu::symbolize {
namespace {

using Status = ModuleFetchResult::Status;

// Downloads larger than this say how far they are, on stderr.
constexpr uint64_t kProgressFromBytes = uint64_t{8} << 20;

std::string Megabytes(uint64_t bytes) {
  return bytes >= (uint64_t{1} << 20) ? absl::StrCat(bytes >> 20, " MB")
                                      : absl::StrCat(bytes >> 10, " KB");
}

FetchProgress ProgressFor(const std::string& module) {
  return [module](uint64_t received, uint64_t total) {
    if (received < kProgressFromBytes && total < kProgressFromBytes) return;
    std::fprintf(stderr, "profcpu: fetching the debug file of %s: %s%s\n", module.c_str(),
                 Megabytes(received).c_str(),
                 total > 0 ? absl::StrCat(" of ", Megabytes(total)).c_str() : "");
  };
}

// One source: debuginfod or an SSQP server. Downloads into a temporary file
// of the cache and adopts it if its build-id matches.
using Download = absl::Status (*)(const std::string& server, absl::string_view build_id, int fd,
                                  const FetchLimits& limits, const FetchProgress& progress,
                                  uint64_t* bytes);

absl::Status DownloadSsqp(const std::string& server, absl::string_view build_id, int fd,
                          const FetchLimits& limits, const FetchProgress& progress,
                          uint64_t* bytes) {
  return HttpGetToFile(SsqpDebugFileUrl(server, build_id), fd, limits, progress, bytes);
}

absl::Status DownloadDebuginfod(const std::string&, absl::string_view build_id, int fd,
                                const FetchLimits& limits, const FetchProgress& progress,
                                uint64_t* bytes) {
  return FetchFromDebuginfod(build_id, fd, limits, progress, bytes);
}

absl::Status FetchInto(const SymbolCache& cache, Download download, const std::string& server,
                       const ModuleToFetch& module, const FetchLimits& limits,
                       uint64_t* bytes) {
  std::string temp;
  absl::StatusOr<base::UniqueFd> fd = cache.CreateTemp(&temp);
  if (!fd.ok()) return fd.status();
  absl::Status got =
      download(server, module.build_id, fd->get(), limits, ProgressFor(module.module), bytes);
  fd->Reset();
  if (!got.ok()) {
    ::unlink(temp.c_str());
    return got;
  }
  return cache.Adopt(temp, module.build_id);
}

}  // namespace

absl::StatusOr<std::string> SymbolServerUrl(absl::string_view value) {
  if (value == kMicrosoftSymbolServerName) return std::string(kMicrosoftSymbolServer);
  const std::string lower = absl::AsciiStrToLower(value);
  if (!absl::StartsWith(lower, "http://") && !absl::StartsWith(lower, "https://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "-symbol-server ", value, ": expected an http:// or https:// URL, or ",
        kMicrosoftSymbolServerName, " (", kMicrosoftSymbolServer, ")"));
  }
  absl::string_view url = value;
  while (absl::ConsumeSuffix(&url, "/")) {
  }
  return std::string(url);
}

std::string SsqpDebugFileUrl(absl::string_view server, absl::string_view build_id) {
  return absl::StrCat(server, "/_.debug/elf-buildid-sym-", absl::BytesToHexString(build_id),
                      "/_.debug");
}

absl::string_view FetchStatusName(Status status) {
  switch (status) {
    case Status::kCached: return "cached";
    case Status::kFetched: return "fetched";
    case Status::kNotFound: return "not_found";
    case Status::kNotInCache: return "not_in_cache";
    case Status::kNoBuildId: return "no_build_id";
  }
  return "?";
}

std::string DescribeFetch(const ModuleFetchResult& result) {
  switch (result.status) {
    case Status::kCached: return "cached";
    case Status::kFetched:
      return absl::StrCat("fetched from ", result.source, " (", Megabytes(result.bytes), ")");
    case Status::kNotInCache: return "not in cache";
    case Status::kNoBuildId: return "no build-id (cannot be looked up)";
    case Status::kNotFound: break;
  }
  std::vector<std::string> tried;
  for (const FetchAttempt& a : result.tried) tried.push_back(absl::StrCat(a.server, ": ", a.result));
  return tried.empty() ? "not found (no server to ask)"
                       : absl::StrCat("not found (", absl::StrJoin(tried, "; "), ")");
}

std::vector<ModuleFetchResult> FetchDebugFiles(const std::vector<ModuleToFetch>& modules,
                                               const SymbolFetchOptions& options,
                                               base::RunLog* log) {
  const SymbolCache cache(options.cache_dir);
  std::vector<std::pair<Download, std::string>> sources;
  if (options.debuginfod) {
    sources.emplace_back(DownloadDebuginfod, absl::StrCat("debuginfod (", DebuginfodUrls(), ")"));
  }
  for (const std::string& server : options.servers) sources.emplace_back(DownloadSsqp, server);

  std::vector<ModuleFetchResult> results;
  for (const ModuleToFetch& module : modules) {
    ModuleFetchResult r;
    r.module = module;
    const std::string id = absl::BytesToHexString(module.build_id);
    if (module.build_id.size() < 2) {
      r.status = Status::kNoBuildId;
    } else if (cache.Has(module.build_id)) {
      r.status = Status::kCached;
    } else if (!options.fetch) {
      r.status = Status::kNotInCache;
    } else {
      for (const auto& [download, server] : sources) {
        uint64_t bytes = 0;
        absl::Status got = FetchInto(cache, download, server, module, options.limits, &bytes);
        if (got.ok()) {
          r.status = Status::kFetched;
          r.source = server;
          r.bytes = bytes;
          break;
        }
        r.tried.push_back({server, std::string(got.message())});
      }
      if (r.status == Status::kFetched) {
        log->Info(absl::StrCat("fetched the debug file of ", module.module, " (build-id ", id,
                               ") from ", r.source, ": ", Megabytes(r.bytes), " into ",
                               cache.PathFor(module.build_id)));
      } else {
        log->Warn(absl::StrCat("no debug file for ", module.module, " (build-id ", id, ", ",
                               module.unknown_frames, " unknown frames): ", DescribeFetch(r)));
      }
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace profcpu::symbolize
