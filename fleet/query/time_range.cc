#include "fleet/query/time_range.h"

#include <limits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace profcpu::fleet {
namespace {

// Ten years: far enough for any retention, small enough that no arithmetic
// on the result overflows.
constexpr int64_t kMaxRelativeSeconds = int64_t{10} * 366 * 86400;

absl::StatusOr<int64_t> ParseRelative(absl::string_view text, absl::Time now) {
  absl::string_view digits = text.substr(1, text.size() - 2);
  int64_t unit = 0;
  switch (text.back()) {
    case 's': unit = 1; break;
    case 'm': unit = 60; break;
    case 'h': unit = 3600; break;
    case 'd': unit = 86400; break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("time \"", text, "\": a relative time ends in s, m, h or d (-30m)"));
  }
  int64_t count = 0;
  if (digits.empty() || !absl::SimpleAtoi(digits, &count) || count <= 0 ||
      count > kMaxRelativeSeconds / unit) {
    return absl::InvalidArgumentError(
        absl::StrCat("time \"", text, "\": expected -N", text.substr(text.size() - 1),
                     " with N a positive whole number (at most ten years)"));
  }
  return absl::ToUnixSeconds(now) - count * unit;
}

}  // namespace

absl::StatusOr<int64_t> ParseTimePoint(absl::string_view text, absl::Time now) {
  text = absl::StripAsciiWhitespace(text);
  if (text == "now") return absl::ToUnixSeconds(now);
  if (text.size() >= 3 && text.front() == '-') return ParseRelative(text, now);
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &time, &error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "time \"", text,
        "\": expected RFC 3339 (2026-11-27T14:02:00Z), now, or relative (-1h, -30m, -2d)"));
  }
  // Sub-second parts round down: the store keeps whole seconds.
  return absl::ToUnixSeconds(time);
}

absl::StatusOr<TimeRange> ParseTimeRange(absl::string_view from, absl::string_view to,
                                         absl::Time now) {
  absl::StatusOr<int64_t> start = ParseTimePoint(from, now);
  if (!start.ok()) return start.status();
  absl::StatusOr<int64_t> end = ParseTimePoint(to, now);
  if (!end.ok()) return end.status();
  if (*start >= *end) {
    return absl::InvalidArgumentError(absl::StrCat("time range ", FormatTimePoint(*start), " .. ",
                                                   FormatTimePoint(*end),
                                                   " is empty: the start must come before the end"));
  }
  return TimeRange{*start, *end};
}

absl::StatusOr<TimeRange> ParseTimeSpan(absl::string_view span, absl::Time now) {
  std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(span, absl::MaxSplits("..", 1));
  if (span.find("..") == absl::string_view::npos || parts.first.empty() || parts.second.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("time span \"", span, "\": expected FROM..TO (e.g. -2h..-1h)"));
  }
  return ParseTimeRange(parts.first, parts.second, now);
}

std::string FormatTimePoint(int64_t unix_seconds) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(unix_seconds),
                          absl::UTCTimeZone());
}

}  // namespace profcpu::fleet
