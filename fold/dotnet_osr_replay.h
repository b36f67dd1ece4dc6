// Gives .NET methods entered through on-stack replacement their callers back
// during fold's replay. A frame-pointer walk through such a method skips its
// caller (symbolize/dotnet_osr_repair.h explains why and how the caller is
// found again in a copy of the stack); this decides, for each chain, which of
// its addresses are OSR code, by the JIT names the run folder holds (perf map
// and jitdump copies in jit/, through symbolize::JitCodeHistory), so
// postprocess elsewhere repeats the same repairs from recording.zst alone.
//
// -callgraph fp+cfi chains (samples and off-CPU stays carrying registers and
// a stack copy) are repaired; other frame-pointer chains are only counted, for
// the warning that tells the user how to get the callers back.
#ifndef PROFCPU_FOLD_DOTNET_OSR_REPLAY_H_
#define PROFCPU_FOLD_DOTNET_OSR_REPLAY_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/run_log.h"
#include "recording/records.h"
#include "symbolize/address_space.h"
#include "symbolize/dotnet_osr_repair.h"
#include "symbolize/jit_history.h"
#include "symbolize/stack_unwinder.h"

namespace profcpu::fold {

// What the replay did about OSR frames, per process (RecordingSummary).
struct DotnetOsrCounts {
  std::map<uint32_t, symbolize::OsrRepairCounts> by_pid;
  // The most stack copy bytes (from sp) a repair read: how much copy .NET
  // needs (docs/dotnet-osr.md).
  uint64_t max_copy_bytes_used = 0;
};

class DotnetOsrReplay {
 public:
  // `jit` null: no names, nothing is OSR code.
  explicit DotnetOsrReplay(symbolize::JitCodeHistory* jit) : jit_(jit) {}

  // Every mapping record: a jitdump mapped later may name OSR code the
  // process's files did not show before.
  void OnMmap(const recording::Mmap& mmap);

  // `chain` (user, leaf first, after the leaf repair) with every OSR frame's
  // caller put back from `copy`; `chain` itself when there is nothing to do.
  // `time_ns`: when the stack was taken (names code by its generation then).
  // The result is valid until the next call.
  const std::vector<uint64_t>& Repair(const symbolize::UserStackCopy& copy,
                                      const std::vector<uint64_t>& chain, uint64_t time_ns,
                                      const symbolize::AddressSpaceTracker& spaces,
                                      DotnetOsrCounts* counts);

  // A frame-pointer chain without a stack copy: counted if it runs OSR code.
  void Count(uint32_t pid, uint64_t time_ns, const std::vector<uint64_t>& chain,
             const symbolize::AddressSpaceTracker& spaces, DotnetOsrCounts* counts);

 private:
  struct CodeKey {
    uint32_t pid;
    uint64_t address;
    uint32_t generation;
    friend bool operator==(const CodeKey&, const CodeKey&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const CodeKey& k) {
      return H::combine(std::move(h), k.pid, k.address, k.generation);
    }
  };

  bool ProcessHasOsrCode(uint32_t pid);
  // Whether `address` (already pointing inside the call for return addresses)
  // is OSR code at `time_ns`: the name is asked once per (address, generation).
  bool IsOsrCode(uint32_t pid, uint64_t address, uint64_t time_ns,
                 const symbolize::AddressSpaceTracker& spaces);
  // Fills chain_flags_ for `chain`; whether any element is OSR code.
  bool FlagOsrFrames(uint32_t pid, uint64_t time_ns, const std::vector<uint64_t>& chain,
                     const symbolize::AddressSpaceTracker& spaces);

  symbolize::JitCodeHistory* jit_;
  absl::flat_hash_map<uint32_t, bool> has_osr_;   // pid -> its JIT files name OSR code
  absl::flat_hash_map<CodeKey, bool> osr_code_;   // per location: OSR code?
  std::vector<bool> chain_flags_;                 // the current chain's OSR frames
  std::vector<uint64_t> repaired_;
};

// profcpu.log: per process, what was repaired, and OsrWarning's advice once.
void LogDotnetOsr(const DotnetOsrCounts& counts, bool stack_copies, base::RunLog* log);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_DOTNET_OSR_REPLAY_H_
