#!/usr/bin/env bash
# What profcpu's .NET runtime events cost the app: iterations/s of a .NET
# workload (tests/dotnet/ThroughputApp, built here) with no EventPipe session,
# with each runtime keyword alone at level 4 and 5, with all of profcpu's at
# level 5, and under profcpu collect with -dotnet-events on and off; slowdown
# and nettrace bytes/s. Results: docs/dotnet-events-cost.md. Builds profcpu and
# eventpipe_record into BUILD_DIR (default build/) first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
bash "$root/scripts/setup.sh"
BUILD_DIR=$build_dir BUILD_TARGETS="profcpu eventpipe_record" bash "$root/scripts/build.sh" >/dev/null
python3 "$root/bench/dotnet_events.py" --profcpu "$build_dir/scripts/profcpu" \
  --record "$build_dir/collector/eventpipe_record" "$@"
