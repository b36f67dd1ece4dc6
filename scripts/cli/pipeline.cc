#include "scripts/cli/pipeline.h"

#include <sys/stat.h>

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "collector/base/file_io.h"
#include "collector/base/status_macros.h"
#include "collector/recording/recording_reader.h"
#include "fold/folded_writer.h"
#include "fold/perf_script_writer.h"
#include "fold/probe_frames.h"
#include "render/flamegraph.h"
#include "scripts/cli/output_dir.h"
#include "scripts/cli/jit_files.h"
#include "scripts/cli/stack_unwinding.h"
#include "symbolize/dotnet_names.h"
#include "symbolize/jit_sources.h"
#include "symbolize/symbol_snapshot.h"

namespace profcpu::cli {
namespace {

// A snapshot bigger than this is not one profcpu wrote.
constexpr size_t kMaxSnapshotBytes = 1ull << 30;

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Loads the folder's snapshot into `table` if it matches this recording, and
// what it learned about each module (build-id, load layout) into `modules`.
void LoadSnapshot(const std::string& path, std::vector<symbolize::Module>* modules_out,
                  symbolize::SymbolTable* table, RunLog* log) {
  const std::vector<symbolize::Module>& modules = *modules_out;
  if (!FileExists(path)) return;
  auto bytes = base::ReadFileBounded(path, kMaxSnapshotBytes);
  symbolize::SymbolTable loaded;
  std::vector<symbolize::Module> snapshot_modules;
  absl::Status status = bytes.ok() ? symbolize::ParseSnapshot(*bytes, &loaded, &snapshot_modules)
                                   : bytes.status();
  if (!status.ok()) {
    log->Warn(absl::StrCat("ignoring symbol snapshot ", path, ": ", status.message()));
    return;
  }
  // Module ids are positions in replay order, so a snapshot of this same
  // recording lists the same modules in the same order.
  bool same = snapshot_modules.size() == modules.size();
  for (size_t i = 0; same && i < modules.size(); ++i) {
    same = snapshot_modules[i].path == modules[i].path;
  }
  if (!same) {
    log->Warn(absl::StrCat("ignoring symbol snapshot ", path, ": it belongs to another recording"));
    return;
  }
  *table = std::move(loaded);
  for (size_t i = 0; i < modules.size(); ++i) {
    symbolize::Module& module = (*modules_out)[i];
    if (module.build_id.empty()) module.build_id = snapshot_modules[i].build_id;
    if (module.segments.empty()) module.segments = snapshot_modules[i].segments;
  }
  log->Info(absl::StrCat("loaded ", table->size(), " symbolized locations from ", path));
}

}  // namespace

std::string ModeDescription(const fold::RecordingSummary& summary) {
  const recording::Header& h = summary.header;
  std::string sampling = absl::StrCat(h.event_name, ", ", h.sample_rate,
                                      h.frequency_mode ? " Hz" : " period");
  if (summary.mode == "offcpu") {
    return "offcpu-time (sched_switch, BPF): period = microseconds off the CPU, stamped when "
           "the thread blocked";
  }
  std::string counted = h.backend == "bpf" ? ", BPF backend" : "";
  if (summary.mode == "wall") {
    return absl::StrCat("wall-time: on-CPU samples (", sampling, counted,
                        ") under [on-cpu] and off-CPU time (sched_switch, BPF) under [off-cpu]; "
                        "period = microseconds");
  }
  if (h.backend == "bpf") {
    return absl::StrCat(sampling, ", BPF backend: period = samples; without -timestamps "
                        "stacks are counted in the kernel and each entry sums one second");
  }
  return sampling;
}

std::string LocalBootId() {
  auto text = base::ReadFileBounded("/proc/sys/kernel/random/boot_id", 128);
  return text.ok() ? std::string(absl::StripAsciiWhitespace(*text)) : "";
}

absl::StatusOr<PipelineResult> RebuildOutputs(const PipelineOptions& options, RunLog* log) {
  const std::string& dir = options.dir;
  PROFCPU_ASSIGN_OR_RETURN(auto reader,
                           recording::RecordingReader::Open(absl::StrCat(dir, "/", kRecordingFile)));
  // JIT files are read from the run folder's copies (made from the target's
  // root on first use), by the replay for generations and by the symbolizer
  // for names: the same bytes wherever the pipeline runs.
  ArchivedJitFiles jit_files(dir, options.files, log);
  symbolize::JitSources jit(&jit_files, options.files);
  // -callgraph dwarf stacks: unwound here from the target's files and saved,
  // or replayed from what was saved (stack_unwinding.h).
  RunUnwinder unwinder(dir, options.files, options.symbol_dirs, log);
  fold::BuildOptions build_options;
  build_options.jit = &jit;
  build_options.unwinder = unwinder.get();
  PROFCPU_ASSIGN_OR_RETURN(fold::BuiltProfile built, fold::BuildProfile(*reader, build_options));
  unwinder.Finish(built.summary, log);
  PipelineResult result;
  result.summary = built.summary;
  fold::Profile& profile = built.profile;
  if (built.summary.file_truncated) {
    log->Warn("the recording ends early (profcpu was stopped abruptly or the disk filled); "
              "using everything up to its last complete record");
  }
  log->Info(absl::StrCat("replayed ", built.summary.samples, " samples, ",
                         built.requests.size(), " distinct code locations, ",
                         built.modules.size(), " modules"));

  std::string snapshot_path = absl::StrCat(dir, "/", kSymbolsFile);
  LoadSnapshot(snapshot_path, &built.modules, &profile.symbols(), log);

  symbolize::SymbolizerOptions symbolizer_options;
  symbolizer_options.use_local_kallsyms =
      !built.summary.header.boot_id.empty() && built.summary.header.boot_id == LocalBootId();
  symbolizer_options.symbol_dirs = options.symbol_dirs;
  // With new symbol directories, frames the snapshot left unknown get another try.
  symbolizer_options.retry_unknown_native = !options.symbol_dirs.empty();
  symbolize::Symbolizer symbolizer(symbolizer_options, options.files, &built.modules, &jit);
  symbolizer.Resolve(built.requests, &profile.symbols(), &result.symbols);
  for (const std::string& loaded : jit.Loaded()) log->Info(absl::StrCat("JIT symbols from ", loaded));
  result.jit_files = ListJitFiles(dir);
  for (const std::string& note : result.symbols.notes) log->Info(note);
  for (const std::string& warning : result.symbols.warnings) log->Warn(warning);
  log->Info(absl::StrCat("symbolized ", result.symbols.requested, " new locations: ",
                         result.symbols.resolved, " named, ", result.symbols.unknown, " unknown"));
  result.unknown_frames = CountUnknownFrames(profile);
  LogUnknownFrames(result.unknown_frames, log);

  absl::flat_hash_set<uint32_t> jit_pids;
  for (const auto& request : built.requests) {
    if (request.location.kind == symbolize::CodeKind::kProcess) {
      jit_pids.insert(request.location.space);
    }
  }
  result.jit_pids.assign(jit_pids.begin(), jit_pids.end());
  std::sort(result.jit_pids.begin(), result.jit_pids.end());

  auto write = [&](const char* name, absl::string_view contents) -> absl::Status {
    PROFCPU_RETURN_IF_ERROR(base::WriteFile(absl::StrCat(dir, "/", name), contents));
    result.files_written.push_back(name);
    return absl::OkStatus();
  };
  PROFCPU_RETURN_IF_ERROR(
      write(kSymbolsFile, symbolize::SerializeSnapshot(profile.symbols(), built.modules)));
  // The snapshot keeps the runtime's names whole; the outputs may drop the
  // .NET tier annotations.
  if (options.strip_tiers) {
    size_t stripped = symbolize::StripTierSuffixes(&profile.symbols());
    log->Info(absl::StrCat("-strip-tiers: removed the tier annotation from ", stripped,
                           " JIT frame names"));
  }

  // Off-CPU stacks end where the thread slept, not in the probe that saw it.
  if (built.summary.mode != "cpu") {
    const uint64_t trimmed = fold::TrimProbeFrames(built.summary.mode == "offcpu", &profile);
    if (trimmed > 0) {
      log->Info(absl::StrCat("dropped the scheduler probe's frames from ", trimmed,
                             " off-CPU stacks"));
    }
  }

  // postprocess -pid/-tid/-comm/-from/-to/-no-idle: every output below shows
  // the samples kept (the snapshot above stays whole).
  if (!options.outputs.filter.empty()) {
    fold::ProfileFilter filter = options.outputs.filter;
    filter.start_ns = built.summary.header.start_time_ns;
    const fold::ProfileFilterStats kept = fold::FilterProfile(filter, &profile);
    log->Info(absl::StrCat("filters kept ", kept.kept, " samples of ", kept.kept + kept.dropped));
    if (kept.kept == 0) log->Warn("the filters kept no sample: the outputs are empty");
  }

  // BPF counts and off-CPU time are weights carried as periods.
  fold::FoldOptions fold_options;
  fold_options.weight_by_period = built.summary.weighted;
  fold_options.include_tid = options.outputs.threads;
  fold::FoldedProfile folded = fold::FoldProfile(profile, fold_options);
  PROFCPU_RETURN_IF_ERROR(write(kFoldedFile, fold::FormatFolded(folded)));

  const recording::Header& header = built.summary.header;
  fold::PerfScriptHeader script_header;
  script_header.profcpu_version = header.profcpu_version;
  script_header.target = header.target;
  script_header.event = ModeDescription(built.summary);
  script_header.samples = built.summary.samples;
  script_header.losses = {{"ring buffer full", built.summary.lost_ring_buffer},
                          {"dropped by the kernel", built.summary.lost_dropped},
                          {"truncated stacks", built.summary.truncated_stacks}};
  if (built.summary.header.backend == "bpf" || built.summary.mode != "cpu") {
    script_header.losses.push_back({"BPF ring buffer full", built.summary.lost_bpf_ring_buffer});
    script_header.losses.push_back({"stacks lost (BPF stack map)", built.summary.lost_stacks});
    script_header.losses.push_back({"BPF map full", built.summary.lost_bpf_map_full});
    script_header.losses.push_back(
        {"off-CPU stays never ended", built.summary.lost_offcpu_unended});
  }
  script_header.extra = {{"hostname", header.hostname}, {"os release", header.kernel_release}};
  fold::PerfScriptWriteOptions script_options;
  script_options.header = script_header;
  PROFCPU_RETURN_IF_ERROR(fold::WritePerfScriptFile(profile, script_options,
                                                    absl::StrCat(dir, "/", kPerfScriptFile)));
  result.files_written.push_back(kPerfScriptFile);

  render::FlameGraphOptions graph;
  graph.title = "CPU Flame Graph";
  if (built.summary.mode == "offcpu") {
    // Cool colours say "not running", as Brendan Gregg's off-CPU graphs do.
    graph.title = "Off-CPU Time Flame Graph";
    graph.palette = render::Palette::kBlue;
  } else if (built.summary.mode == "wall") {
    graph.title = "Wall-Clock Time Flame Graph ([on-cpu] and [off-cpu])";
    graph.cool_subtree = fold::kOffCpuFrame;  // waiting in blue, running in the palette's warm hues
  }
  if (built.summary.microseconds) graph.count_name = "microseconds";
  graph.subtitle = built.summary.header.target;
  PROFCPU_RETURN_IF_ERROR(ApplyGraphFlags(options.outputs, &graph));
  // Palettes that colour by annotation need the stacks folded with them.
  const fold::FoldOptions graph_fold = GraphFoldOptions(fold_options, graph.palette);
  const fold::FoldedProfile annotated =
      graph_fold.annotate_kernel ? fold::FoldProfile(profile, graph_fold) : fold::FoldedProfile();
  PROFCPU_ASSIGN_OR_RETURN(
      std::string svg,
      render::RenderFlameGraph(graph_fold.annotate_kernel ? annotated : folded, graph));
  PROFCPU_RETURN_IF_ERROR(write(kFlameGraphFile, svg));

  PROFCPU_RETURN_IF_ERROR(WriteExports(options.outputs, dir, built, log, &result.exports));
  result.files_written.insert(result.files_written.end(), result.exports.begin(),
                              result.exports.end());
  return result;
}

}  // namespace profcpu::cli
