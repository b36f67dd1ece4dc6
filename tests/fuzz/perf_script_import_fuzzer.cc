// perf script text imported into a Profile (fold/perf_script_import.h), as
// `postprocess` does with a perf_script.out recorded elsewhere. Checks: import
// is total; writing the imported Profile and importing that again is a fixed
// point (the writer's text reads back to the same text); folding works.
#include <string>

#include "fold/folded_writer.h"
#include "fold/line_reader.h"
#include "fold/perf_script_import.h"
#include "fold/perf_script_writer.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace fold = profcpu::fold;

namespace {

std::string ImportAndWrite(absl::string_view text, size_t max_line) {
  fold::LineReader reader = fold::LineReader::FromString(text, max_line);
  auto imported = fold::ImportPerfScript(reader);
  Check(imported.ok(), "importing from a string failed");
  (void)fold::FormatFolded(fold::FoldProfile(imported->profile));
  fold::FoldOptions options;
  options.include_tid = options.annotate_jit = options.annotate_kernel = true;
  options.include_addrs = options.weight_by_period = true;
  (void)fold::FormatFolded(fold::FoldProfile(imported->profile, options));
  return fold::FormatPerfScript(imported->profile);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text = profcpu::fuzz::AsText(data, size);
  for (size_t max_line : {fold::LineReader::kDefaultMaxLineBytes, size_t{80}}) {
    std::string written = ImportAndWrite(text, max_line);
    std::string rewritten = ImportAndWrite(written, fold::LineReader::kDefaultMaxLineBytes);
    Check(written == rewritten, "perf script text written by profcpu does not read back as itself");
  }
  return 0;
}
