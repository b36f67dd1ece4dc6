#include "render/run_outputs.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/background_task.h"
#include "base/direct_file_writer.h"
#include "base/stage_times.h"
#include "base/status_macros.h"
#include "base/timed_tasks.h"
#include "fold/folded_writer.h"
#include "recording/run_folder.h"
#include "render/dotnet_event_outputs.h"
#include "render/flamegraph.h"
#include "render/perfview_export.h"
#include "render/pprof_writer.h"
#include "render/run_graph.h"
#include "render/run_page.h"

namespace profcpu::render {
namespace {

// -format pprof and perfview, from the profile perf_script.out was written
// from (and pprof files of the .NET event profiles).
absl::Status WriteExports(const RunOutputsInput& input, const RunOutputOptions& options,
                          const std::vector<const fold::DotnetEventProfile*>& event_profiles,
                          base::RunLog* log, std::vector<std::string>* written) {
  const fold::RecordingSummary& summary = *input.summary;
  if (options.pprof) {
    const PprofOptions pprof = PprofOptionsFor(summary);
    PROFCPU_RETURN_IF_ERROR(
        WritePprofFile(*input.profile, pprof, absl::StrCat(input.dir, "/", kPprofFile)));
    written->push_back(kPprofFile);
    log->Info(absl::StrCat("wrote ", kPprofFile, " (go tool pprof -http=: ", kPprofFile, ")"));
    const size_t before = written->size();
    PROFCPU_RETURN_IF_ERROR(WriteDotnetEventPprofs(input.dir, event_profiles, pprof, written));
    if (written->size() > before) {
      std::vector<std::string> names(written->begin() + before, written->end());
      log->Info(absl::StrCat("wrote ", absl::StrJoin(names, ", "), " (.NET events by stack)"));
    }
  }
  if (options.perfview) {
    PROFCPU_ASSIGN_OR_RETURN(std::string zip,
                             WritePerfViewExport(input.dir, summary, *input.profile, log));
    written->push_back(std::move(zip));
  }
  return absl::OkStatus();
}

// profile.html's switch: a view per .NET event profile with samples.
std::vector<PageSourceView> EventViews(
    const std::vector<const fold::DotnetEventProfile*>& event_profiles) {
  std::vector<PageSourceView> views;
  for (const fold::DotnetEventProfile* profile : event_profiles) {
    const DotnetEventOutput& output = DotnetEventOutputOf(profile->kind);
    views.push_back({&profile->profile, output.key, output.label, output.count_name,
                     output.description});
  }
  return views;
}

}  // namespace

absl::StatusOr<WrittenOutputs> WriteRunOutputs(const RunOutputsInput& input,
                                               const RunOutputOptions& options,
                                               base::StageTimes* times, base::RunLog* log) {
  const fold::RecordingSummary& summary = *input.summary;
  const fold::Profile& profile = *input.profile;
  auto path = [&input](const char* name) { return absl::StrCat(input.dir, "/", name); };
  WrittenOutputs written;
  const std::vector<const fold::DotnetEventProfile*> event_profiles =
      DotnetProfilesWithSamples(input.dotnet_event_profiles);
  fold::FoldOptions fold_options;
  fold_options.weight_by_period = summary.weighted;  // BPF counts, off-CPU time
  fold_options.include_tid = options.threads;
  // Tiers and anonymous-namespace functions stay in profcpu's own outputs
  // (-strip-tiers took tiers out of the names already); `profcpu fold` keeps
  // stackcollapse-perf.pl's tidying.
  fold_options.keep_dotnet_tiers = fold_options.keep_anonymous_namespaces = true;
  fold_options.threads = base::WorkerThreads();  // sorting and printing the stacks split
  fold::PerfScriptWriteOptions script_options;
  script_options.header = fold::PerfScriptHeaderFor(summary);
  base::BackgroundTask script_writer([&] {
    return fold::WritePerfScriptFile(profile, script_options, path(recording::kPerfScriptFile));
  });
  FlameGraphOptions graph = DefaultGraphOptions(summary.mode, summary.microseconds,
                                                summary.header.target);
  PROFCPU_RETURN_IF_ERROR(ApplyGraphOverrides(options.graph, &graph));
  // Palettes that colour by annotation need the stacks folded with them.
  const fold::FoldOptions graph_fold = GraphFoldOptions(fold_options, graph.palette);
  std::optional<base::BackgroundTask> page_writer;
  PageWriteTimes page_times;
  if (options.html) {
    page_writer.emplace([&] {
      PageSource page;
      page.summary = &summary;
      page.fold = graph_fold;
      page.graph = graph;
      page.events = input.page_events;
      page.generator = input.generator;
      page.views = EventViews(event_profiles);
      return WriteProfilePage(profile, page, path(kProfilePageFile), &page_times);
    });
  }

  // One pass over the samples serves folded_stacks.out and the graph's stacks.
  const double folded_start = base::MonotonicSeconds();
  const double folded_start_cpu = base::ThreadCpuSeconds();
  const fold::StackCounts counts = fold::CountStacks(profile, fold_options);
  base::ParallelStage folded_stage;
  folded_stage.serial = base::ThreadCpuSeconds() - folded_start_cpu;  // the count did not split
  const fold::FoldedProfile folded = fold::FoldCounts(profile, counts, fold_options, &folded_stage);
  PROFCPU_RETURN_IF_ERROR(fold::WriteFoldedFile(folded, path(recording::kFoldedFile),
                                                fold_options.threads, &folded_stage));
  times->Done("folded");
  if (fold_options.threads > 1) {
    folded_stage.wall = base::MonotonicSeconds() - folded_start;
    log->Info(base::ParallelStageLine("folded", folded_stage));
  }
  std::optional<fold::FoldedProfile> annotated;
  if (graph_fold.annotate_kernel) annotated = fold::FoldCounts(profile, counts, graph_fold);
  PROFCPU_ASSIGN_OR_RETURN(std::string svg, RenderFlameGraph(annotated ? *annotated : folded, graph));
  // Around the page cache, as perf_script.out (base/direct_file_writer.h):
  // deep stacks make a graph of tens of megabytes.
  PROFCPU_RETURN_IF_ERROR(base::WriteFileDirect(path(recording::kFlameGraphFile), svg));
  times->Done("svg");
  for (const char* name :
       {recording::kFoldedFile, recording::kPerfScriptFile, recording::kFlameGraphFile}) {
    written.files.push_back(name);
  }
  // The .NET event profiles' folded stacks, named as folded_stacks.out.
  PROFCPU_RETURN_IF_ERROR(
      WriteDotnetEventStacks(input.dir, event_profiles, fold_options, &written.files));
  if (!event_profiles.empty()) times->Done("dotnet event stacks");
  // What the other two took beyond the folded stacks and the graph:
  if (page_writer.has_value()) {
    PROFCPU_RETURN_IF_ERROR(page_writer->Wait());
    written.files.push_back(kProfilePageFile);
    times->Done("html wait");
    log->Info(ParallelPageLine(page_times));
  }
  PROFCPU_RETURN_IF_ERROR(script_writer.Wait());
  times->Done("perf_script wait");

  PROFCPU_RETURN_IF_ERROR(WriteExports(input, options, event_profiles, log, &written.exports));
  written.files.insert(written.files.end(), written.exports.begin(), written.exports.end());
  times->Done("exports");
  return written;
}

}  // namespace profcpu::render
