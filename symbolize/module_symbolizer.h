// Everything that can name code in one mapped file: the file's own symbol
// tables, its separate debug file (found by debug_file_finder.h's rules and
// verified), and the DWARF of whichever of the two has it.
//
// It works with or without the mapped file itself. In the sidecar the file is
// read inside the target's root, which gives its build-id, its .gnu_debuglink
// and its PT_LOAD layout (kept in the Module, then in the snapshot). Elsewhere
// (`postprocess -symbols DIR` on a laptop) only the debug file is at hand: it
// is accepted only when its build-id matches the one recorded, and offsets are
// translated with the recorded layout, because a debug file's own program
// headers are zeroed by objcopy --only-keep-debug.
#ifndef PROFCPU_SYMBOLIZE_MODULE_SYMBOLIZER_H_
#define PROFCPU_SYMBOLIZE_MODULE_SYMBOLIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/rooted_open.h"
#include "symbolize/code_location.h"
#include "symbolize/debug_file_finder.h"
#include "symbolize/dwarf_symbols.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/symbol_table.h"

namespace profcpu::symbolize {

struct ModuleSymbolizerLimits {
  ElfSymbolLimits elf;
  DwarfLimits dwarf;
  // A debug file is read whole only to check a debuglink CRC (when build-ids
  // cannot decide); bigger ones are refused for that rule.
  uint64_t max_crc_bytes = uint64_t{4} << 30;
};

class ModuleSymbolizer {
 public:
  // Frames for a file offset of the module, innermost first (inlined calls
  // from DWARF, then the function, named by its ELF symbol when there is one,
  // as the frame-pointer path names it). Empty when nothing names it.
  std::vector<Frame> Lookup(uint64_t file_offset);

  // What was learned about the file (to keep in the Module and snapshot).
  const std::string& build_id() const { return build_id_; }
  const std::vector<LoadSegment>& segments() const { return segments_; }
  // Where the debug file was found ("" when none was used), and by which rule.
  const std::string& debug_file() const { return debug_file_; }
  bool has_dwarf() const { return dwarf_ != nullptr; }
  // Memory held, roughly (grows as DWARF lookups index more units), for a
  // cache's byte cap.
  size_t EstimatedBytes() const;

 private:
  friend struct ModuleSymbolizerLoader;
  std::string build_id_;
  std::vector<LoadSegment> segments_;
  std::unique_ptr<ElfSymbols> binary_;  // the mapped file's tables; null if unreachable
  std::unique_ptr<ElfSymbols> debug_;   // the debug file's .symtab; null if none
  std::unique_ptr<DwarfSymbols> dwarf_;
  std::string debug_file_;
};

// A debug file found and verified (build-id, else debuglink CRC).
struct FoundDebugFile {
  base::UniqueFd fd;
  std::unique_ptr<ElfSymbols> symbols;  // its tables, read while verifying
  std::string description;              // "PATH in WHERE"
  DebugFileRule rule = DebugFileRule::kBuildId;
};

// Tries every candidate of `query` in `roots`, in order, and returns the
// first acceptable one; a rejected candidate adds a line to `warnings`.
absl::StatusOr<FoundDebugFile> FindDebugFile(const DebugFileQuery& query,
                                             const std::vector<DebugSearchRoot>& roots,
                                             const ModuleSymbolizerLimits& limits,
                                             std::vector<std::string>* warnings);

struct LoadedModule {
  std::unique_ptr<ModuleSymbolizer> symbolizer;
  std::vector<std::string> warnings;  // file changed, no usable layout, ...
};

// `target_root` may be null (the target's files are not reachable); then
// `module.build_id` and `module.segments` must come from the snapshot.
// `debug_roots` are searched in order for a debug file. NotFound when neither
// the file nor a matching debug file is found.
absl::StatusOr<LoadedModule> LoadModuleSymbolizer(const Module& module,
                                                  const base::RootDir* target_root,
                                                  const std::vector<DebugSearchRoot>& debug_roots,
                                                  const ModuleSymbolizerLimits& limits = {});

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_MODULE_SYMBOLIZER_H_
