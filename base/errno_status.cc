#include "base/errno_status.h"

namespace profcpu::base {

absl::Status ErrnoStatus(int error_number, absl::string_view context) {
  // absl::ErrnoToStatus appends ": strerror(error_number)" itself.
  return absl::ErrnoToStatus(error_number, context);
}

}  // namespace profcpu::base
