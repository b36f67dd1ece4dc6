#!/usr/bin/env bash
# Overhead of profcpu on a .NET app at 99 Hz with perf maps on, next to no
# profiler and perf record -g (iterations/s of the test app's prime finder).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
BUILD_DIR=$root/build bash "$root/scripts/build.sh" >/dev/null
python3 "$root/bench/dotnet.py" --profcpu "$root/build/scripts/profcpu" "$@"
