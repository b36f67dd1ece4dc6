// The vdso ("[vdso]" in a mapping list) is not a file: the kernel maps the
// same small ELF image into every process (vdso(7)). A sample in a target's
// vdso is resolved from the profiler's own copy, found through
// getauxval(AT_SYSINFO_EHDR) — valid only on the machine, and the boot, that
// the samples were taken on.
#ifndef PROFCPU_SYMBOLIZE_VDSO_IMAGE_H_
#define PROFCPU_SYMBOLIZE_VDSO_IMAGE_H_

#include <string>

#include "absl/status/statusor.h"

namespace profcpu::symbolize {

// A copy of this process's vdso mapping, bounds taken from /proc/self/maps.
// NotFound when the process has no vdso.
absl::StatusOr<std::string> ReadOwnVdsoImage();

}  // namespace profcpu::symbolize

#endif  // PROFCPU_SYMBOLIZE_VDSO_IMAGE_H_
