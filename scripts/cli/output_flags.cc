#include "scripts/cli/output_flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "scripts/cli/graph_flags.h"

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

absl::Status ReadFormats(const std::string& list, render::RunOutputOptions* outputs) {
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

absl::Status ReadRunOutputFlags(const FlagSet& flags, render::RunOutputOptions* outputs) {
  PROFCPU_RETURN_IF_ERROR(ReadFormats(flags.String("format"), outputs));
  outputs->threads = flags.Bool("threads");
  PROFCPU_ASSIGN_OR_RETURN(outputs->graph, ReadGraphFlags(flags));
  // Check the graph flags' ranges now, not after a 30 s profile.
  render::FlameGraphOptions check;
  return render::ApplyGraphOverrides(outputs->graph, &check);
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

}  // namespace profcpu::cli
