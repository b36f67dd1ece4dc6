// How the named JIT frames of the samples kept were named, per process:
// by the perf map, the jitdump, or the runtime's method events
// (symbolize::JitSources::NameSourceOf). metadata.json's "dotnet_runtimes"
// says it beside each runtime's version, so a run tells which of the
// runtime's means named its managed code.
#ifndef PROFCPU_FOLD_JIT_FRAME_SOURCES_H_
#define PROFCPU_FOLD_JIT_FRAME_SOURCES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "fold/profile.h"
#include "symbolize/code_location.h"

namespace profcpu::fold {

// pid -> source ("jitdump", "perf_map", "method_events") -> frames of
// samples (one per sample and stack level).
using JitFrameSources = std::map<uint32_t, std::map<std::string, uint64_t>>;

// `source_of` is asked once per distinct named JIT location ("" when none
// of the sources names it, e.g. a name from the replay itself).
JitFrameSources CountJitFrameSources(
    const Profile& profile,
    const std::function<std::string(const symbolize::CodeLocation&)>& source_of);

}  // namespace profcpu::fold

#endif  // PROFCPU_FOLD_JIT_FRAME_SOURCES_H_
