// The symbolize stage of one pipeline run over a run folder, in one place:
// the JIT files (the folder's copies, made from the target's root on first
// use), the user-stack unwinder (-callgraph dwarf: unwound from the target's
// files and saved, or replayed from what was saved), the symbol snapshot
// (symbols.bin: loaded when it belongs to this recording, written back), the
// symbolizer, and -strip-tiers.
//
// Two calls around fold's replay, which normalizes the recording's addresses
// and asks, per sample, for JIT generations and unwound stacks:
//
//   RunSymbols symbols(options, log);
//   fold::BuildProfile(reader, {symbols.jit_history(), symbols.unwinder()});
//   symbols.ResolveProfile(...)  ──► SymbolTable (by value)
#ifndef PROFCPU_SYMBOLIZE_RUN_SYMBOLS_H_
#define PROFCPU_SYMBOLIZE_RUN_SYMBOLS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/run_log.h"
#include "symbolize/archived_jit_files.h"
#include "symbolize/code_location.h"
#include "symbolize/jit_sources.h"
#include "symbolize/run_unwinder.h"
#include "symbolize/symbol_table.h"
#include "symbolize/process_files.h"
#include "symbolize/symbolize_stats.h"

namespace profcpu::symbolize {

class LoadedSymbolCache;

struct RunSymbolsOptions {
  std::string run_dir;
  // Where the profiled processes' files are; nullptr when they are not
  // reachable (postprocess elsewhere): the snapshot and the copies must do.
  const ProcessFiles* files = nullptr;
  // -symbols DIR, in order: more places to find debug files (matched by
  // build-id or debuglink CRC); unknown native frames are looked up again.
  std::vector<std::string> symbol_dirs;
  // -strip-tiers: drop the .NET tier annotation ("[OptimizedTier1]") from JIT
  // frame names in the table returned (the snapshot keeps them).
  bool strip_tiers = false;
  // JIT code known from the runtimes' events, for processes without JIT
  // files (jit_sources.h); may be null.
  JitCodeEvents* code_events = nullptr;
  // Kept across runs by a caller that runs many (the fleet agent's windows):
  // native modules, kallsyms and perf maps come from it
  // (loaded_symbol_cache.h). nullptr: this run loads all it needs.
  LoadedSymbolCache* cache = nullptr;
  // Copy the JIT files read from the targets' roots into the run folder's
  // jit/ (for the archive and postprocess). false for run folders thrown
  // away after use (the fleet agent): files are read in place, and only the
  // copies already there (the collector's perf-map copies) are read from
  // the folder.
  bool keep_jit_copies = true;
  // SymbolizerOptions::max_dwarf_bytes: a module with more DWARF than this
  // is named from its ELF symbols alone. Unbounded for collect and
  // postprocess; the fleet agent bounds it (agent_defaults.h).
  uint64_t max_dwarf_bytes = UINT64_MAX;
};

// What the replay found that needs names.
struct ReplayedCode {
  const std::vector<SymbolRequest>* requests = nullptr;
  // Indexed by native locations' space; gains build-ids and load layouts.
  std::vector<Module>* modules = nullptr;
  SymbolTable known_names;  // names the replay gave itself (synthetic frames)
  std::string boot_id;      // the recording's: this machine's kallsyms apply if it matches
  DwarfReplayCounts dwarf;
};

struct ResolvedSymbols {
  SymbolTable table;  // every requested location, named or [unknown]
  SymbolizeStats stats;
  // The run folder's copies of JIT files (jit/...), relative, for the archive.
  std::vector<std::string> jit_files;
};

class RunSymbols {
 public:
  RunSymbols(RunSymbolsOptions options, base::RunLog* log);
  ~RunSymbols();
  RunSymbols(const RunSymbols&) = delete;
  RunSymbols& operator=(const RunSymbols&) = delete;

  // For the replay (fold::BuildOptions).
  JitCodeHistory* jit_history() { return &jit_; }
  UserStackUnwinder* unwinder() const { return unwinder_.get(); }
  // After ResolveProfile: which JIT source names a location (JitSources::NameSourceOf).
  const char* JitNameSourceOf(const CodeLocation& location) { return jit_.NameSourceOf(location); }

  // After the replay: names every requested location once (reusing the
  // snapshot), writes the snapshot back, and returns the table. `replay`'s
  // requests and modules must outlive ResolveAgainWith.
  absl::StatusOr<ResolvedSymbols> ResolveProfile(ReplayedCode replay);

  // Once debug files arrived in `symbol_dir` (fetched by build-id for the
  // modules left unknown): the same as ResolveProfile with `symbol_dir`
  // among the symbol directories, so the native locations left unknown are
  // looked up again; the rest comes from the snapshot just written. The
  // recording is not replayed: its requests and modules are ResolveProfile's.
  absl::StatusOr<ResolvedSymbols> ResolveAgainWith(const std::string& symbol_dir);

 private:
  // ResolveProfile's work after the unwinder's counts, on replay_.
  absl::StatusOr<ResolvedSymbols> Resolve();

  RunSymbolsOptions options_;
  ReplayedCode replay_;  // ResolveProfile's; known_names kept as given
  base::RunLog* log_;
  ArchivedJitFiles jit_files_;
  JitSources jit_;
  RunUnwinder unwinder_;
};

// This machine's boot id (kernel addresses are only meaningful within a boot).
std::string LocalBootId();

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_RUN_SYMBOLS_H_
