// The time slice a query draws: `-from T -to T` and `-diff FROM..TO`, with T
// in RFC 3339 ("2026-11-27T14:02:00Z", any offset) or relative to now
// ("now", "-1h", "-30m", "-2d", "-90s"). Seconds are what the store keeps
// (samples_local.time is a DateTime), so bounds are whole seconds.
#ifndef PROFCPU_FLEET_QUERY_TIME_RANGE_H_
#define PROFCPU_FLEET_QUERY_TIME_RANGE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace profcpu::fleet {

// [from, to): unix seconds, from < to.
struct TimeRange {
  int64_t from = 0;
  int64_t to = 0;
  int64_t seconds() const { return to - from; }
};

// One bound: RFC 3339, "now", or "-N" + s|m|h|d (N > 0) before `now`.
absl::StatusOr<int64_t> ParseTimePoint(absl::string_view text, absl::Time now);

// -from and -to; fails unless from < to.
absl::StatusOr<TimeRange> ParseTimeRange(absl::string_view from, absl::string_view to,
                                         absl::Time now);

// "FROM..TO" (-diff's baseline).
absl::StatusOr<TimeRange> ParseTimeSpan(absl::string_view span, absl::Time now);

// "2026-11-27T14:02:00Z", for titles and messages.
std::string FormatTimePoint(int64_t unix_seconds);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_QUERY_TIME_RANGE_H_
