// Unwinds -callgraph dwarf samples (user registers + a copy of the user
// stack, recording-format.md), and repairs the leaf of -callgraph fp+cfi
// chains from a small copy (RepairLeaf), with libdw's frame unwinder (libdwfl,
// dwfl_getthread_frames), from the call frame information of the code's
// files: .eh_frame, else .debug_frame in the file or its separate debug file
// (found by debug_file_finder.h's rules). Code without CFI (JIT code) is
// walked by libdw's x86-64 frame-pointer fallback. What a walk's frames
// become is cfi_unwinder.h's, shared with libunwind_unwinder.h (the
// comparison in docs/unwinders.md).
//
// It opens the target's files, so it lives here, not in fold/: fold's replay
// calls it through the UserStackUnwinder interface with its view of the
// process's mappings at the sample's time, and the command saves what it
// returns (unwound_stacks.h) so postprocess elsewhere replays the same chains.
//
// One libdwfl session per process (dwfl_sessions.h: modules reported as
// frames reach them, their files opened inside the process's root, sessions
// capped), attached to a state whose registers and memory are the current
// sample's: memory reads outside the stack copy fail, which is where an
// unwind stops when the copy was too short.
#ifndef PROFCPU_SYMBOLIZE_DWARF_UNWINDER_H_
#define PROFCPU_SYMBOLIZE_DWARF_UNWINDER_H_

#include <memory>

#include "symbolize/cfi_unwinder.h"
#include "symbolize/symbolizer.h"

namespace profcpu::symbolize {

class DwarfUnwinder : public CfiUnwinder {
 public:
  // `files` gives each process's root (null: nothing can be unwound).
  DwarfUnwinder(const ProcessFiles* files, DwarfUnwinderOptions options = {});
  ~DwarfUnwinder() override;

  // A DwarfUnwinder of its own for a worker thread: sessions are rebuilt
  // from the worker's view of the mappings and give the same answers (a
  // session only adds the modules its walks reach, checked against the
  // mappings at each sample). Each holds its files open: the workers share
  // the session cap (at least 4 each).
  std::unique_ptr<UserStackUnwinder> NewWorker(size_t workers) override;

 protected:
  WalkEnd Walk(CfiWalk* walk) override;

 private:
  class Impl;
  const ProcessFiles* files_;
  DwarfUnwinderOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_DWARF_UNWINDER_H_
