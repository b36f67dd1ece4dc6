// Which mappings hold JIT code, by the name perf (and /proc/PID/maps, as the
// collector synthesizes it) gives them. Shared by the collector, which tails
// the perf maps of processes that run such code, and the symbolizer, which
// names such code from those maps: both must agree on which processes count.
#ifndef PROFCPU_BASE_JIT_MAPPING_H_
#define PROFCPU_BASE_JIT_MAPPING_H_

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace profcpu::base {

// Executable memory with no file behind it: "//anon" (perf's name for
// anonymous memory), "/memfd:doublemapper (deleted)" (.NET 7+ maps its code
// twice, W^X), "[anon:NAME]" (named with PR_SET_VMA_ANON_NAME).
inline bool LooksLikeJitMapping(absl::string_view mapping_name) {
  return absl::StartsWith(mapping_name, "//anon") || absl::StartsWith(mapping_name, "/memfd:") ||
         absl::StartsWith(mapping_name, "[anon");
}

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_JIT_MAPPING_H_
