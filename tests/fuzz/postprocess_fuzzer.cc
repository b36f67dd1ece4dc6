// `profcpu postprocess` on a run folder from anywhere: the recording is
// hostile (made up mappings, forks, execs, call chains), and every output is
// built from it (scripts/cli/pipeline.h). The input is the decompressed record
// stream, compressed into recording.zst by the target. Checks: outputs are
// built or a clear error returned; metadata.json is valid JSON; every line of
// perf_script.out is what FlameScope accepts; postprocessing again with the
// symbol snapshot just written gives the same folded stacks.
#include <zstd.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/file_io.h"
#include "base/run_log.h"
#include "recording/run_folder.h"
#include "scripts/cli/finish_run.h"
#include "scripts/cli/pipeline.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace cli = profcpu::cli;
namespace recording = profcpu::recording;

namespace {

std::string ReadOutput(const std::string& dir, const char* name) {
  auto text = profcpu::base::ReadFileBounded(absl::StrCat(dir, "/", name), size_t{1} << 30);
  Check(text.ok(), "an output the pipeline wrote cannot be read");
  return *std::move(text);
}

// FlameScope's regular expressions (Netflix/flamescope app/perf/regexp.py).
void CheckFlameScopeReads(const std::string& text) {
  static const std::regex event(" +([0-9.]+): .+?:");
  static const std::regex frame("^[\\t ]*[0-9a-fA-F]+ (.+) \\((.*?)\\)$");
  bool in_sample = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!line.empty() && line[0] == '#') continue;
    if (line.empty()) {
      in_sample = false;
      continue;
    }
    std::string s(line);
    if (!in_sample) {
      Check(std::regex_search(s, event), "a perf_script.out sample header FlameScope rejects");
      in_sample = true;
    } else {
      Check(std::regex_match(s, frame), "a perf_script.out frame line FlameScope rejects");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string compressed(ZSTD_compressBound(size), '\0');
  size_t n = ZSTD_compress(compressed.data(), compressed.size(), data, size, 1);
  Check(!ZSTD_isError(n), "ZSTD_compress failed");
  compressed.resize(n);

  profcpu::fuzz::ScratchDir dir;
  Check(profcpu::base::WriteFile(absl::StrCat(dir.path(), "/", recording::kRecordingFile), compressed)
            .ok(),
        "writing the recording failed");
  cli::PipelineOptions options;
  options.dir = dir.path();
  profcpu::base::RunLog log;
  auto result = cli::RebuildOutputs(options, &log);
  if (!result.ok()) return 0;  // a clear error: postprocess prints it and exits 1
  Check(cli::FinishRun(dir.path(), *result, /*write_archive=*/false, &log).ok(),
        "writing metadata.json failed");
  Check(nlohmann::json::accept(ReadOutput(dir.path(), recording::kMetadataFile)),
        "metadata.json is not valid JSON");
  CheckFlameScopeReads(ReadOutput(dir.path(), recording::kPerfScriptFile));
  std::string folded = ReadOutput(dir.path(), recording::kFoldedFile);

  profcpu::base::RunLog again_log;
  auto again = cli::RebuildOutputs(options, &again_log);
  Check(again.ok(), "postprocessing the same folder a second time failed");
  Check(ReadOutput(dir.path(), recording::kFoldedFile) == folded,
        "the symbol snapshot did not reproduce the folded stacks");
  return 0;
}
