// The flags of collect and record, and how their values become the
// collection's options (collector/collection_options.h). Only values are
// read here; which combinations the collector refuses it says itself
// (ValidateCollectionOptions).
#ifndef PROFCPU_SCRIPTS_CLI_COLLECTION_FLAGS_H_
#define PROFCPU_SCRIPTS_CLI_COLLECTION_FLAGS_H_

#include "absl/status/status.h"
#include "collector/collection_options.h"
#include "scripts/cli/flags.h"

namespace profcpu::cli {

// collect's own: -pid, -container, -a and -duration.
void AddTargetFlags(FlagSet* flags);
// What collect and record share, in the order --help lists them: sampling,
// .NET, symbols, the run folder and its outputs.
void AddSamplingFlags(FlagSet* flags);

// -pid, -container or -a (exactly one), and -duration. InvalidArgument for
// bad usage, NotFound when the container does not exist.
absl::Status ReadTargetFlags(const FlagSet& flags, collector::CollectionOptions* options);
// -freq, -mmap-pages, -callgraph, -event, -mode, -backend and -timestamps,
// then the collector's check of how they combine. InvalidArgument.
absl::Status ReadSamplingFlags(const FlagSet& flags, collector::CollectionOptions* options);
// -perfmap auto|off: whether profcpu turns .NET perf maps on for the run;
// -dotnet-events on|off: whether it saves the .NET runtime's events.
absl::Status ReadDotnetFlags(const FlagSet& flags, collector::CollectionOptions* options);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_COLLECTION_FLAGS_H_
