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
// Nothing but samples: FlameScope, speedscope, stackcollapse-perf.pl and
// PerfView count every record as one (whatever its event name), so a
// runtime's events (.NET GC pauses, exceptions) are not written here; they
// are on profile.html's lane, and PerfView opens dotnet/PID.nettrace itself.
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

struct PerfScriptWriteOptions {
  std::optional<PerfScriptHeader> header;
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
