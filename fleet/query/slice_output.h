// Writes a slice's Profile as FILE's extension says: .html (profile.html: the
// heatmap is the slice's time axis, one column per second from -from), .svg
// (flame graph), .folded (folded stacks), .pb.gz (pprof). Counts are the
// store's sample counts (the Profile's periods).
//
// Differential: two time ranges (-diff FROM..TO) give the page with the
// baseline and the slice on one time axis, opened in its differential view;
// two filters (-diff-where) have no time axis to tell them apart, so they
// give a differential flame graph (.svg, red grew, blue shrank) or
// difffolded.pl's three-column text (.folded). pprof holds one profile: no
// differential pprof.
#ifndef PROFCPU_FLEET_QUERY_SLICE_OUTPUT_H_
#define PROFCPU_FLEET_QUERY_SLICE_OUTPUT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fleet/query/time_range.h"
#include "fold/profile.h"

namespace profcpu::fleet {

enum class OutputKind { kHtml, kSvg, kFolded, kPprof };

absl::StatusOr<OutputKind> OutputKindFor(absl::string_view path);

// -by's file per value: "out/flame.svg", "api-1" -> "out/flame.api-1.svg"
// (bytes other than [A-Za-z0-9._-] as '_', so a value can name no other
// folder; an empty value as "_empty").
std::string PathForValue(absl::string_view path, absl::string_view value);

struct SliceOutputInfo {
  std::string title = "Fleet CPU profile";
  std::string subtitle;      // the slice: range, filter
  TimeRange axis;            // the page's time axis (the slice, or both ranges)
  int64_t bucket_seconds = 1;
  std::string generator;     // "profcpu VERSION"
  std::string page_view;     // the page's first view (PageMeta::view)
};

absl::Status WriteSliceOutput(const fold::Profile& profile, const SliceOutputInfo& info,
                              const std::string& path);

// A differential flame graph or folded text from two profiles (-diff-where,
// or -diff to .svg/.folded).
absl::Status WriteDiffOutput(const fold::Profile& baseline, const fold::Profile& profile,
                             const SliceOutputInfo& info, const std::string& path);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_QUERY_SLICE_OUTPUT_H_
