// The pieces of perf script text profcpu writes, shared by the writer
// (perf_script_writer.h) and the Profile folder (folded_writer.h): the folder
// names frames from exactly the lines the writer prints, which is what makes
// folding a Profile and folding its perf script text agree.
//
// Names come from the target and may be hostile. perf prints them raw; we
// cannot, because every consumer is line-oriented and FlameScope also needs
// the file to be UTF-8 text (it opens it in text mode after libmagic calls it
// text/plain). So before printing:
//  - C0 control bytes, DEL and C1 controls (U+0080..U+009F) become '?': no
//    newline, carriage return or tab can split or shift a line;
//  - bytes that are not well-formed UTF-8 become '?', one per byte;
//  - modules have '(' and ')' turned into '[' and ']': every parser finds the
//    module after the line's last " (", so the module must not contain one;
//  - a comm that is empty or starts with ' ' or '#' gets '?' in its place (a
//    header line must start with a visible byte that is not a comment mark);
//  - event names have spaces turned into '_' (parsers take the event as one
//    token).
// Function names keep '(' and spaces: parsers split at the module's " (".
#ifndef PROFCPU_FOLD_PERF_SCRIPT_FORMAT_H_
#define PROFCPU_FOLD_PERF_SCRIPT_FORMAT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "fold/profile.h"
#include "symbolize/symbol_table.h"

namespace profcpu::fold {

// Appends `text` with control bytes and ill-formed UTF-8 replaced by '?'.
void AppendSanitized(absl::string_view text, std::string* out);

std::string SanitizeComm(absl::string_view comm);
std::string SanitizeModule(absl::string_view module);
std::string SanitizeEvent(absl::string_view event);

// The module printed for a location: the symbolizer's, else
// "[kernel.kallsyms]" for kernel addresses (as perf prints them), else
// "[unknown]". Sanitized.
std::string ModuleForLocation(const symbolize::Symbolization* symbolization,
                              const Location& location);

// Whose reader the frame lines are for.
enum class FrameDialect {
  // perf 6.1's own text (perf_script.out: FlameScope, the FlameGraph tools).
  kPerf,
  // PerfView's reader (TraceEvent's LinuxPerfScriptEventParser.ReadFrame),
  // for the -format perfview export. No "+0xOFFSET": perfcollect's perf
  // script prints none, and the reader strips one only from the name's end,
  // which a perf-map frame's name is not (below). A module ending in ".map"
  // makes the reader take the name's first " [X] " word as the module and
  // the rest as the function (.NET's perf-map names: "void [System.Runtime]
  // N.C::M()"); a name without one (V8's "JS:*fib /app/a.js:6:28") would
  // become module "a.js:6:28" and function "/tmp/perf-PID.map", so such
  // names get "[perf-PID.map] " in front.
  kPerfView,
};

// Appends the lines perf 6.1 prints for one stack location, innermost frame
// first, each "\t%16lx NAME+0xOFFSET (MODULE)\n". Inlined frames end in
// " (inlined)" instead of the module, as perf prints them; an unnamed
// location is "\t%16lx [unknown] (MODULE)\n". The offset printed is the
// frame's offset plus the location's offset_adjust.
void AppendFrameLines(const symbolize::SymbolTable& symbols, const Location& location,
                      std::string* out, FrameDialect dialect = FrameDialect::kPerf);

// Appends a sample header as perf 6.1 prints it with
// -F comm,pid,tid,cpu,time,period,event,...:
// "%s %5d/%-5d [%03d] %5lu.%06lu: %10lu %*s: \n". `comm` and `event` must be
// sanitized; `event_width` right-aligns event names as perf does when a file
// has several (the longest name's length).
// The header in three parts, for writers that keep the parts that repeat:
// "COMM %5d/%-5d [%03d] " (from the sample's pid, tid and cpu), the time
// "%5lu.%06lu", and ": %10lu %*s: \n" (period, event).
void AppendSampleThread(absl::string_view comm, const Sample& sample, std::string* out);
void AppendSampleTime(uint64_t time_ns, std::string* out);
void AppendSampleEvent(uint64_t period, absl::string_view event, int event_width,
                       std::string* out);
void AppendSampleHeader(absl::string_view comm, const Sample& sample, absl::string_view event,
                        int event_width, std::string* out);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PERF_SCRIPT_FORMAT_H_
