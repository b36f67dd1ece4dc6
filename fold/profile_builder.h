// Replays a recording into a Profile: tracks address spaces and thread names,
// normalizes every sampled address, and lists the distinct code locations the
// symbolizer must name (one request per location, however many samples hit it).
#ifndef PROFCPU_FOLD_PROFILE_BUILDER_H_
#define PROFCPU_FOLD_PROFILE_BUILDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/recording/recording_reader.h"
#include "collector/recording/records.h"
#include "fold/profile.h"
#include "symbolize/code_location.h"
#include "symbolize/symbolizer.h"

namespace profcpu::fold {

struct RecordingSummary {
  recording::Header header;
  std::optional<recording::Finish> finish;  // absent if the collector did not finish
  bool file_truncated = false;              // the file ends mid-record
  uint64_t samples = 0;
  uint64_t lost_ring_buffer = 0;  // samples/records the kernel could not queue
  uint64_t lost_dropped = 0;      // samples the kernel dropped (LOST_SAMPLES)
  uint64_t throttle_events = 0;
  uint64_t truncated_stacks = 0;  // call chains cut at the kernel's depth limit
  uint64_t first_sample_ns = 0;
  uint64_t last_sample_ns = 0;
  std::vector<recording::ProcessInfo> processes;
};

struct BuiltProfile {
  Profile profile;
  RecordingSummary summary;
  std::vector<symbolize::Module> modules;
  std::vector<symbolize::SymbolRequest> requests;
};

absl::StatusOr<BuiltProfile> BuildProfile(recording::RecordingReader& reader);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_PROFILE_BUILDER_H_
