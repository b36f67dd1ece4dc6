// Turns an errno value into an absl::Status whose message carries the context
// ("open /proc/42/maps") and the system's description of the error.
#ifndef PROFCPU_BASE_ERRNO_STATUS_H_
#define PROFCPU_BASE_ERRNO_STATUS_H_

#include "absl/strings/string_view.h"

#include "absl/status/status.h"

namespace profcpu::base {

absl::Status ErrnoStatus(int error_number, absl::string_view context);

}  // namespace profcpu::base

#endif  // PROFCPU_BASE_ERRNO_STATUS_H_
