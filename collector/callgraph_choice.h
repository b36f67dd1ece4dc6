// -callgraph's values: how user stacks are walked, as the sampler's stack
// copy sizes (SamplerOptions' fields of the same names).
#ifndef PROFCPU_COLLECTOR_CALLGRAPH_CHOICE_H_
#define PROFCPU_COLLECTOR_CALLGRAPH_CHOICE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::collector {

// perf's default for --call-graph dwarf: 8 KiB of user stack per sample.
inline constexpr uint32_t kDefaultDwarfStackSize = 8192;

// -callgraph fp+cfi's default copy: enough to unwind by CFI from the stack
// pointer to the thread's start when code without frame pointers (libcrypto's
// assembly, .NET's OpenSSL shim) leaves garbage in BP and the kernel's
// frame-pointer chain is lost from the leaf: an ASP.NET Core request's
// stack is 8 to 30 KiB deep (issue 26: 8 KiB rooted 80% of SHA-256 samples).
// The kernel copies (and reserves in the ring buffer) this much per sample,
// but the recording keeps only what a repair reads when BP is a frame record
// (the common case: a few hundred bytes), so the copy costs bytes only where
// it is needed (measured in docs/dotnet-osr.md, "What -callgraph fp+cfi does").
inline constexpr uint32_t kDefaultLeafStackSize = 32768;

// Both 0 for plain frame pointers.
struct CallgraphChoice {
  uint32_t dwarf_stack_size = 0;
  uint32_t leaf_stack_size = 0;
};

// "fp" -> frame pointers; "fp+cfi" -> leaf stack 32768, "fp+cfi,BYTES";
// "dwarf" -> 8192, "dwarf,BYTES": BYTES a multiple of 8 from 8 to 65528 (the
// most perf_event_open accepts). InvalidArgument naming the flag otherwise.
absl::StatusOr<CallgraphChoice> ParseCallgraph(absl::string_view value);

// The -callgraph value a recording was taken with, as ParseCallgraph reads
// it: `walker` is the header's "fp", "fp+cfi" or "dwarf", `stack_bytes` its
// user_stack_size ("fp+cfi,512", "dwarf,8192"; "fp" alone, or the walker
// alone when the size is unknown).
std::string CallgraphSpelling(absl::string_view walker, uint32_t stack_bytes);

// A sample's stack copy must leave its ring buffer (ring_pages of 4 KiB per
// CPU) room for several samples: at most a quarter of it, less 512 bytes for
// the record's other fields. Larger, the kernel drops every sample, unseen.
// A default copy (bytes_given false) is lowered to fit, and the returned
// note says so; BYTES the user gave are refused, naming both ways out.
absl::StatusOr<std::string> FitStackCopyToRing(size_t ring_pages, bool bytes_given,
                                               uint32_t* copy_bytes);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_CALLGRAPH_CHOICE_H_
