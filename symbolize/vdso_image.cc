#include "symbolize/vdso_image.h"

#include <sys/auxv.h>

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/file_io.h"
#include "symbolize/parse_hex.h"

namespace profcpu::symbolize {
namespace {

constexpr size_t kMaxMapsBytes = size_t{64} << 20;
constexpr uint64_t kMaxVdsoBytes = 1 << 20;  // x86-64's is 8 KiB

}  // namespace

absl::StatusOr<std::string> ReadOwnVdsoImage() {
  const uint64_t base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return absl::NotFoundError("this process has no vdso (AT_SYSINFO_EHDR is 0)");
  absl::StatusOr<std::string> maps = base::ReadFileBounded("/proc/self/maps", kMaxMapsBytes);
  if (!maps.ok()) return maps.status();
  // "START-END PERMS ..." (proc(5)); the vdso is one mapping starting at base.
  for (absl::string_view line : absl::StrSplit(*maps, '\n', absl::SkipEmpty())) {
    absl::string_view range = line.substr(0, line.find(' '));
    size_t dash = range.find('-');
    uint64_t start = 0, end = 0;
    if (dash == absl::string_view::npos || !ParseHex(range.substr(0, dash), &start) ||
        !ParseHex(range.substr(dash + 1), &end) || start != base) {
      continue;
    }
    if (end <= start || end - start > kMaxVdsoBytes) {
      return absl::FailedPreconditionError(
          absl::StrCat("vdso mapping ", range, " has an unexpected size"));
    }
    return std::string(reinterpret_cast<const char*>(start), end - start);
  }
  return absl::NotFoundError(
      absl::StrCat("vdso at 0x", absl::Hex(base), " is not in /proc/self/maps"));
}

}  // namespace profcpu::symbolize
