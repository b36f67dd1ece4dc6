// The JIT symbol files of profiled processes, read once per process and
// shared by the replay (time-correct generations, jit_history.h) and the
// symbolizer (names):
//   perf-PID.map      "START SIZE NAME" lines (perf_map.h), later line wins
//   jit-PID.dump      timed CODE_LOAD/CODE_MOVE/DEBUG_INFO records (jitdump.h)
//   perfinfo-PID.map  .NET image loads (perfinfo_map.h), for hints
// JIT addresses are resolved by address whatever the mapping is called:
// "//anon", "/memfd:doublemapper (deleted)" (.NET 7+ W^X), or a .NET image
// (.dll) whose precompiled code only the jitdump's [PreJIT] records name.
//
// Files come from a JitFileSource: in the sidecar, the command copies each
// one from the target's root into the run folder (jit/) on first use and
// reads the copy, so postprocess elsewhere reads the very same bytes and
// gets the same generations and names.
#ifndef PROFCPU_SYMBOLIZE_JIT_SOURCES_H_
#define PROFCPU_SYMBOLIZE_JIT_SOURCES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "symbolize/jit_history.h"
#include "symbolize/jitdump.h"
#include "symbolize/perf_map.h"
#include "symbolize/perfinfo_map.h"
#include "symbolize/symbol_table.h"
#include "symbolize/symbolizer.h"

namespace profcpu::symbolize {

class LoadedSymbolCache;

enum class JitFileKind : uint8_t { kPerfMap, kJitdump, kPerfInfo };

// The name a kind of file has in the run folder's jit/ directory, keyed by
// the pid as recorded: "perf-PID.map", "jit-PID.dump", "perfinfo-PID.map".
std::string JitFileName(JitFileKind kind, uint32_t pid);

class JitFileSource {
 public:
  virtual ~JitFileSource() = default;
  // Opens `kind` of process `pid`, which the process wrote at `path` (as it
  // sees paths, e.g. /tmp/perf-1.map). NotFound when there is none,
  // Unavailable when the process's files cannot be reached at all.
  virtual absl::StatusOr<base::UniqueFd> Open(uint32_t pid, JitFileKind kind,
                                              const std::string& path) = 0;
};

// Opens the files inside each process's root (openat2 RESOLVE_IN_ROOT),
// refusing anything but regular files (a FIFO planted there must not block).
class TargetJitFiles : public JitFileSource {
 public:
  explicit TargetJitFiles(const ProcessFiles* files) : files_(files) {}
  absl::StatusOr<base::UniqueFd> Open(uint32_t pid, JitFileKind kind,
                                      const std::string& path) override;

 private:
  const ProcessFiles* files_;
};

// JIT code a process's runtime described otherwise than in files: for .NET,
// its method load events (dotnet/PID.nettrace), which name managed frames
// with no perf map written in the target (-perfmap off, a read-only /tmp).
class JitCodeEvents {
 public:
  virtual ~JitCodeEvents() = default;
  // The code `pid` loaded over the run, or nullptr when none is known; sets
  // `described` to what was read, for the log ("dotnet/42.nettrace (1673
  // methods)").
  virtual std::unique_ptr<Jitdump> CodeOf(uint32_t pid, std::string* described) = 0;
};

class JitSources : public JitCodeHistory {
 public:
  // Either may be null: no files (every JIT frame stays unknown), no
  // namespace pids (a process is taken to see itself by its recorded pid).
  JitSources(JitFileSource* source, const ProcessFiles* processes);
  ~JitSources() override;

  // Consulted for a process with neither a perf map nor a jitdump; may be
  // null. Set before the first question.
  void set_code_events(JitCodeEvents* events) { events_ = events; }
  // Perf maps are read through `cache` (loaded_symbol_cache.h: a growing map
  // is parsed only from where an earlier run stopped); may be null. Set
  // before the first question.
  void set_cache(LoadedSymbolCache* cache) { cache_ = cache; }

  void OnMmap(const recording::Mmap& mmap) override;
  uint32_t Generation(uint32_t pid, uint64_t address, uint64_t time_ns) override;

  // Names a kProcess location: its generation's jitdump region, else the
  // perf map; nullopt when neither knows the address. `mapping_name` only
  // shapes the hint given when a process has no JIT files at all.
  std::optional<Symbolization> Resolve(const CodeLocation& location,
                                       absl::string_view mapping_name);

  // Which source names `location` as Resolve does: "jitdump", "perf_map",
  // or "method_events" (the runtime's EventPipe method events, for a process
  // without JIT files); "" when none does. metadata.json counts the frames
  // each named.
  const char* NameSourceOf(const CodeLocation& location);

  // Problems found since the last call, each once (malformed files, missing
  // maps with how to turn them on).
  void TakeWarnings(std::vector<std::string>* out);
  // Which files were read, for the log: "jit-42.dump (1234 regions)".
  std::vector<std::string> Loaded() const;

  // JitCodeHistory: from the same perf map and jitdump as Resolve.
  bool NamesAnyCode(uint32_t pid, absl::string_view part) override;
  std::string CodeName(uint32_t pid, uint64_t address, uint32_t generation) override;

 private:
  struct Process;
  Process& Load(uint32_t pid);
  void Warn(std::string warning);
  std::string PathInside(uint32_t pid, JitFileKind kind) const;

  JitFileSource* source_;
  const ProcessFiles* processes_;
  JitCodeEvents* events_ = nullptr;
  LoadedSymbolCache* cache_ = nullptr;
  absl::flat_hash_map<uint32_t, std::string> jitdump_paths_;  // pid -> path from its mmap
  absl::flat_hash_map<uint32_t, std::unique_ptr<Process>> loaded_;
  absl::flat_hash_set<std::string> warned_;
  std::vector<std::string> warnings_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_JIT_SOURCES_H_
