// metadata.json: what was profiled, how, and what was lost, for people and
// tools reading a run folder. Derived from the recording, so postprocess can
// write it again anywhere.
#ifndef PROFCPU_SCRIPTS_CLI_METADATA_H_
#define PROFCPU_SCRIPTS_CLI_METADATA_H_

#include <string>
#include <vector>

#include "fold/dotnet_event_profiles.h"
#include "fold/dotnet_events_summary.h"
#include "fold/jit_frame_sources.h"
#include "fold/recording_summary.h"
#include "fold/unknown_frames.h"
#include "symbolize/symbol_fetcher.h"
#include "symbolize/symbolize_stats.h"

namespace profcpu::cli {

struct RunFacts {
  const fold::RecordingSummary* summary = nullptr;
  const symbolize::SymbolizeStats* symbols = nullptr;
  const fold::UnknownFrames* unknown_frames = nullptr;  // samples' frames that stayed [unknown]
  const fold::JitFrameSources* jit_frame_sources = nullptr;  // named JIT frames by source
  std::vector<std::string> warnings;
  std::vector<std::string> files;
  // One per saved dotnet/PID.nettrace; none: no "dotnet_events" key.
  const std::vector<fold::DotnetEventsSummary>* dotnet_events = nullptr;
  // The .NET event profiles' counts ("dotnet_event_stacks"; none or no
  // profile: no key).
  const fold::DotnetEventProfiles* dotnet_event_stacks = nullptr;
  // Native modules with unknown frames (symbols.unknown_native_modules), and
  // what fetching their debug files found ("symbol_fetch"; none: no key).
  const std::vector<symbolize::ModuleToFetch>* unknown_modules = nullptr;
  const std::vector<symbolize::ModuleFetchResult>* symbol_fetch = nullptr;
};

std::string FormatMetadataJson(const RunFacts& facts);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_METADATA_H_
