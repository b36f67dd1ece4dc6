// -callgraph's values: how user stacks are walked, as the sampler's stack
// copy sizes (SamplerOptions' fields of the same names).
#ifndef PROFCPU_COLLECTOR_CALLGRAPH_CHOICE_H_
#define PROFCPU_COLLECTOR_CALLGRAPH_CHOICE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace profcpu::collector {

// perf's default for --call-graph dwarf: 8 KiB of user stack per sample.
inline constexpr uint32_t kDefaultDwarfStackSize = 8192;

// -callgraph fp+cfi's default: enough for the frameless glibc wrappers'
// frames between the stack pointer and the first frame record.
inline constexpr uint32_t kDefaultLeafStackSize = 512;

// Both 0 for plain frame pointers.
struct CallgraphChoice {
  uint32_t dwarf_stack_size = 0;
  uint32_t leaf_stack_size = 0;
};

// "fp" -> frame pointers; "fp+cfi" -> leaf stack 512, "fp+cfi,BYTES";
// "dwarf" -> 8192, "dwarf,BYTES": BYTES a multiple of 8 from 8 to 65528 (the
// most perf_event_open accepts). InvalidArgument naming the flag otherwise.
absl::StatusOr<CallgraphChoice> ParseCallgraph(absl::string_view value);

// The -callgraph value a recording was taken with, as ParseCallgraph reads
// it: `walker` is the header's "fp", "fp+cfi" or "dwarf", `stack_bytes` its
// user_stack_size ("fp+cfi,512", "dwarf,8192"; "fp" alone, or the walker
// alone when the size is unknown).
std::string CallgraphSpelling(absl::string_view walker, uint32_t stack_bytes);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_CALLGRAPH_CHOICE_H_
