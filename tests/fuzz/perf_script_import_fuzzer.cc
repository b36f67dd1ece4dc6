// perf script text imported into a Profile (fold/perf_script_import.h), as
// `postprocess` does with a perf_script.out recorded elsewhere. Checks: import
// is total; writing the imported Profile and importing that again is a fixed
// point (the writer's text reads back to the same text); folding works; the
// profile.html data built from it (`profcpu html`) holds clean names and a
// well-formed stack tree.
#include <string>

#include "fold/folded_writer.h"
#include "fold/line_reader.h"
#include "fold/perf_script_import.h"
#include "fold/perf_script_writer.h"
#include "render/profile_page_data.h"
#include "render/profile_page_writer.h"
#include "render/xml_text.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace fold = profcpu::fold;

namespace {

void CheckPage(const fold::Profile& profile) {
  namespace render = profcpu::render;
  render::PageDataOptions options;
  options.fold.annotate_kernel = options.fold.annotate_jit = true;
  const render::PageData data = render::BuildPageData(profile, options);
  for (const render::PageName& name : data.names) {
    Check(render::IsCleanText(name.text), "a page name is not clean UTF-8");
  }
  for (size_t i = 1; i < data.nodes.size(); ++i) {
    Check(data.nodes[i].parent < i && data.nodes[i].name < data.names.size(),
          "a page node's parent or name is out of order");
  }
  for (const render::PageSample& sample : data.samples) {
    Check(sample.node < data.nodes.size() && sample.thread < data.threads.size(),
          "a page sample names a node or thread that does not exist");
  }
  Check(render::RenderProfilePage(data, {}).ok(), "the page could not be written");
}

std::string ImportAndWrite(absl::string_view text, size_t max_line) {
  fold::LineReader reader = fold::LineReader::FromString(text, max_line);
  auto imported = fold::ImportPerfScript(reader);
  Check(imported.ok(), "importing from a string failed");
  (void)fold::FormatFolded(fold::FoldProfile(imported->profile));
  fold::FoldOptions options;
  options.include_tid = options.annotate_jit = options.annotate_kernel = true;
  options.include_addrs = options.weight_by_period = true;
  (void)fold::FormatFolded(fold::FoldProfile(imported->profile, options));
  CheckPage(imported->profile);
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
