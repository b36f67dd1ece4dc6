#include "scripts/cli/run_archive.h"

#include <algorithm>

#include "render/profile_page_writer.h"
#include "scripts/cli/output_dir.h"

namespace profcpu::cli {
namespace {

// recording.zst first (ExtractSkip's marker), the other inputs, then the
// outputs in their order. profile.html leads them: postprocess keeps it with
// -format no-html, so it must not come after one that ends the unpacking.
int Rank(const std::string& name) {
  if (name == kRecordingFile) return -1;
  if (name == render::kProfilePageFile) return 1;
  if (name == kFlameGraphFile) return 2;
  if (name == kFoldedFile) return 3;
  if (name == kPerfScriptFile) return 4;
  return 0;
}

}  // namespace

std::vector<std::string> ArchiveOrder(std::vector<std::string> files) {
  std::stable_sort(files.begin(), files.end(),
                   [](const std::string& a, const std::string& b) { return Rank(a) < Rank(b); });
  return files;
}

ExtractSkip PostprocessSkip(bool html) {
  ExtractSkip skip;
  skip.names = {kFlameGraphFile, kFoldedFile, kPerfScriptFile};
  if (html) skip.names.push_back(render::kProfilePageFile);
  skip.inputs_marker = kRecordingFile;
  return skip;
}

}  // namespace profcpu::cli
