#include "symbolize/run_symbols.h"

#include <sys/stat.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/file_io.h"
#include "base/status_macros.h"
#include "recording/run_folder.h"
#include "symbolize/debug_file_finder.h"
#include "symbolize/dotnet_names.h"
#include "symbolize/symbol_snapshot.h"
#include "symbolize/symbolizer.h"

namespace profcpu::symbolize {
namespace {

// A snapshot bigger than this is not one profcpu wrote.
constexpr size_t kMaxSnapshotBytes = 1ull << 30;

// Replaces `table` with the snapshot at `path` if it belongs to this
// recording, and teaches `modules_out` what the snapshot learned about each
// module (build-id, load layout). Otherwise leaves both alone.
void LoadSnapshot(const std::string& path, std::vector<Module>* modules_out, SymbolTable* table,
                  base::RunLog* log) {
  const std::vector<Module>& modules = *modules_out;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return;
  auto bytes = base::ReadFileBounded(path, kMaxSnapshotBytes);
  SymbolTable loaded;
  std::vector<Module> snapshot_modules;
  absl::Status status =
      bytes.ok() ? ParseSnapshot(*bytes, &loaded, &snapshot_modules) : bytes.status();
  if (!status.ok()) {
    log->Warn(absl::StrCat("ignoring symbol snapshot ", path, ": ", status.message()));
    return;
  }
  // Module ids are positions in replay order, so a snapshot of this same
  // recording lists the same modules in the same order.
  bool same = snapshot_modules.size() == modules.size();
  for (size_t i = 0; same && i < modules.size(); ++i) {
    same = snapshot_modules[i].path == modules[i].path;
  }
  if (!same) {
    log->Warn(absl::StrCat("ignoring symbol snapshot ", path, ": it belongs to another recording"));
    return;
  }
  *table = std::move(loaded);
  for (size_t i = 0; i < modules.size(); ++i) {
    Module& module = (*modules_out)[i];
    if (module.build_id.empty()) module.build_id = snapshot_modules[i].build_id;
    if (module.segments.empty()) module.segments = snapshot_modules[i].segments;
    module.debug_info = module.debug_info || snapshot_modules[i].debug_info;
  }
  log->Info(absl::StrCat("loaded ", table->size(), " symbolized locations from ", path));
}

}  // namespace

std::string LocalBootId() {
  auto text = base::ReadFileBounded("/proc/sys/kernel/random/boot_id", 128);
  return text.ok() ? std::string(absl::StripAsciiWhitespace(*text)) : "";
}

RunSymbols::RunSymbols(RunSymbolsOptions options, base::RunLog* log)
    : options_(std::move(options)),
      log_(log),
      jit_files_(options_.run_dir, options_.files, log, options_.keep_jit_copies),
      jit_(&jit_files_, options_.files),
      unwinder_(options_.run_dir, options_.files, options_.symbol_dirs, log) {
  jit_.set_code_events(options_.code_events);
  jit_.set_cache(options_.cache);
}

RunSymbols::~RunSymbols() = default;

absl::StatusOr<ResolvedSymbols> RunSymbols::ResolveProfile(ReplayedCode replay) {
  unwinder_.Finish(replay.dwarf, log_);
  replay_ = std::move(replay);
  return Resolve();
}

absl::StatusOr<ResolvedSymbols> RunSymbols::ResolveAgainWith(const std::string& symbol_dir) {
  if (replay_.requests == nullptr || replay_.modules == nullptr) {
    return absl::FailedPreconditionError("ResolveAgainWith before ResolveProfile");
  }
  std::vector<std::string>& dirs = options_.symbol_dirs;
  // The cache may not have existed when the run started.
  if (std::find(dirs.begin(), dirs.end(), symbol_dir) == dirs.end()) dirs.push_back(symbol_dir);
  return Resolve();
}

absl::StatusOr<ResolvedSymbols> RunSymbols::Resolve() {
  const ReplayedCode& replay = replay_;
  ResolvedSymbols result;
  result.table = replay.known_names;
  const std::string snapshot = absl::StrCat(options_.run_dir, "/", recording::kSymbolsFile);
  LoadSnapshot(snapshot, replay.modules, &result.table, log_);
  // The names the replay gave itself win over a snapshot's (which replaces
  // the table): one written before those names existed (an archive from an
  // older profcpu: the .NET event profiles' type frames) lacks them.
  for (const auto& [location, name] : replay.known_names.entries()) {
    result.table.Insert(location, name);
  }

  SymbolizerOptions symbolizer_options;
  symbolizer_options.use_local_kallsyms = !replay.boot_id.empty() && replay.boot_id == LocalBootId();
  symbolizer_options.symbol_dirs = options_.symbol_dirs;
  symbolizer_options.debuginfod_cache = DebuginfodClientCacheDir();
  symbolizer_options.cache = options_.cache;
  symbolizer_options.max_dwarf_bytes = options_.max_dwarf_bytes;
  // With new symbol directories, frames the snapshot left unknown get another
  // try (and without them, those of modules whose debug file is on this
  // machine: symbolizer.h).
  symbolizer_options.retry_unknown_native = !options_.symbol_dirs.empty();
  Symbolizer symbolizer(symbolizer_options, options_.files, replay.modules, &jit_);
  symbolizer.Resolve(*replay.requests, &result.table, &result.stats);
  for (const std::string& loaded : jit_.Loaded()) log_->Info(absl::StrCat("JIT symbols from ", loaded));
  result.jit_files = ListJitFiles(options_.run_dir);
  for (const std::string& note : result.stats.notes) log_->Info(note);
  for (const std::string& warning : result.stats.warnings) log_->Warn(warning);
  log_->Info(absl::StrCat("symbolized ", result.stats.looked_up, " new locations; of the ",
                          result.stats.requested, " the samples hold, ", result.stats.resolved,
                          " are named, ", result.stats.unknown, " unknown"));

  PROFCPU_RETURN_IF_ERROR(
      base::WriteFile(snapshot, SerializeSnapshot(result.table, *replay.modules)));
  // The snapshot keeps the runtime's names whole; the outputs may drop the
  // .NET tier annotations.
  if (options_.strip_tiers) {
    const size_t stripped = StripTierSuffixes(&result.table);
    log_->Info(absl::StrCat("-strip-tiers: removed the tier annotation from ", stripped,
                            " JIT frame names"));
  }
  // ... and show .NET methods by what they are first, their assembly last.
  MakeDotnetNamesReadable(&result.table);
  return result;
}

}  // namespace profcpu::symbolize
