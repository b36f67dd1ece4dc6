// metadata.json: what was profiled, how, and what was lost, for people and
// tools reading a run folder. Derived from the recording, so postprocess can
// write it again anywhere.
#ifndef PROFCPU_SCRIPTS_CLI_METADATA_H_
#define PROFCPU_SCRIPTS_CLI_METADATA_H_

#include <string>
#include <vector>

#include "collector/dotnet/dotnet_events_summary.h"
#include "fold/recording_summary.h"
#include "fold/unknown_frames.h"
#include "symbolize/symbolizer.h"

namespace profcpu::cli {

struct RunFacts {
  const fold::RecordingSummary* summary = nullptr;
  const symbolize::SymbolizeStats* symbols = nullptr;
  const fold::UnknownFrames* unknown_frames = nullptr;  // samples' frames that stayed [unknown]
  std::vector<std::string> warnings;
  std::vector<std::string> files;
  // One per saved dotnet/PID.nettrace; none: no "dotnet_events" key.
  const std::vector<collector::dotnet::DotnetEventsSummary>* dotnet_events = nullptr;
};

std::string FormatMetadataJson(const RunFacts& facts);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_METADATA_H_
