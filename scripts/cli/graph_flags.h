// The flame graph flags: flamegraph.pl's, for `profcpu flamegraph`, and the
// subset that makes sense for the flamegraph.svg of collect, record and
// postprocess.
#ifndef PROFCPU_SCRIPTS_CLI_GRAPH_FLAGS_H_
#define PROFCPU_SCRIPTS_CLI_GRAPH_FLAGS_H_

#include "absl/status/status.h"
#include "render/flamegraph_options.h"
#include "scripts/cli/flags.h"

namespace profcpu::cli {

enum class GraphFlagStyle {
  kFlamegraphPl,  // every flamegraph.pl flag profcpu implements
  kRun,           // the look of a run's flamegraph.svg
};

void AddGraphFlags(FlagSet* flags, GraphFlagStyle style);

// Reads the flags AddGraphFlags registered into *options (fields of flags not
// given keep their values). InvalidArgument naming the flag on a bad value.
absl::Status ReadGraphFlags(const FlagSet& flags, render::FlameGraphOptions* options);

}  // namespace profcpu::cli

#endif  // PROFCPU_SCRIPTS_CLI_GRAPH_FLAGS_H_
