// The files both CFI unwinders (dwfl_sessions.h for libdwfl,
// libunwind_unwinder.h) read a module's unwind information from: the vdso
// from profcpu's own image (read once), anything else inside the process's
// root, so a process's /usr/lib is its container's, not ours.
#ifndef PROFCPU_SYMBOLIZE_CFI_UNWINDER_FILES_H_
#define PROFCPU_SYMBOLIZE_CFI_UNWINDER_FILES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "base/rooted_open.h"
#include "symbolize/code_location.h"
#include "symbolize/elf_file.h"
#include "symbolize/process_files.h"

namespace profcpu::symbolize {

class CfiModuleFiles {
 public:
  using Warn = std::function<void(std::string)>;
  // `files` gives each process's root (null: no file opens); `warn` hears
  // of files a process maps that cannot be opened.
  CfiModuleFiles(const ProcessFiles* files, Warn warn) : files_(files), warn_(std::move(warn)) {}

  // The root `module` is found under for `pid`: the process's, else (it
  // exited) that of the process the module was first seen in.
  std::shared_ptr<base::RootDir> RootOf(const Module& module, uint32_t pid) const;
  // The module's file. Fails quietly for what is no file (anonymous and
  // special mappings); a file the process maps that cannot be opened is
  // warned of too.
  absl::StatusOr<ElfFile> Open(const Module& module, uint32_t pid);

 private:
  const ProcessFiles* files_;
  Warn warn_;
  bool vdso_loaded_ = false;
  std::string vdso_image_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_CFI_UNWINDER_FILES_H_
