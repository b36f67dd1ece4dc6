// The recording's header for a collection: what was sampled, how, where and
// since when, as postprocess reads it back.
#ifndef PROFCPU_COLLECTOR_COLLECTION_HEADER_H_
#define PROFCPU_COLLECTOR_COLLECTION_HEADER_H_

#include <cstdint>
#include <string>

#include "collector/collection_options.h"
#include "collector/sampler.h"
#include "recording/records.h"

namespace profcpu::collector {

// `sampler` is the sampler as it runs (the BPF half may have changed its
// event and stack copies from options.sampler); `target` as
// CollectionTarget::Description says it; `start_ns` on CLOCK_MONOTONIC.
recording::Header MakeCollectionHeader(const CollectionOptions& options,
                                       const SamplerOptions& sampler, const std::string& target,
                                       uint64_t start_ns);

}  // namespace profcpu::collector

#endif  // PROFCPU_COLLECTOR_COLLECTION_HEADER_H_
