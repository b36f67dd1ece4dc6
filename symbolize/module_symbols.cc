#include "symbolize/module_symbols.h"

#include <sys/stat.h>

#include <cerrno>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/errno_status.h"
#include "base/status_macros.h"
#include "symbolize/debug_file_finder.h"

namespace profcpu::symbolize {

std::string MappedFileChange(const Module& module, const std::string& found_id,
                             uint64_t found_inode) {
  absl::string_view path = module.path;
  const bool deleted = absl::ConsumeSuffix(&path, kDeletedSuffix);
  if (!module.build_id.empty() && !found_id.empty()) {
    // A build-id names the contents; it settles the question either way.
    if (found_id != module.build_id) {
      return absl::StrCat(path, ": file changed since it was mapped (build-id ",
                          absl::BytesToHexString(module.build_id), ", now ",
                          absl::BytesToHexString(found_id), "); its symbols may be wrong");
    }
  } else if (module.inode != 0 && found_inode != module.inode) {
    // Device numbers are not compared: overlayfs reports the underlying
    // layer's device in the mapping but its own in stat().
    return absl::StrCat(path, ": file changed since it was mapped (inode ", module.inode,
                        ", now ", found_inode, "); its symbols may be wrong");
  } else if (deleted && module.inode == 0) {
    // With the inode known and equal, this is the very file that was mapped
    // (the collector keeps it open through /proc/PID/map_files); without
    // it, nothing tells a replacement at the same path apart.
    return absl::StrCat(path,
                        ": file was deleted after it was mapped; using the file "
                        "now at that path, its symbols may be wrong");
  }
  return "";
}

absl::StatusOr<ModuleSymbols> LoadModuleSymbols(const base::RootDir& root, const Module& module,
                                                const ElfSymbolLimits& limits) {
  absl::string_view path = module.path;
  absl::ConsumeSuffix(&path, kDeletedSuffix);
  PROFCPU_ASSIGN_OR_RETURN(base::UniqueFd fd, root.OpenFile(std::string(path)));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return base::ErrnoStatus(errno, absl::StrCat("stat ", path));
  ModuleSymbols out;
  PROFCPU_ASSIGN_OR_RETURN(out.symbols, ElfSymbols::FromFd(fd.get(), path, limits));

  out.warning = MappedFileChange(module, out.symbols->build_id(), static_cast<uint64_t>(st.st_ino));
  return out;
}

}  // namespace profcpu::symbolize
