// Names code locations: native code from ELF symbol tables, kernel code from
// kallsyms, JIT code from the target's /tmp/perf-PID.map. One lookup per
// distinct location; each file is opened once, inside the owning process's
// root, and parsed with bounded memory.
#ifndef PROFCPU_SYMBOLIZE_SYMBOLIZER_H_
#define PROFCPU_SYMBOLIZE_SYMBOLIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "symbolize/code_location.h"
#include "symbolize/process_files.h"
#include "symbolize/symbol_table.h"
#include "symbolize/symbolize_stats.h"

namespace profcpu::symbolize {

class JitSources;
class LoadedSymbolCache;

struct SymbolizerOptions {
  // Resolve kernel addresses from this machine's /proc/kallsyms. Only valid
  // when the recording was taken on this boot of this machine.
  bool use_local_kallsyms = true;
  std::string kallsyms_path = "/proc/kallsyms";
  // Where debug files are looked for besides the target's root: the
  // profiler's own root ("" to skip it), then each -symbols DIR in order,
  // then this machine's debuginfod client cache ("" to skip it;
  // debug_file_finder.h).
  std::string own_root = "/";
  std::vector<std::string> symbol_dirs;
  std::string debuginfod_cache;
  // Look native locations up again when the table already holds them as
  // unknown (postprocess -symbols DIR finishing what the sidecar could not).
  // Without it, only the unknown locations of modules that were read without
  // debug information and whose debug file (by build-id) is now in the own
  // root or the debuginfod cache are: a laptop's installed debug packages
  // name what the sidecar could not, with no flag.
  bool retry_unknown_native = false;
  // Kept across runs (loaded_symbol_cache.h): native modules and kallsyms
  // are taken from it and loaded into it. nullptr: everything is loaded for
  // this Symbolizer alone.
  LoadedSymbolCache* cache = nullptr;
  // DwarfLimits::max_section_bytes for every module read: past it a module
  // is named from its ELF symbols alone (no inlined frames), with a warning.
  uint64_t max_dwarf_bytes = UINT64_MAX;
};

class Symbolizer {
 public:
  // `modules` (the replay's, indexed by native locations' space) gains what
  // reading the files teaches: build-ids and load layouts, which the
  // snapshot keeps for postprocessing elsewhere.
  // `jit` names JIT locations; when null, the Symbolizer reads each
  // process's perf map and jitdump in its root itself.
  Symbolizer(SymbolizerOptions options, const ProcessFiles* files, std::vector<Module>* modules,
             JitSources* jit = nullptr);
  ~Symbolizer();

  // Adds an entry to `table` for every request whose location it lacks.
  void Resolve(const std::vector<SymbolRequest>& requests, SymbolTable* table,
               SymbolizeStats* stats);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  bool retry_unknown_native_ = false;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_SYMBOLIZER_H_
