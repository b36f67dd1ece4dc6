// Writes a Profile as the text perf 6.1 prints with
//   perf script -F comm,pid,tid,cpu,time,period,event,ip,sym,symoff,dso
// so FlameScope, PerfView, speedscope and stackcollapse-perf.pl read it:
//
//   [# comment block]
//   comm   PID/TID   [CPU] SSSSS.UUUUUU:     PERIOD event: \n
//   \t    ADDRESS function+0xOFF (module)\n      one line per frame, leaf first
//   \n                                           after each sample
//
// Samples are written in the Profile's order (time order), streamed through
// an OutputBuffer. Names are sanitized as perf_script_format.h describes.
// The PerfView export is the same text in PerfView's dialect (below).
#ifndef PROFCPU_FOLD_PERF_SCRIPT_WRITER_H_
#define PROFCPU_FOLD_PERF_SCRIPT_WRITER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fold/output_buffer.h"
#include "fold/profile.h"

namespace profcpu::fold {

// What the optional "# key : value" block at the top says (perf --header
// style). Readers skip '#' lines; FlameScope needs the first other line to be
// a sample header, which the writer guarantees.
struct PerfScriptHeader {
  std::string profcpu_version;
  std::string target;  // e.g. "pid 42 (dotnet)"
  std::string event;   // e.g. "cpu-clock, 99 Hz"
  uint64_t samples = 0;
  std::vector<std::pair<std::string, uint64_t>> losses;  // reason, count
  std::vector<std::pair<std::string, std::string>> extra;
};

// A runtime's event beside the samples (a .NET GC pause or burst of
// exceptions, fold/dotnet_events_summary.h): a record of one
// frame naming it, at its time among the samples, with its own event name
// ("dotnet:gc"): FlameScope shows it in its time range (one sample of the
// frame), PerfView as the frame "dotnet-events!.NET ..." in its process (the
// PerfView export closes it one spacing later, as a sample, so it weighs
// that), and stackcollapse-perf.pl, which keeps the first event name it
// meets (a sample's), leaves it out.
struct PerfScriptEvent {
  uint64_t time_ns = 0;  // CLOCK_MONOTONIC, as samples
  uint32_t pid = 0;      // written as pid/pid, under that process's comm
  std::string event;     // "dotnet:gc", "dotnet:exceptions"
  std::string frame;     // "[.NET gen2 Induced GC, 3.1 ms paused]"
};
// The module of an event's frame line.
inline constexpr char kPerfScriptEventModule[] = "[dotnet-events]";

struct PerfScriptWriteOptions {
  std::optional<PerfScriptHeader> header;
  // In time order. Each is written before the first sample at or after its
  // time (period 1: a reader that sums periods weighs it as one sample); one
  // earlier than every sample is left out, as FlameScope takes the first
  // record's time as the start.
  std::vector<PerfScriptEvent> events;
  // Non-zero: the text for PerfView's reader (the -format perfview export),
  // not perf's: frames in FrameDialect::kPerfView (no offsets), and a filler
  // sample this long after each sample closes its time (perfview_gaps.h).
  // The fillers are "unprofiled 0/0" with the one frame kPerfViewGapFrame.
  uint64_t perfview_spacing_ns = 0;
};

// The filler's frame line: PerfView shows it as
// "profcpu!cpu time outside the profiled processes".
inline constexpr char kPerfViewGapFrame[] =
    "\t               0 [cpu time outside the profiled processes] ([profcpu])\n";

absl::Status WritePerfScript(const Profile& profile, const PerfScriptWriteOptions& options,
                             OutputBuffer* out);
absl::Status WritePerfScriptFile(const Profile& profile, const PerfScriptWriteOptions& options,
                                 const std::string& path);
std::string FormatPerfScript(const Profile& profile, const PerfScriptWriteOptions& options = {});

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PERF_SCRIPT_WRITER_H_
