// `profcpu symbols -dir RUN`: the native modules a run left with unknown
// frames (metadata.json's symbols.unknown_native_modules), their build-ids,
// what the symbol cache holds for them, and, unless -no-fetch, their debug
// files fetched from the symbol servers into the cache, so a connected
// machine can prefetch what a later `postprocess` (or one elsewhere, given
// the cache) names frames with.
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/run_log.h"
#include "recording/run_folder.h"
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/flags.h"
#include "scripts/cli/symbol_flags.h"
#include "symbolize/debuginfod_fetch.h"
#include "symbolize/modules_to_fetch.h"

namespace profcpu::cli {

int RunSymbols(const std::vector<std::string>& args) {
  FlagSet flags("symbols", "profcpu symbols -dir DIR [-symbol-server URL]... [-no-fetch]",
                "Lists the native modules whose frames the run in DIR left unknown, with their "
                "build-ids, and\nfetches their debug files by build-id into the symbol cache "
                "(from DEBUGINFOD_URLS' debuginfod\nservers, then each -symbol-server), so a "
                "later profcpu postprocess names those frames, here or\nwherever the cache is "
                "copied. One line per module: path, build-id, unknown frames, and cached,\n"
                "fetched from URL, not found (where it looked and why each failed), not in "
                "cache (-no-fetch)\nor no build-id. Exits 0 even when some are not found.");
  flags.Add("dir", "DIR", "", "run folder, after collect, record or postprocess (required)");
  flags.Add("no-fetch", "", "", "only list the modules and what the cache holds");
  AddSymbolServerFlags(&flags, /*collecting=*/false);
  if (std::optional<int> done = ParseCommandFlags(args, &flags)) return *done;
  std::string dir = flags.String("dir");
  if (dir.empty() && flags.positionals().size() == 1) dir = flags.positionals()[0];
  if (dir.empty()) return UsageError(flags, "symbols needs -dir DIR");
  absl::StatusOr<symbolize::SymbolFetchOptions> options = ReadSymbolFetchOptions(flags);
  if (!options.ok()) return UsageError(flags, options.status().message());
  options->fetch = !flags.Bool("no-fetch");
  if (options->fetch && !options->debuginfod && options->servers.empty()) {
    std::fprintf(stderr, "profcpu: no server to ask (-symbol-server URL, or DEBUGINFOD_URLS): "
                         "listing what the cache holds\n");
    options->fetch = false;
  }
  absl::StatusOr<std::vector<symbolize::ModuleToFetch>> modules = symbolize::ReadModulesToFetch(dir);
  if (!modules.ok()) return Fail(modules.status().message());
  if (modules->empty()) {
    std::printf("no native module of this run has unknown frames\n");
    return kExitOk;
  }
  base::RunLog log;  // not written to the run folder: warnings go to stderr
  for (const symbolize::ModuleFetchResult& r :
       symbolize::FetchDebugFiles(*modules, *options, &log)) {
    std::printf("%s  %s  %llu unknown frames  %s\n", r.module.module.c_str(),
                r.module.build_id.empty() ? "-" : absl::BytesToHexString(r.module.build_id).c_str(),
                static_cast<unsigned long long>(r.module.unknown_frames),
                symbolize::DescribeFetch(r).c_str());
  }
  std::fprintf(stderr, "profcpu: symbol cache %s; profcpu postprocess -dir %s names frames "
                       "with what it holds\n",
               options->cache_dir.c_str(), dir.c_str());
  return kExitOk;
}

}  // namespace profcpu::cli
