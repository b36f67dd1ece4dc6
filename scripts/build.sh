#!/usr/bin/env bash
# Configures and builds profcpu into BUILD_DIR (default build/). Extra
# arguments go to cmake, e.g. -DPROFCPU_SANITIZE=ON. BUILD_TARGETS (space-
# separated) builds only those targets, e.g. "profcpu demo_workload". Builds
# are unity builds (see CMakeLists.txt) unless UNITY=0.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# UNITY=0 compiles file by file (quicker to rebuild after editing one file).
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_UNITY_BUILD="$([ "${UNITY:-1}" = 0 ] && echo OFF || echo ON)" "${launcher[@]}" "$@" >/dev/null
targets=()
for target in ${BUILD_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
