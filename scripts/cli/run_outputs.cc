#include "scripts/cli/run_outputs.h"

#include <cmath>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "fold/perf_script_writer.h"
#include "fold/perfview_gaps.h"
#include "render/pprof_writer.h"
#include "archive/archive.h"
#include "scripts/cli/graph_flags.h"
#include "scripts/cli/output_dir.h"

namespace profcpu::cli {
namespace {

absl::Status ReadIds(const FlagSet& flags, absl::string_view flag, std::vector<uint32_t>* ids) {
  if (!flags.IsSet(flag)) return absl::OkStatus();
  const std::string value = flags.String(flag);
  for (absl::string_view part : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
    uint32_t id;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &id)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "-", flag, " takes ids separated by commas (e.g. 12,13), got '", value, "'"));
    }
    ids->push_back(id);
  }
  return absl::OkStatus();
}

absl::Status ReadFormats(const std::string& list, RunOutputOptions* outputs) {
  for (absl::string_view format : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    format = absl::StripAsciiWhitespace(format);
    if (format == "pprof") {
      outputs->pprof = true;
    } else if (format == "perfview") {
      outputs->perfview = true;
    } else if (format == "html") {
      outputs->html = true;
    } else if (format == "no-html") {
      outputs->html = false;
    } else if (format == "svg" || format == "folded" || format == "perf-script") {
      // Always written.
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown -format '", format,
          "': expected pprof, perfview or no-html (flamegraph.svg, folded_stacks.out and "
          "perf_script.out are always written, profile.html unless no-html; speedscope opens "
          "perf_script.out as it is)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

void AddRunOutputFlags(FlagSet* flags) {
  flags->Add("format", "LIST", "",
             "extra outputs, comma-separated: pprof (profile.pb.gz, for go tool pprof and "
             "pprof-based services), perfview (NAME.trace.zip, perfcollect's layout); no-html "
             "skips profile.html (heatmap, flame graph and function table in one file that "
             "opens offline in a browser)");
  flags->Add("threads", "", "", "one tower per thread: root frames comm-PID/TID");
  AddGraphFlags(flags, GraphFlagStyle::kRun);
}

void AddFilterFlags(FlagSet* flags) {
  flags->Add("pid", "PIDS", "", "keep only samples of these processes (comma-separated)");
  flags->Add("tid", "TIDS", "", "keep only samples of these threads (comma-separated)");
  flags->Add("comm", "NAMES", "", "keep only samples of threads with these names (comma-separated)");
  flags->Add("from", "SEC", "", "keep samples from SEC seconds after the start (a FlameScope "
             "range; not for -backend bpf runs without -timestamps)");
  flags->Add("to", "SEC", "", "keep samples before SEC seconds after the start");
  flags->Add("no-idle", "", "", "drop samples in the kernel's idle loop");
}

absl::Status ReadRunOutputFlags(const FlagSet& flags, RunOutputOptions* outputs) {
  PROFCPU_RETURN_IF_ERROR(ReadFormats(flags.String("format"), outputs));
  outputs->threads = flags.Bool("threads");
  // Check the graph flags now, not after a 30 s profile.
  render::FlameGraphOptions check;
  PROFCPU_RETURN_IF_ERROR(ReadGraphFlags(flags, &check));
  outputs->graph_flags = std::make_shared<const FlagSet>(flags);
  return absl::OkStatus();
}

absl::Status ReadFilterFlags(const FlagSet& flags, fold::ProfileFilter* filter_out) {
  fold::ProfileFilter& filter = *filter_out;
  PROFCPU_RETURN_IF_ERROR(ReadIds(flags, "pid", &filter.pids));
  PROFCPU_RETURN_IF_ERROR(ReadIds(flags, "tid", &filter.tids));
  if (flags.IsSet("comm")) {
    for (absl::string_view name : absl::StrSplit(flags.String("comm"), ',', absl::SkipEmpty())) {
      filter.comms.emplace_back(name);
    }
  }
  for (const char* flag : {"from", "to"}) {
    if (!flags.IsSet(flag)) continue;
    double seconds;
    PROFCPU_RETURN_IF_ERROR(flags.Seconds(flag, &seconds));
    (flag[0] == 'f' ? filter.from_s : filter.to_s) = seconds;
  }
  if (filter.from_s && filter.to_s && *filter.to_s <= *filter.from_s) {
    return absl::InvalidArgumentError(absl::StrCat("-to ", *filter.to_s,
                                                   " must be after -from ", *filter.from_s));
  }
  filter.no_idle = flags.Bool("no-idle");
  return absl::OkStatus();
}

absl::Status ApplyGraphFlags(const RunOutputOptions& outputs, render::FlameGraphOptions* graph) {
  if (outputs.graph_flags == nullptr) return absl::OkStatus();
  return ReadGraphFlags(*outputs.graph_flags, graph);
}

std::string PerfViewArchiveName(const std::string& dir) {
  absl::string_view name = dir;
  while (absl::ConsumeSuffix(&name, "/")) {
  }
  const size_t slash = name.rfind('/');
  if (slash != absl::string_view::npos) name.remove_prefix(slash + 1);
  if (name.empty() || name == "." || name == "..") name = "profcpu";
  return absl::StrCat(name, ".trace.zip");
}

absl::Status WriteExports(const RunOutputOptions& outputs, const std::string& dir,
                          const fold::RecordingSummary& summary, const fold::Profile& profile,
                          const std::vector<fold::PerfScriptEvent>& runtime_events,
                          base::RunLog* log, std::vector<std::string>* written) {
  if (outputs.pprof) {
    PROFCPU_RETURN_IF_ERROR(render::WritePprofFile(profile, render::PprofOptionsFor(summary),
                                                   absl::StrCat(dir, "/", kPprofFile)));
    written->push_back(kPprofFile);
    log->Info(absl::StrCat("wrote ", kPprofFile, " (go tool pprof -http=: ", kPprofFile, ")"));
  }
  if (outputs.perfview) {
    // perfcollect zips NAME.trace/ holding perf.data.txt, the perf script
    // text PerfView parses (its first entry ending in .data.txt). Not
    // perf_script.out as it is: PerfView weighs samples by time, not period,
    // and misreads perf-map frames (fold/perfview_gaps.h, FrameDialect).
    const std::string zip_name = PerfViewArchiveName(dir);
    const std::string folder = zip_name.substr(0, zip_name.size() - 4);  // NAME.trace
    const std::string text = absl::StrCat(dir, "/.", folder, ".perf.data.txt.tmp");
    fold::PerfScriptWriteOptions options{fold::PerfScriptHeaderFor(summary)};
    options.perfview_spacing_ns = fold::PerfViewSampleSpacingNs(summary.header);
    options.events = runtime_events;
    options.header->extra.push_back(
        {"for PerfView", "'unprofiled' (pid 0) samples end each sample's time one interval "
                         "later on its CPU (PerfView weighs samples by time, not period)"});
    absl::Status status = fold::WritePerfScriptFile(profile, options, text);
    if (status.ok()) {
      status = archive::WriteArchive(absl::StrCat(dir, "/", zip_name), archive::ArchiveFormat::kZip,
                            {{absl::StrCat(folder, "/perf.data.txt"), text}});
    }
    std::remove(text.c_str());
    PROFCPU_RETURN_IF_ERROR(status);
    written->push_back(zip_name);
    log->Info(absl::StrCat("wrote ", zip_name, " for PerfView"));
    if (summary.weighted) {
      // Entries that stand for several samples or for time off the CPU
      // (BPF counts, -mode offcpu|wall) weigh one interval each there.
      log->Warn(absl::StrCat("PerfView weighs every entry of ", zip_name,
                             " as one sample: with this recording's weighted entries (",
                             fold::ModeDescription(summary),
                             ") its shares are not folded_stacks.out's"));
    }
  }
  return absl::OkStatus();
}

}  // namespace profcpu::cli
