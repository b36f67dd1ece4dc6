// The flame graph flags: flamegraph.pl's, for `profcpu flamegraph`, and the
// subset that makes sense for the flamegraph.svg of collect, record and
// postprocess.
#ifndef PROFCPU_SCRIPTS_CLI_GRAPH_FLAGS_H_
#define PROFCPU_SCRIPTS_CLI_GRAPH_FLAGS_H_

#include "absl/status/statusor.h"
#include "render/graph_overrides.h"
#include "scripts/cli/flags.h"

namespace profcpu::cli {

enum class GraphFlagStyle {
  kFlamegraphPl,  // every flamegraph.pl flag profcpu implements
  kRun,           // the look of a run's flamegraph.svg
};

void AddGraphFlags(FlagSet* flags, GraphFlagStyle style);

// Reads the flags AddGraphFlags registered, once, into the overrides they ask
// for (render::ApplyGraphOverrides puts them over a graph's defaults and
// checks the ranges). InvalidArgument naming the flag on a bad value.
absl::StatusOr<render::GraphOverrides> ReadGraphFlags(const FlagSet& flags);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_GRAPH_FLAGS_H_
