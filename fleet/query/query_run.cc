#include "fleet/query/query_run.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "fleet/query/slice_output.h"

namespace profcpu::fleet {
namespace {

LabelFilter WithValue(LabelFilter filter, const std::string& label, const std::string& value) {
  if (!label.empty()) filter.matchers.push_back({label, LabelMatcher::Op::kEqual, value});
  return filter;
}

absl::StatusOr<MergedSlice> FetchSlice(const Shards& shards, const SliceSource& source,
                                       const LabelFilter& filter, uint64_t max_stacks,
                                       int64_t bucket_seconds, StackNames* names) {
  SliceSpec spec;
  spec.source = source;
  spec.where_sql = filter.Sql();
  spec.max_stacks = max_stacks;
  spec.bucket_seconds = bucket_seconds;
  absl::StatusOr<MergedSlice> slice = QuerySlice(shards, spec);
  if (!slice.ok()) return slice.status();
  absl::Status named = QueryStackNames(shards, *slice, names);
  if (!named.ok()) return named;
  return slice;
}

std::string Describe(const TimeRange& range, const LabelFilter& filter) {
  std::string text = absl::StrCat(FormatTimePoint(range.from), " .. ", FormatTimePoint(range.to));
  if (!filter.matchers.empty()) absl::StrAppend(&text, ", ", filter.Text());
  return text;
}

bool Overlap(const TimeRange& a, const TimeRange& b) { return a.from < b.to && b.from < a.to; }

}  // namespace

absl::StatusOr<absl::Duration> ParseDurationText(absl::string_view text) {
  absl::StatusOr<int64_t> point = ParseTimePoint(absl::StrCat("-", text), absl::UnixEpoch());
  if (!point.ok() || text.empty() || text[0] == '-') {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\": expected a duration like 7d, 48h or 90m"));
  }
  return absl::Seconds(-*point);
}

absl::StatusOr<QueryReport> RunQuery(const Shards& shards, const QueryRequest& request) {
  absl::StatusOr<OutputKind> kind = OutputKindFor(request.output);
  if (!kind.ok()) return kind.status();
  const bool range_diff = request.diff_range.has_value();
  const bool diff = range_diff || request.diff_filter.has_value();
  const bool page = *kind == OutputKind::kHtml;
  if (diff && *kind == OutputKind::kPprof) {
    return absl::InvalidArgumentError(
        "a differential view has no pprof form (pprof holds one profile): write .html, .svg or "
        ".folded, or query each slice to .pb.gz and compare them with pprof -diff_base");
  }
  if (request.diff_filter && page) {
    return absl::InvalidArgumentError(
        "-diff-where compares two filters over the same time, which the page's time axis cannot "
        "tell apart: write .svg (a differential flame graph) or .folded");
  }
  if (range_diff && request.diff_filter) {
    return absl::InvalidArgumentError("give -diff or -diff-where, not both");
  }
  if (range_diff && page && Overlap(*request.diff_range, request.range)) {
    return absl::InvalidArgumentError(
        "-diff's range overlaps -from..-to: the page shows both on one time axis, so they must "
        "not overlap");
  }

  // The table and the bucket: chosen over everything the query reads, so a
  // baseline and its slice are read alike.
  TimeRange span = request.range;
  if (range_diff) {
    span.from = std::min(span.from, request.diff_range->from);
    span.to = std::max(span.to, request.diff_range->to);
  }
  QueryReport report;
  const SliceSource span_source = ChooseSliceSource(span, request.now, request.raw_keep);
  report.hourly = span_source.hourly;
  // Only the page draws a time axis; the other outputs need one bucket.
  // The page's answer has a row per (bucket, kept stack): buckets are
  // fewer when more stacks are kept, so it stays within kMaxPageCells.
  const int64_t max_buckets = std::clamp<int64_t>(
      static_cast<int64_t>(kMaxPageCells / (request.max_stacks + 1)), 60, 2000);
  report.bucket_seconds =
      page ? ChooseBucketSeconds(span_source.range, report.hourly, max_buckets) : 0;
  auto source_of = [&](const TimeRange& range) {
    return SliceSource{report.hourly, report.hourly ? WholeHours(range) : range};
  };
  report.read_range = source_of(request.range).range;

  std::vector<std::string> values = {""};
  if (!request.by_label.empty()) {
    absl::StatusOr<std::vector<LabelValue>> top =
        QueryLabelValues(shards, source_of(request.range), request.filter.Sql(), request.by_label,
                         request.top_values);
    if (!top.ok()) return top.status();
    values.clear();
    for (LabelValue& value : *top) values.push_back(std::move(value.value));
  }

  for (const std::string& value : values) {
    QueryOutput output;
    output.value = value;
    output.path = request.by_label.empty() ? request.output : PathForValue(request.output, value);
    const LabelFilter filter = WithValue(request.filter, request.by_label, value);
    StackNames names;
    absl::StatusOr<MergedSlice> slice =
        FetchSlice(shards, source_of(request.range), filter, request.max_stacks,
                   report.bucket_seconds, &names);
    if (!slice.ok()) return slice.status();
    output.samples = slice->total;
    output.other = slice->other.count;

    SliceOutputInfo info;
    info.generator = request.generator;
    info.bucket_seconds = std::max<int64_t>(1, report.bucket_seconds);
    info.axis = report.hourly ? source_of(span).range : span;
    info.subtitle = Describe(request.range, filter);
    if (!request.by_label.empty()) {
      info.title = absl::StrCat("Fleet CPU profile: ", request.by_label, "=", value);
    }
    absl::Status written;
    if (!diff) {
      fold::Profile profile = BuildSliceProfile({&*slice}, names, &output.names);
      written = WriteSliceOutput(profile, info, output.path);
    } else {
      const TimeRange baseline_range = range_diff ? *request.diff_range : request.range;
      const LabelFilter baseline_filter =
          request.diff_filter ? WithValue(*request.diff_filter, request.by_label, value) : filter;
      absl::StatusOr<MergedSlice> baseline =
          FetchSlice(shards, source_of(baseline_range), baseline_filter, request.max_stacks,
                     report.bucket_seconds, &names);
      if (!baseline.ok()) return baseline.status();
      output.baseline_samples = baseline->total;
      info.subtitle = absl::StrCat(info.subtitle, " against ",
                                   Describe(baseline_range, baseline_filter));
      if (page && range_diff) {
        // One page, both ranges on its time axis, opened in its
        // differential view (docs/profile-page.md: from/to, bfrom/bto).
        const TimeRange read = source_of(request.range).range;
        const TimeRange base = source_of(baseline_range).range;
        const int64_t zero = info.axis.from;
        info.page_view = absl::StrCat("from=", read.from - zero, "&to=", read.to - zero,
                                      "&bfrom=", base.from - zero, "&bto=", base.to - zero);
        fold::Profile both = BuildSliceProfile({&*baseline, &*slice}, names, &output.names);
        written = WriteSliceOutput(both, info, output.path);
      } else {
        SliceProfileStats ignored;
        fold::Profile before = BuildSliceProfile({&*baseline}, names, &ignored);
        fold::Profile after = BuildSliceProfile({&*slice}, names, &output.names);
        written = WriteDiffOutput(before, after, info, output.path);
      }
    }
    if (!written.ok()) {
      return absl::Status(written.code(), absl::StrCat(output.path, ": ", written.message()));
    }
    report.outputs.push_back(std::move(output));
  }
  return report;
}

}  // namespace profcpu::fleet
