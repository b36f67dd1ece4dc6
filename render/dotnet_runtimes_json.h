// metadata.json's "dotnet_runtimes": per .NET process, the runtime version
// it ran, how its perf maps came to be written, how its managed frames were
// named (frames per source), and what its saved event stream kept and
// dropped. From the recording's DotnetRuntime records and the pipeline's
// count of named JIT frames, so postprocess of the archive says the same.
#ifndef PROFCPU_RENDER_DOTNET_RUNTIMES_JSON_H_
#define PROFCPU_RENDER_DOTNET_RUNTIMES_JSON_H_

#include <vector>

#include <nlohmann/json.hpp>

#include "fold/jit_frame_sources.h"
#include "recording/records.h"

namespace profcpu::render {

// One entry per runtime, in pid order; an array (possibly empty).
nlohmann::ordered_json DotnetRuntimesJson(const std::vector<recording::DotnetRuntime>& runtimes,
                                          const fold::JitFrameSources& frame_sources);

// Every process's named JIT frames by source: {"PID": {"jitdump": N, ...}}.
nlohmann::ordered_json JitFrameSourcesJson(const fold::JitFrameSources& frame_sources);

}  // namespace profcpu::render

#endif  // PROFCPU_RENDER_DOTNET_RUNTIMES_JSON_H_
