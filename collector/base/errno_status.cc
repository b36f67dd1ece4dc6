#include "collector/base/errno_status.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace profcpu::base {

absl::Status ErrnoStatus(int error_number, absl::string_view context) {
  return absl::ErrnoToStatus(error_number,
                             absl::StrCat(context, ": ", std::strerror(error_number)));
}

}  // namespace profcpu::base
