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
#include "scripts/cli/command_flags.h"
#include "scripts/cli/commands.h"
#include "scripts/cli/flags.h"
#include "scripts/cli/output_dir.h"
#include "scripts/cli/symbol_flags.h"
#include "symbolize/debuginfod_fetch.h"

namespace profcpu::cli {
namespace {

// metadata.json is the run's own output, but a copied folder may hold
// anything: bounded, and every field checked.
constexpr std::streamsize kMaxMetadataBytes = 64 << 20;

absl::StatusOr<std::vector<symbolize::ModuleToFetch>> UnknownModules(const std::string& dir) {
  const std::string path = absl::StrCat(dir, "/", kMetadataFile);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        "no ", path, ": run profcpu postprocess -dir ", dir, " first (it unpacks prof.tar.gz)"));
  }
  std::string text(static_cast<size_t>(kMaxMetadataBytes), '\0');
  in.read(text.data(), kMaxMetadataBytes);
  text.resize(static_cast<size_t>(in.gcount()));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not JSON"));
  }
  auto symbols = j.find("symbols");
  if (symbols == j.end() || !symbols->is_object() || !symbols->contains("unknown_native_modules")) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " lists no modules' build-ids (written by an older profcpu): run profcpu "
              "postprocess -dir ", dir, " first"));
  }
  std::vector<symbolize::ModuleToFetch> modules;
  for (const nlohmann::json& m : (*symbols)["unknown_native_modules"]) {
    if (!m.is_object() || !m.contains("module") || !m["module"].is_string() ||
        !m.contains("build_id") || !m["build_id"].is_string()) {
      continue;
    }
    symbolize::ModuleToFetch module;
    module.module = m["module"].get<std::string>();
    const std::string hex = m["build_id"].get<std::string>();
    if (hex.size() % 2 != 0 || hex.find_first_not_of("0123456789abcdef") != std::string::npos) {
      continue;
    }
    module.build_id = absl::HexStringToBytes(hex);
    if (m.contains("unknown_frames") && m["unknown_frames"].is_number_unsigned()) {
      module.unknown_frames = m["unknown_frames"].get<uint64_t>();
    }
    modules.push_back(std::move(module));
  }
  return modules;
}

}  // namespace

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
  absl::Status parsed = flags.Parse(args);
  if (!parsed.ok()) return UsageError(flags, parsed.message());
  if (flags.help_requested()) {
    std::printf("%s", flags.Usage().c_str());
    return kExitOk;
  }
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
  absl::StatusOr<std::vector<symbolize::ModuleToFetch>> modules = UnknownModules(dir);
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
