// Reading `perf script` text (from perf or from profcpu's writer), one line at
// a time, the way stackcollapse-perf.pl (FlameGraph commit 41fee1f) reads it.
//
// The script classifies each line with backtracking regular expressions; the
// parsers here compute the same captures in one or two linear passes, so a
// line is classified exactly as the script would, garbage included:
//   '#' first             comment (skipped)
//   empty                 end of a sample
//   /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/                  sample header
//     and, for period and event, /:\s*(\d+)*\s+(\S+):\s*$/
//   /^\s*(\w+)\s*(.+) \((.*)\)/                      frame: pc, symbol, module
//   anything else         unrecognized (the script warns and goes on)
#ifndef PROFCPU_FOLD_PERF_SCRIPT_READER_H_
#define PROFCPU_FOLD_PERF_SCRIPT_READER_H_

#include "absl/strings/string_view.h"

namespace profcpu::fold {

// A sample header as the script sees it. Views into the line.
struct HeaderLine {
  absl::string_view comm;    // at least two bytes; may hold spaces ("V8 WorkerThread")
  absl::string_view pid;     // "?" when the line shows only one id (it is the tid)
  absl::string_view tid;
  bool has_event = false;    // the line ends in "[period] event:"
  absl::string_view period;  // digits; empty when absent (the script then counts 1)
  absl::string_view event;   // e.g. "cpu-clock", "cycles:u"; set when has_event
};

// A frame line. Views into the line.
struct FrameLine {
  absl::string_view pc;      // the address as printed (hex, but any \w run)
  absl::string_view symbol;  // "func+0x1b", "[unknown]", "a->b", ...
  absl::string_view module;  // what is inside the last "(...)"
};

// Parses a header line; false if the script would not take it for one.
bool ParseHeaderLine(absl::string_view line, HeaderLine* header);

// Parses the "[period] event:" end of a header line (the script's second
// regex); false if it does not match.
bool ParseHeaderEvent(absl::string_view line, absl::string_view* period,
                      absl::string_view* event);

// Parses a frame line; false if the script would not take it for one.
bool ParseFrameLine(absl::string_view line, FrameLine* frame);

enum class LineKind { kComment, kBlank, kHeader, kFrame, kUnrecognized };

// Classifies a line (without its '\n') in the script's order, filling
// `header` or `frame` for the kinds that have fields.
LineKind ClassifyLine(absl::string_view line, HeaderLine* header, FrameLine* frame);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PERF_SCRIPT_READER_H_
