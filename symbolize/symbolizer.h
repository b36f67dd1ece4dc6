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

#include "base/rooted_open.h"
#include "symbolize/code_location.h"
#include "symbolize/symbol_table.h"

namespace profcpu::symbolize {

// Where the symbolizer finds a process's files. Implemented by the command
// (which knows the roots it opened during collection).
class JitSources;

class ProcessFiles {
 public:
  virtual ~ProcessFiles() = default;
  // The root to open this process's files under, or nullptr if unavailable
  // (a recording read on another machine).
  virtual std::shared_ptr<base::RootDir> RootFor(uint32_t pid) const = 0;
  // The pid the process sees itself as (innermost PID namespace); names its
  // perf map (/tmp/perf-NSPID.map).
  virtual uint32_t NamespacePid(uint32_t pid) const = 0;
  // Where, inside its root, the process writes perf-PID.map and jit-PID.dump:
  // /tmp unless its environment said otherwise (DOTNET_PerfMapJitDumpPath).
  virtual std::string JitDirectory(uint32_t /*pid*/) const { return "/tmp"; }
  // True when the collector looked for the process's perf map while it ran
  // (every 100 ms, collector/perf_map_tailer.h) and never found one: a hint
  // can then say so rather than guess.
  virtual bool PerfMapNeverSeen(uint32_t /*pid*/) const { return false; }
};

struct SymbolizerOptions {
  // Resolve kernel addresses from this machine's /proc/kallsyms. Only valid
  // when the recording was taken on this boot of this machine.
  bool use_local_kallsyms = true;
  std::string kallsyms_path = "/proc/kallsyms";
  // Where debug files are looked for besides the target's root: the
  // profiler's own root ("" to skip it), then each -symbols DIR in order
  // (debug_file_finder.h).
  std::string own_root = "/";
  std::vector<std::string> symbol_dirs;
  // Look native locations up again when the table already holds them as
  // unknown (postprocess -symbols DIR finishing what the sidecar could not).
  bool retry_unknown_native = false;
};

// Counts for metadata.json and the log. requested, resolved and unknown
// describe every distinct location asked about, however it was named (looked
// up now, or already in the table: the snapshot, the replay's own names), so
// a postprocess that reuses the snapshot reports what the collection did.
struct SymbolizeStats {
  uint64_t requested = 0;
  uint64_t resolved = 0;
  uint64_t unknown = 0;
  uint64_t looked_up = 0;         // of requested, the ones looked up in this run
  uint64_t retried = 0;           // unknown native locations looked up again
  uint64_t with_debug_info = 0;   // modules named with DWARF or a debug file
  std::vector<std::string> warnings;  // one line each, e.g. "kernel symbols hidden: ..."
  std::vector<std::string> notes;     // for the log: which debug files were used
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
