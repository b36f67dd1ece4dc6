// The same job as dwarf_unwinder.h (-callgraph dwarf stacks, the fp+cfi
// leaf repair; what a walk's frames become is cfi_unwinder.h's) with
// libunwind's remote unwinding instead of libdwfl: one libunwind address
// space per process (unw_create_addr_space) whose accessors serve the
// sample's registers and stack copy, and find each frame's CFI in the
// .eh_frame_hdr table of the file mapped there (eh_frame_table.h, read
// inside the process's root) with dwarf_search_unwind_table.
//
// It reads .eh_frame only: code whose file has no .eh_frame_hdr (CFI in
// .debug_frame or a separate debug file, JIT code) is walked by libunwind's
// x86-64 frame-pointer fallback. docs/unwinders.md compares it with libdwfl
// on the same recordings (bench/unwinders.sh); the pipeline uses the one
// that page names as the default.
#ifndef PROFCPU_SYMBOLIZE_LIBUNWIND_UNWINDER_H_
#define PROFCPU_SYMBOLIZE_LIBUNWIND_UNWINDER_H_

#include <memory>

#include "symbolize/cfi_unwinder.h"
#include "symbolize/symbolizer.h"

namespace profcpu::symbolize {

class LibunwindUnwinder : public CfiUnwinder {
 public:
  // `files` gives each process's root (null: nothing can be unwound).
  // options.debug_roots is not used (no .debug_frame).
  LibunwindUnwinder(const ProcessFiles* files, DwarfUnwinderOptions options = {});
  ~LibunwindUnwinder() override;

 protected:
  WalkEnd Walk(CfiWalk* walk) override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_LIBUNWIND_UNWINDER_H_
