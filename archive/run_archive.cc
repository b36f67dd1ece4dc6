#include "archive/run_archive.h"

#include <sys/stat.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

#include "recording/run_folder.h"

namespace profcpu::archive {
namespace {

// recording.zst first (ExtractSkip's marker), the other inputs, then the
// outputs in their order (the .NET event profiles last). profile.html leads them: postprocess keeps it with
// -format no-html, so it must not come after one that ends the unpacking.
int Rank(const std::string& name) {
  if (name == recording::kRecordingFile) return -1;
  if (name == recording::kProfilePageFile) return 1;
  if (name == recording::kFlameGraphFile) return 2;
  if (name == recording::kFoldedFile) return 3;
  if (name == recording::kPerfScriptFile) return 4;
  if (name == recording::kAllocStacksFile || name == recording::kLockWaitStacksFile ||
      name == recording::kExceptionStacksFile) {
    return 5;
  }
  return 0;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

std::vector<std::string> ArchiveOrder(std::vector<std::string> files) {
  std::stable_sort(files.begin(), files.end(),
                   [](const std::string& a, const std::string& b) { return Rank(a) < Rank(b); });
  return files;
}

ExtractSkip PostprocessSkip(bool html) {
  ExtractSkip skip;
  skip.names = {recording::kFlameGraphFile,   recording::kFoldedFile,
                recording::kPerfScriptFile,   recording::kAllocStacksFile,
                recording::kLockWaitStacksFile, recording::kExceptionStacksFile};
  if (html) skip.names.push_back(recording::kProfilePageFile);
  skip.inputs_marker = recording::kRecordingFile;
  return skip;
}

absl::StatusOr<RunInputs> UnpackRunInputs(const std::string& dir, bool html,
                                          const std::function<void(const std::string&)>& on_unpack) {
  const std::string recording_path = absl::StrCat(dir, "/", recording::kRecordingFile);
  const std::string archive_path = absl::StrCat(dir, "/", recording::kArchiveFile);
  RunInputs inputs;
  inputs.had_archive = Exists(archive_path);
  if (Exists(recording_path)) return inputs;
  if (!inputs.had_archive) {
    return absl::NotFoundError(absl::StrCat(dir, " holds neither ", recording::kRecordingFile,
                                            " nor ", recording::kArchiveFile));
  }
  on_unpack(archive_path);
  // Not the outputs postprocess rebuilds: perf_script.out alone can be
  // hundreds of MB.
  absl::StatusOr<std::vector<std::string>> extracted =
      ExtractTarGz(archive_path, dir, {}, PostprocessSkip(html));
  if (!extracted.ok()) return extracted.status();
  if (!Exists(recording_path)) {
    return absl::InvalidArgumentError(absl::StrCat(archive_path, " holds no ", recording::kRecordingFile,
                                                   "; it was not written by profcpu"));
  }
  return inputs;
}

}  // namespace profcpu::archive
