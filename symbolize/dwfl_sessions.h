// The DWARF unwinder's libdwfl sessions: one Dwfl per process, attached to
// the unwinder's thread callbacks (a single thread whose registers and
// memory are the current sample's). Modules are reported to a session as
// frames reach them, from the process's mappings at the sample's time;
// libdwfl then asks for their files, which are opened inside the process's
// root (openat2 RESOLVE_IN_ROOT) with ELF_C_READ, and for separate debug
// files (.debug_frame), handed over as private in-memory copies: libdwfl
// mmaps those, and a copy cannot be truncated under us by the target.
//
// Sessions are capped (least recently used first out) so that many
// processes do not hold many file descriptors open. libdwfl cannot forget a
// module, so a session whose process mapped something else where a reported
// module was is started afresh.
#ifndef PROFCPU_SYMBOLIZE_DWFL_SESSIONS_H_
#define PROFCPU_SYMBOLIZE_DWFL_SESSIONS_H_

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "symbolize/address_space.h"
#include "symbolize/cfi_unwinder_files.h"
#include "symbolize/code_location.h"
#include "symbolize/debug_file_finder.h"
#include "symbolize/elf_file.h"
#include "symbolize/load_layout.h"
#include "symbolize/symbolizer.h"

namespace profcpu::symbolize {

class DwflSessions {
 public:
  struct Options {
    size_t max_sessions = 16;
    // Where separate debug files are looked for besides each process's root.
    std::vector<DebugSearchRoot> debug_roots;
  };
  using Warn = std::function<void(std::string)>;

  struct DwflEnder {
    void operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }
  };
  class Session;

  // `files` gives each process's root (null: no session can be made).
  // Sessions attach `thread_callbacks` with `thread_arg`; both must outlive
  // this. `warn` hears of files that cannot be opened and of libdwfl
  // refusing to start.
  DwflSessions(const ProcessFiles* files, Options options,
               const Dwfl_Thread_Callbacks* thread_callbacks, void* thread_arg, Warn warn);
  ~DwflSessions();
  DwflSessions(const DwflSessions&) = delete;
  DwflSessions& operator=(const DwflSessions&) = delete;

  // The session to unwind a sample of `pid` with, its modules checked
  // against the process's mappings in `spaces` now; null when libdwfl cannot
  // unwind for it. Never call it during an unwind, which iterates the session.
  Session* Ready(uint32_t pid, const AddressSpaceTracker& spaces);
  // Reports the module holding `pc` to `session`, if it is file-backed and
  // not reported yet. JIT and anonymous code is left to libdw's
  // frame-pointer fallback.
  void Report(Session* session, const AddressSpaceTracker& spaces, uint64_t pc);

  // Sessions started afresh because a mapping changed under them.
  uint64_t resets() const { return resets_; }

 private:
  // A file libdwfl may ask for (its module's userdata).
  struct ModuleFile {
    DwflSessions* sessions = nullptr;
    uint32_t pid = 0;
    Module module;
  };
  // Where a module mapped in the process sits: its bias and [low, high).
  struct Placement {
    uint64_t bias = 0;
    uint64_t low = 0;
    uint64_t high = 0;
  };

  Session* SessionFor(uint32_t pid);
  bool Begin(Session* session);
  void Reset(Session* session);
  void Validate(Session* session, uint32_t pid, const AddressSpaceTracker& spaces);
  std::optional<Placement> Place(Session* session, const MappingView& mapping,
                                 const Module& module);

  // Dwfl_Callbacks.
  static int FindElf(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, char**, Elf** elfp);
  static int FindDebuginfo(Dwfl_Module* mod, void** userdata, const char*, Dwarf_Addr,
                           const char*, const char* debuglink_file, GElf_Word debuglink_crc,
                           char**);

  const ProcessFiles* files_;
  Options options_;
  const Dwfl_Thread_Callbacks* thread_callbacks_;
  void* thread_arg_;
  Warn warn_;
  CfiModuleFiles module_files_;
  Dwfl_Callbacks callbacks_ = {};
  absl::flat_hash_map<uint32_t, std::unique_ptr<Session>> sessions_;
  uint64_t clock_ = 0;
  uint64_t resets_ = 0;
};

// One process's session.
class DwflSessions::Session {
 public:
  Dwfl* dwfl() const { return dwfl_.get(); }
  uint32_t pid() const { return pid_; }

 private:
  friend class DwflSessions;
  struct Reported {
    uint64_t end = 0;
    int64_t module = -1;
    uint64_t bias = 0;
    uint64_t probe = 0;  // an address it was reported for, to check it later
  };

  uint32_t pid_ = 0;
  uint64_t last_used_ = 0;
  uint64_t generation_ = 0;  // of the process's mappings when last checked
  std::map<uint64_t, Reported> reported_;  // by module start address
  absl::flat_hash_map<int64_t, LoadLayout> layouts_;
  std::vector<std::unique_ptr<ModuleFile>> files_;
  // Declared last, so it ends before the files its modules point at go.
  std::unique_ptr<Dwfl, DwflEnder> dwfl_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_DWFL_SESSIONS_H_
