#include "archive/run_archive.h"

#include <algorithm>

#include "recording/run_folder.h"

namespace profcpu::archive {
namespace {

// recording.zst first (ExtractSkip's marker), the other inputs, then the
// outputs in their order. profile.html leads them: postprocess keeps it with
// -format no-html, so it must not come after one that ends the unpacking.
int Rank(const std::string& name) {
  if (name == recording::kRecordingFile) return -1;
  if (name == recording::kProfilePageFile) return 1;
  if (name == recording::kFlameGraphFile) return 2;
  if (name == recording::kFoldedFile) return 3;
  if (name == recording::kPerfScriptFile) return 4;
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
  skip.names = {recording::kFlameGraphFile, recording::kFoldedFile, recording::kPerfScriptFile};
  if (html) skip.names.push_back(recording::kProfilePageFile);
  skip.inputs_marker = recording::kRecordingFile;
  return skip;
}

}  // namespace profcpu::archive
