// Gives back the caller of a .NET method entered through on-stack
// replacement (OSR), which a frame-pointer walk skips.
//
// A method with a loop that is called once (Main -> Work, Work spinning) runs
// at Tier0 until its loop has turned often enough; then the Tier0 code calls
// the runtime's patchpoint helper, which jumps into an optimized copy of the
// method (perf-map tier "[OptimizedTier1OSR]") in the middle of the loop,
// keeping the Tier0 frame in place beneath it. The OSR prolog (x64) is
//
//   mov rax, [rbp]   ; rbp is still the Tier0 frame's: [rbp] = the caller's rbp
//   push rax
//   sub rsp, N ... lea rbp, [rsp+N]
//
// so the OSR frame record is {caller's rbp, word below it}, and that word is
// what the patchpoint call pushed: a return address into the method's own
// Tier0 code. The Tier0 frame record {caller's rbp, return address into the
// caller} sits higher up in the same stack. A walk therefore reads
//   Work[OptimizedTier1OSR] -> Work[QuickJitted] -> (the caller's caller)
// and the caller (Main) is lost. Measured on .NET 10.0.12 x64 (docs/dotnet-osr.md):
// in 3,667 of 3,668 OSR samples (the other was taken on the OSR prolog's
// first instruction, where the walk is right) exactly one slot S above the
// OSR frame, below the caller's frame, held [S] == [OSR rbp] with a code
// address in [S+8]: the Tier0 frame record, 128-560 bytes above rsp (once
// 1,936; more for methods with more locals). x64 only: arm64 OSR frames
// are laid out differently.
//
// RepairDotnetOsrChain finds that record in a sample's stack copy and
// replaces the Tier0 word by the caller's return address. Pure: no I/O.
#ifndef PROFCPU_SYMBOLIZE_DOTNET_OSR_REPAIR_H_
#define PROFCPU_SYMBOLIZE_DOTNET_OSR_REPAIR_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace profcpu::symbolize {

enum class OsrRepairOutcome {
  kNoOsrFrame,       // no element of the chain is OSR code: nothing to do
  kRepaired,         // every OSR frame got its caller back
  kChainMismatch,    // the frame-pointer walk in the copy does not give this chain
  kFrameOutsideCopy, // the OSR frame's record is not in the stack copy
  kCopyTooShort,     // the copy ends before the caller's frame and held no Tier0 record
  kNoTier0Record,    // searched up to the caller's frame: no Tier0 record
  kAmbiguous,        // more than one slot looks like the Tier0 record: left alone
};

const char* OsrRepairOutcomeName(OsrRepairOutcome outcome);

struct OsrRepairResult {
  // The chain with each OSR frame's Tier0 word replaced by the caller's
  // return address (appended when the chain ended at the OSR frame); the
  // input unchanged when nothing was repaired.
  std::vector<uint64_t> chain;
  // kRepaired if every OSR frame was repaired, else the first failure (frames
  // repaired before it stay repaired).
  OsrRepairOutcome outcome = OsrRepairOutcome::kNoOsrFrame;
  int repaired = 0;
  // How many bytes of the copy (from sp) the repairs read: S + 16 - sp of the
  // highest Tier0 record used. 0 if none.
  uint64_t bytes_used = 0;
};

struct OsrCode {
  // Whether `address` lies in JIT code of an OSR tier (perf map / jitdump
  // name ending "[OptimizedTier1OSR]", dotnet_tier.h).
  absl::FunctionRef<bool(uint64_t)> is_osr_code;
  // Whether `address` lies in code a return address may point into: JIT code
  // or an executable mapping (the runtime calls Main from libcoreclr.so).
  absl::FunctionRef<bool(uint64_t)> is_code;
};

// `chain`: the sample's user call chain, leaf first: chain[0] the sampled
// instruction, then the frame-pointer walk's return addresses from `bp`
// ([bp+8], [[bp]+8], ...). Up to kMaxLeadingFrames elements may come before
// the walk's first return address (callers of a frameless leaf that a leaf
// repair recovered); they are found by matching [bp+8] in the chain.
// `sp`, `bp`: the sample's user rsp and rbp. `stack`: the bytes copied from
// sp up (PERF_SAMPLE_STACK_USER).
OsrRepairResult RepairDotnetOsrChain(absl::Span<const uint64_t> chain, uint64_t sp, uint64_t bp,
                                     absl::string_view stack, const OsrCode& code);

inline constexpr int kMaxLeadingFrames = 4;

// One process's repairs, for its once-per-run warning.
struct OsrRepairCounts {
  uint64_t samples_in_osr = 0;  // chains with an OSR frame
  std::array<uint64_t, 7> by_outcome{};  // indexed by OsrRepairOutcome
  void Add(const OsrRepairResult& result);
  uint64_t unrepaired() const { return samples_in_osr - by_outcome[1]; }
};

// The warning to give once per process (profcpu.log, metadata.json's
// warnings), "" when there is nothing to say. `stack_copies`: whether the
// samples carried a stack copy to repair from (-callgraph fp+cfi); without,
// every sample in OSR code lost its caller. With copies, a warning only when
// more than 1% stayed unrepaired (a sample in the OSR prolog's first two
// instructions has a right chain already and counts as no_tier0_record).
std::string OsrWarning(uint32_t pid, const OsrRepairCounts& counts, bool stack_copies);

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_DOTNET_OSR_REPAIR_H_
