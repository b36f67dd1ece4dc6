// Unwinds -callgraph dwarf samples (user registers + a copy of the user
// stack, recording-format.md), and repairs the leaf of -callgraph fp+cfi
// chains from a small copy (RepairLeaf), with libdw's frame unwinder (libdwfl,
// dwfl_getthread_frames), from the call frame information of the code's
// files: .eh_frame, else .debug_frame in the file or its separate debug file
// (found by debug_file_finder.h's rules). Code without CFI (JIT code) is
// walked by libdw's x86-64 frame-pointer fallback.
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

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "symbolize/debug_file_finder.h"
#include "symbolize/stack_unwinder.h"
#include "symbolize/symbolizer.h"

namespace profcpu::symbolize {

struct DwarfUnwinderOptions {
  size_t max_frames = 512;
  size_t max_sessions = 16;  // processes with an open libdwfl session at once
  // Where separate debug files (for .debug_frame) are looked for besides
  // each process's root.
  std::vector<DebugSearchRoot> debug_roots;
};

// What -callgraph fp+cfi leaf repairs did (RepairLeaf).
struct LeafRepairStats {
  uint64_t samples = 0;
  uint64_t unchanged = 0;     // the leaf had its frame: the chain was whole
  uint64_t repaired = 0;      // callers put back
  uint64_t frames_added = 0;
  uint64_t cfi_whole = 0;     // the chain never met: CFI frames to the thread's start instead
  uint64_t cfi_only = 0;      // no frame-pointer chain: CFI frames instead (marked truncated)
  uint64_t no_registers = 0;  // of those left as they were: no user registers (kernel thread)
  uint64_t no_cfi = 0;        // no unwinding session for the process
  uint64_t mismatch = 0;      // CFI reached the chain's slot with another return address
  uint64_t no_splice = 0;     // CFI never reached the chain (no CFI, copy too short, rbp not a frame)
  uint64_t outside_mappings = 0;  // a recovered frame was not code of the process
};

struct DwarfUnwindStats {
  uint64_t stacks = 0;
  uint64_t frames = 0;
  uint64_t truncated = 0;
  uint64_t stack_exhausted = 0;  // of the truncated: a read past the stack copy
  uint64_t frame_limit = 0;      // of the truncated: max_frames reached
  uint64_t session_resets = 0;   // a mapping changed under a session
  LeafRepairStats leaf;
};

class DwarfUnwinder : public UserStackUnwinder {
 public:
  // `files` gives each process's root (null: nothing can be unwound).
  DwarfUnwinder(const ProcessFiles* files, DwarfUnwinderOptions options = {});
  ~DwarfUnwinder() override;

  UnwoundStack Unwind(const recording::Sample& sample, uint64_t regs_mask,
                      const AddressSpaceTracker& spaces) override;
  UnwoundStack RepairLeaf(const UserStackCopy& copy, const std::vector<uint64_t>& chain,
                          const AddressSpaceTracker& spaces) override;

  const DwarfUnwindStats& stats() const;
  // Problems found since the last call, each once (unreadable files, no
  // x86-64 registers in the recording, ...).
  void TakeWarnings(std::vector<std::string>* out);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_DWARF_UNWINDER_H_
