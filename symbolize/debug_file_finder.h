// Where the separate debug file of a module may be, in the order debuggers
// look (elfutils libdwfl/find-debuginfo.c and perf's dso__read_binary_type_filename
// combined; GDB manual, "Debugging Information in Separate Files"):
//
//   1. build-id:      /usr/lib/debug/.build-id/xx/rest.debug (xx: the first
//                     byte of the build-id in hex, rest: the others)
//   2. debuglink:     the name in .gnu_debuglink, in the module's own
//                     directory, then its .debug/ subdirectory, then
//                     /usr/lib/debug/<module's directory>/
//   3. path:          /usr/lib/debug/<module's path>.debug
//
// Each rule is tried in every search root before the next rule: the target's
// root (/proc/PID/root: a container's own debug packages), this machine's root
// (the profiler's: a sidecar image with debug files, or the laptop's installed
// debug packages, such as libc6-dbg, when postprocessing), every `-symbols DIR`
// the user gave, and this machine's debuginfod client cache (where gdb, perf
// and debuginfod-find leave what they fetched: CACHE/<build-id>/debuginfo). A
// -symbols DIR is a debug directory itself (it plays the part of
// /usr/lib/debug), and also holds files flat, by debuglink name or by the
// module's file name, as `dotnet-symbol -o DIR` leaves them. The cache only
// answers by build-id.
//
// The finder only names candidates; the caller opens each inside its root
// (base::RootDir, so no symlink leads out) and verifies it: the build-id must
// match when both files have one, else the debuglink CRC (module_symbols.cc).
#ifndef PROFCPU_SYMBOLIZE_DEBUG_FILE_FINDER_H_
#define PROFCPU_SYMBOLIZE_DEBUG_FILE_FINDER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/rooted_open.h"
#include "symbolize/elf_symbols.h"

namespace profcpu::symbolize {

// What the kernel appends to a mapping's path once the file is unlinked or
// replaced (d_path(), fs/d_path.c).
inline constexpr absl::string_view kDeletedSuffix = " (deleted)";

// Where a filesystem root keeps its debug files.
inline constexpr absl::string_view kGlobalDebugDir = "/usr/lib/debug";

// Replaces this machine's /usr/lib/debug (tests point it at a scratch
// directory: they must not write the real one).
inline constexpr char kDebugDirEnvVar[] = "PROFCPU_SYSTEM_DEBUG_DIR";

enum class DebugFileRule : uint8_t {
  kBuildId,             // .build-id/xx/rest.debug
  kDebugLinkBeside,     // <module dir>/<debuglink>
  kDebugLinkSubdir,     // <module dir>/.debug/<debuglink>
  kDebugLinkGlobal,     // /usr/lib/debug/<module dir>/<debuglink>
  kPath,                // /usr/lib/debug/<module path>.debug
  kFlat,                // -symbols DIR/<debuglink> or DIR/<module file name>[.debug|.dbg]
};

// A short name for logs and tests: "build-id", "debuglink", ...
absl::string_view DebugFileRuleName(DebugFileRule rule);

// True for rules that find a file by a name only the debuglink gives; such a
// file is verified by the CRC the link carries when build-ids cannot decide.
bool IsDebugLinkRule(DebugFileRule rule);

struct DebugSearchRoot {
  enum class Kind : uint8_t {
    kSystem,           // a filesystem root: debug files live under `debug_dir`
    kSymbolDir,        // a user's -symbols DIR: itself a debug directory, plus flat files
    kDebuginfodCache,  // elfutils' client cache: <build-id in hex>/debuginfo, nothing else
  };
  std::shared_ptr<base::RootDir> root;
  Kind kind = Kind::kSystem;
  std::string description;  // "the target's root", "/home/me/syms"
  // kSystem only: the debug directory inside `root`.
  std::string debug_dir = std::string(kGlobalDebugDir);
};

struct DebugFileQuery {
  std::string module_path;  // as the target saw it; kDeletedSuffix already removed
  std::string build_id;     // raw bytes; empty when unknown
  std::optional<DebugLink> debug_link;
};

struct DebugFileCandidate {
  const DebugSearchRoot* where = nullptr;
  std::string path;  // inside `where->root`
  DebugFileRule rule = DebugFileRule::kBuildId;
};

// The search roots besides a target's own: the profiler's root (`own_root`,
// "" for none; "/" is this machine, whose debug directory $PROFCPU_SYSTEM_DEBUG_DIR
// may replace), each symbol directory, in order, then `debuginfod_cache`
// ("" for none; left out quietly when it does not exist). A symbol directory
// that cannot be opened adds a line to `warnings` and is left out.
std::vector<DebugSearchRoot> OpenDebugSearchRoots(const std::string& own_root,
                                                  const std::vector<std::string>& symbol_dirs,
                                                  const std::string& debuginfod_cache,
                                                  std::vector<std::string>* warnings);

// The directory elfutils' debuginfod client caches its files in, as
// libdebuginfod picks it: $DEBUGINFOD_CACHE_PATH, else
// $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client ("" when
// neither HOME nor XDG_CACHE_HOME is set). Null arguments are unset variables.
std::string DebuginfodClientCacheDir(const char* cache_path, const char* xdg_cache_home,
                                     const char* home);
// The same, from this process's environment.
std::string DebuginfodClientCacheDir();

// Every place the debug file may be, in search order. Rules that need what
// the query lacks (no build-id, no debuglink, no path) are left out.
std::vector<DebugFileCandidate> DebugFileCandidates(const DebugFileQuery& query,
                                                   const std::vector<DebugSearchRoot>& roots);

// The CRC-32 .gnu_debuglink uses (the ISO-HDLC CRC zlib computes) of the
// whole file open at `fd`, read from offset 0. Refuses files over `max_bytes`.
absl::StatusOr<uint32_t> DebugLinkCrc(int fd, uint64_t max_bytes);

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_DEBUG_FILE_FINDER_H_
