// perf script text folded as stackcollapse-perf.pl folds it (fold/stackcollapse.h),
// read through LineReader. The text may be a user's or a hostile target's
// symbol names. Checks: folding from a string and from a file agree (LineReader
// refills at other boundaries), under the default and a tiny line limit, and
// every folded line is "stack count" with no newline inside.
#include "absl/strings/str_split.h"
#include "fold/line_reader.h"
#include "fold/stackcollapse.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace fold = profcpu::fold;

namespace {

std::string Collapse(fold::LineReader reader, const fold::StackCollapseOptions& options) {
  std::string text;
  fold::OutputBuffer out(&text);
  Check(fold::CollapsePerfScript(reader, options, &out).ok(), "folding failed");
  Check(out.Finish().ok(), "writing folded text to a string failed");
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text = profcpu::fuzz::AsText(data, size);
  fold::StackCollapseOptions plain;
  fold::StackCollapseOptions all;
  all.include_tid = true;
  all.annotate_kernel = all.annotate_jit = all.include_addrs = true;
  all.max_stack_bytes = 4096;
  for (const auto& options : {plain, all}) {
    for (size_t max_line : {fold::LineReader::kDefaultMaxLineBytes, size_t{64}}) {
      std::string from_string = Collapse(fold::LineReader::FromString(text, max_line), options);
      profcpu::fuzz::MemFile file(text);
      std::string from_file = Collapse(fold::LineReader::FromFd(file.Reopen(), max_line), options);
      Check(from_string == from_file, "folding a string and a file of the same bytes disagree");
      for (absl::string_view line : absl::StrSplit(from_string, '\n', absl::SkipEmpty())) {
        size_t space = line.rfind(' ');
        Check(space != absl::string_view::npos && space + 1 < line.size(),
              "a folded line has no count");
      }
      Check(from_string.empty() || from_string.back() == '\n', "folded output lacks its newline");
    }
  }
  return 0;
}
