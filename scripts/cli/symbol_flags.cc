#include "scripts/cli/symbol_flags.h"

#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "symbolize/debuginfod_fetch.h"
#include "symbolize/symbol_cache.h"

namespace profcpu::cli {

void AddCallgraphFlag(FlagSet* flags) {
  flags->Add("callgraph", "MODE", "fp+cfi",
             "how user stacks are walked: fp+cfi[,BYTES], frame pointers plus each sample's "
             "IP, SP, BP and up to BYTES (default 32768; off-CPU switch-outs: 512) of its user "
             "stack, kept only as far as the repair reads, from which the callers frame "
             "pointers miss below a frameless leaf (libc's write, poll, nanosleep and futex "
             "wrappers; prologues and epilogues) are put back by the leaf's .eh_frame after "
             "collection, and a stack whose frame-pointer chain is garbage from the leaf (code "
             "built without frame pointers using BP: libcrypto, .NET's OpenSSL shim) is unwound "
             "by CFI to the thread's start when it lies within BYTES (not for -backend bpf's "
             "on-CPU samples, counted in the kernel); fp, frame pointers alone (no stack bytes in the "
             "recording); or dwarf[,BYTES], which copies each sample's user registers and "
             "BYTES (default 8192) of its user stack and unwinds them all from the target's "
             ".eh_frame/.debug_frame, for code built without frame pointers (-backend perf and "
             "-mode cpu only; stacks cut short are counted in metadata.json, dwarf_unwinding). "
             "BYTES is a multiple of 8 up to 65528");
}

absl::Status ReadCallgraphFlag(const FlagSet& flags, collector::SamplerOptions* sampler) {
  absl::StatusOr<collector::CallgraphChoice> choice = collector::ParseCallgraph(flags.String("callgraph"));
  if (!choice.ok()) return choice.status();
  sampler->dwarf_stack_size = choice->dwarf_stack_size;
  sampler->leaf_stack_size = choice->leaf_stack_size;
  return absl::OkStatus();
}

void AddSymbolFlags(FlagSet* flags) {
  flags->Add("symbols", "DIR", "",
             "a directory of debug files, searched after the target's root and profcpu's own "
             "(their /usr/lib/debug): a .build-id/ tree, /usr/lib/debug-style paths, or files by "
             "debuglink or file name (as dotnet-symbol -o leaves them), matched by build-id or "
             "debuglink CRC; repeatable. postprocess looks native frames still unknown up again "
             "by the build-id the archive kept");
  flags->Add("strip-tiers", "", "",
             "drop the .NET tier annotation ([OptimizedTier1], [QuickJitted], [PreJIT]...) from "
             "JIT frame names in every output, so one method's tiers fold into one frame (the "
             "archive keeps them: postprocess without it brings them back)");
}

void AddSymbolServerFlags(FlagSet* flags, bool collecting) {
  if (collecting) {
    flags->Add("fetch-symbols", "", "",
               "after the run, fetch debug files by build-id for native modules with unknown "
               "frames, from DEBUGINFOD_URLS' servers and every -symbol-server, as postprocess "
               "does (a sidecar is often offline, so this is opt-in)");
  }
  flags->Add("symbol-server", "URL", "",
             absl::StrCat(
                 "an SSQP symbol server to fetch debug files from by build-id "
                 "(URL/_.debug/elf-buildid-sym-BUILDID/_.debug, as dotnet-symbol asks); ",
                 symbolize::kMicrosoftSymbolServerName, " is Microsoft's (",
                 symbolize::kMicrosoftSymbolServer,
                 ": libcoreclr.so.dbg and the other .NET runtime libraries); repeatable. ",
                 collecting ? "With -fetch-symbols, " : "",
                 "modules with unknown frames are looked up in the -symbol-cache, then on "
                 "DEBUGINFOD_URLS' debuginfod servers (elfutils' libdebuginfod, its cache and "
                 "DEBUGINFOD_* settings), then on each -symbol-server in order"));
  flags->Add("symbol-cache", "DIR", "",
             "where fetched debug files are kept, as DIR/.build-id/xx/rest.debug, and looked "
             "for on every run (default $XDG_CACHE_HOME/profcpu/symbols, else "
             "~/.cache/profcpu/symbols)");
  flags->Add("symbol-timeout", "SECONDS", "30",
             "give a symbol server up after this long without a byte (connecting included)");
  flags->Add("symbol-max-mb", "N", "1024",
             "abandon a debug file larger than this (libcoreclr.so.dbg is about 100 MB)");
}

absl::StatusOr<symbolize::SymbolFetchOptions> ReadSymbolFetchOptions(const FlagSet& flags) {
  symbolize::SymbolFetchOptions fetch;
  for (const std::string& value : flags.Strings("symbol-server")) {
    PROFCPU_ASSIGN_OR_RETURN(std::string url, symbolize::SymbolServerUrl(value));
    fetch.servers.push_back(std::move(url));
  }
  fetch.debuginfod = !symbolize::DebuginfodUrls().empty();
  fetch.cache_dir = flags.String("symbol-cache");
  if (fetch.cache_dir.empty()) fetch.cache_dir = symbolize::DefaultSymbolCacheDir();
  if (fetch.cache_dir.empty()) {
    return absl::InvalidArgumentError(
        "no place for fetched debug files: set -symbol-cache DIR (HOME and XDG_CACHE_HOME are "
        "unset)");
  }
  int64_t seconds = 0, megabytes = 0;
  PROFCPU_RETURN_IF_ERROR(flags.Int("symbol-timeout", 1, 3600, &seconds));
  PROFCPU_RETURN_IF_ERROR(flags.Int("symbol-max-mb", 1, 1 << 20, &megabytes));
  fetch.limits.timeout = absl::Seconds(seconds);
  fetch.limits.max_bytes = static_cast<uint64_t>(megabytes) << 20;
  return fetch;
}

absl::Status ReadSymbolFlags(const FlagSet& flags, bool collecting, PipelineOptions* pipeline) {
  pipeline->symbol_dirs = flags.Strings("symbols");
  pipeline->strip_tiers = flags.Bool("strip-tiers");
  absl::StatusOr<symbolize::SymbolFetchOptions> fetch = ReadSymbolFetchOptions(flags);
  const bool wanted = !collecting || flags.Bool("fetch-symbols");
  if (!fetch.ok()) return wanted ? fetch.status() : absl::OkStatus();
  const bool servers = fetch->debuginfod || !fetch->servers.empty();
  if (collecting && flags.Bool("fetch-symbols") && !servers) {
    return absl::InvalidArgumentError(
        "-fetch-symbols needs a server: -symbol-server URL (or msdl), or DEBUGINFOD_URLS");
  }
  // What earlier runs fetched names frames in this one too.
  struct stat st;
  if (::stat(fetch->cache_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    pipeline->symbol_dirs.push_back(fetch->cache_dir);
  }
  if (servers && wanted) pipeline->fetch = std::move(*fetch);
  return absl::OkStatus();
}

}  // namespace profcpu::cli
