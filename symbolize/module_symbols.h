// Loads the symbols of a mapped file (a Module) from inside the mapping
// process's root, and says when the file found is not the one that was mapped.
#ifndef PROFCPU_SYMBOLIZE_MODULE_SYMBOLS_H_
#define PROFCPU_SYMBOLIZE_MODULE_SYMBOLS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/rooted_open.h"
#include "symbolize/code_location.h"
#include "symbolize/elf_symbols.h"

namespace profcpu::symbolize {

struct ModuleSymbols {
  std::unique_ptr<ElfSymbols> symbols;
  // Non-empty when the file may differ from the mapped one (replaced by an
  // upgrade, deleted): the symbols are still used, but may be wrong.
  std::string warning;
};

// Why the file found at `module.path` (its build-id, "" if none, and inode)
// may not be the one that was mapped: build-id when both are known, else the
// inode; "" when nothing says so.
std::string MappedFileChange(const Module& module, const std::string& found_build_id,
                             uint64_t found_inode);

// Opens `module.path` inside `root` (openat2 RESOLVE_IN_ROOT, so a symlink the
// target planted cannot lead outside its root) and reads its symbols. A path
// the kernel reported as "PATH (deleted)" is looked for at PATH. The file's
// identity is checked against the mapping: build-id when both are known, else
// the inode.
absl::StatusOr<ModuleSymbols> LoadModuleSymbols(const base::RootDir& root, const Module& module,
                                                const ElfSymbolLimits& limits = {});

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_MODULE_SYMBOLS_H_
