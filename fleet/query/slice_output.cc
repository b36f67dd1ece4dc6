#include "fleet/query/slice_output.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "base/status_macros.h"
#include "fold/folded_diff.h"
#include "fold/folded_writer.h"
#include "render/flamegraph.h"
#include "render/pprof_writer.h"
#include "render/profile_page_data.h"
#include "render/profile_page_writer.h"

namespace profcpu::fleet {
namespace {

constexpr absl::string_view kExtensions[] = {".html", ".svg", ".folded", ".pb.gz"};

fold::FoldOptions SliceFoldOptions() {
  fold::FoldOptions options;
  options.weight_by_period = true;  // a sample's period is the store's count
  options.keep_dotnet_tiers = options.keep_anonymous_namespaces = true;
  return options;
}

render::FlameGraphOptions GraphOptions(const SliceOutputInfo& info) {
  render::FlameGraphOptions options;
  options.title = info.title;
  options.subtitle = info.subtitle;
  options.count_name = "samples";
  return options;
}

absl::Status WritePage(const fold::Profile& profile, const SliceOutputInfo& info,
                       const std::string& path) {
  render::PageDataOptions options;
  options.fold = SliceFoldOptions();
  options.start_ns = static_cast<uint64_t>(info.axis.from) * 1000000000;
  render::PageMeta meta;
  meta.title = info.title;
  meta.subtitle = info.subtitle;
  meta.start_realtime_ns = static_cast<int64_t>(info.axis.from) * 1000000000;
  meta.duration_s = static_cast<double>(info.axis.seconds());
  meta.time_resolution_s = static_cast<double>(info.bucket_seconds);
  meta.generator = info.generator;
  meta.view = info.page_view;
  PROFCPU_ASSIGN_OR_RETURN(std::string page,
                           render::RenderProfilePage(render::BuildPageData(profile, options), meta));
  return base::WriteFile(path, page);
}

absl::Status WritePprof(const fold::Profile& profile, const SliceOutputInfo& info,
                        const std::string& path) {
  render::PprofOptions options;
  options.periods_are_samples = true;  // each period is a count of samples
  options.start_unix_ns = static_cast<int64_t>(info.axis.from) * 1000000000;
  options.duration_ns = static_cast<int64_t>(info.axis.seconds()) * 1000000000;
  options.comments = {absl::StrCat(info.title, ": ", info.subtitle), info.generator};
  return render::WritePprofFile(profile, options, path);
}

absl::Status WriteGraph(const fold::FoldedProfile& folded, const SliceOutputInfo& info,
                        const std::string& path) {
  PROFCPU_ASSIGN_OR_RETURN(std::string svg, render::RenderFlameGraph(folded, GraphOptions(info)));
  return base::WriteFile(path, svg);
}

}  // namespace

absl::StatusOr<OutputKind> OutputKindFor(absl::string_view path) {
  if (absl::EndsWith(path, ".html")) return OutputKind::kHtml;
  if (absl::EndsWith(path, ".svg")) return OutputKind::kSvg;
  if (absl::EndsWith(path, ".folded")) return OutputKind::kFolded;
  if (absl::EndsWith(path, ".pb.gz")) return OutputKind::kPprof;
  return absl::InvalidArgumentError(absl::StrCat(
      "-o ", path, ": the extension says what to write: .html, .svg, .folded or .pb.gz"));
}

std::string PathForValue(absl::string_view path, absl::string_view value) {
  absl::string_view extension;
  for (absl::string_view candidate : kExtensions) {
    if (absl::EndsWith(path, candidate)) extension = candidate;
  }
  absl::string_view stem = path.substr(0, path.size() - extension.size());
  std::string safe;
  for (char c : value.substr(0, 200)) {
    safe.push_back(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                           c == '-'
                       ? c
                       : '_');
  }
  // "." and ".." alone would name folders; a leading dot would hide the file.
  if (safe.empty()) safe = "_empty";
  if (safe[0] == '.') safe[0] = '_';
  return absl::StrCat(stem, ".", safe, extension);
}

absl::Status WriteSliceOutput(const fold::Profile& profile, const SliceOutputInfo& info,
                              const std::string& path) {
  PROFCPU_ASSIGN_OR_RETURN(OutputKind kind, OutputKindFor(path));
  switch (kind) {
    case OutputKind::kHtml:
      return WritePage(profile, info, path);
    case OutputKind::kPprof:
      return WritePprof(profile, info, path);
    case OutputKind::kSvg:
      return WriteGraph(fold::FoldProfile(profile, SliceFoldOptions()), info, path);
    case OutputKind::kFolded:
      return fold::WriteFoldedFile(fold::FoldProfile(profile, SliceFoldOptions()), path);
  }
  return absl::InternalError("unreachable");
}

absl::Status WriteDiffOutput(const fold::Profile& baseline, const fold::Profile& profile,
                             const SliceOutputInfo& info, const std::string& path) {
  PROFCPU_ASSIGN_OR_RETURN(OutputKind kind, OutputKindFor(path));
  if (kind == OutputKind::kPprof) {
    return absl::InvalidArgumentError(
        "a differential view has no pprof form (pprof holds one profile): write .svg, .folded "
        "or (for -diff FROM..TO) .html, or run the two slices to .pb.gz and pprof -diff_base");
  }
  if (kind == OutputKind::kHtml) {
    return absl::InvalidArgumentError(
        "-diff-where compares two filters over the same time, which the page's time axis "
        "cannot tell apart: write .svg (a differential flame graph) or .folded");
  }
  fold::FoldedProfile diff = fold::DiffFolded(fold::FoldProfile(baseline, SliceFoldOptions()),
                                              fold::FoldProfile(profile, SliceFoldOptions()));
  if (kind == OutputKind::kFolded) return fold::WriteFoldedFile(diff, path);
  return WriteGraph(diff, info, path);
}

}  // namespace profcpu::fleet
