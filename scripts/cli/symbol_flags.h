// The flags that decide how frames are found and named, for collect, record
// and postprocess: -callgraph (how user stacks are walked: frame pointers or
// DWARF), -symbols DIR (more places for debug files; repeatable) and
// -strip-tiers (drop .NET tier annotations from JIT frame names).
#ifndef PROFCPU_SCRIPTS_CLI_SYMBOL_FLAGS_H_
#define PROFCPU_SCRIPTS_CLI_SYMBOL_FLAGS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "collector/callgraph_choice.h"
#include "collector/sampler.h"
#include "scripts/cli/flags.h"
#include "scripts/cli/pipeline.h"
#include "symbolize/symbol_fetcher.h"

namespace profcpu::cli {

// -callgraph, for collect and record.
void AddCallgraphFlag(FlagSet* flags);
absl::Status ReadCallgraphFlag(const FlagSet& flags, collector::SamplerOptions* sampler);

// -symbols and -strip-tiers, for collect, record and postprocess.
void AddSymbolFlags(FlagSet* flags);

// -symbol-server, -symbol-cache, -symbol-timeout, -symbol-max-mb (and for
// collect and record, `collecting`, -fetch-symbols): debug files fetched by
// build-id (symbolize/symbol_fetcher.h). postprocess fetches whenever a server
// is named (DEBUGINFOD_URLS or -symbol-server); collect and record only with
// -fetch-symbols.
void AddSymbolServerFlags(FlagSet* flags, bool collecting);
absl::StatusOr<symbolize::SymbolFetchOptions> ReadSymbolFetchOptions(const FlagSet& flags);

// Both sets into `pipeline`: -symbols, -strip-tiers, the symbol cache as one
// more symbol directory when it exists, and what to fetch.
absl::Status ReadSymbolFlags(const FlagSet& flags, bool collecting, PipelineOptions* pipeline);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_SYMBOL_FLAGS_H_
