#!/usr/bin/env bash
# Sets up, builds and runs every test: the whole suite (unit and integration,
# real perf events on real processes) with ctest, then again built with
# AddressSanitizer + UndefinedBehaviorSanitizer (all but the .NET and container
# tests), then the collector under
# ThreadSanitizer, then runs every fuzz target briefly, then checks that
# `cmake --install` yields a working profcpu.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/setup.sh

echo "== build (RelWithDebInfo)"
BUILD_DIR=$root/build bash scripts/build.sh
echo "== tests"
ctest --test-dir "$root/build" --output-on-failure -j 2

# Under ASan + UBSan: every unit test, every fuzz corpus, and the integration
# tests that feed profcpu real and hostile input. The .NET, sidecar and docker
# tests (4-5 minutes more under ASan) run the same parsers on the same kinds
# of input as test_hostile/test_symbols/test_collect; they ran above.
echo "== tests again under ASan + UBSan"
BUILD_DIR=$root/build-asan bash scripts/build.sh -DPROFCPU_SANITIZE=ON
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$root/build-asan" --output-on-failure -j 2 \
  -E 'integration\.test_(dotnet|sidecar|docker_engine)$' 

# The collector and the unit tests that start threads under ThreadSanitizer,
# with real record/collect runs (only the targets it needs are built).
echo "== collector under ThreadSanitizer"
TSAN_BUILD_DIR=$root/build-tsan bash scripts/tsan.sh

# Every parser's fuzz target, briefly (scripts/fuzz.sh builds them with clang);
# a find fails the run and leaves its input in build-fuzz/fuzz-crashes/.
echo "== fuzz targets, ${FUZZ_SECONDS:-6}s each"
FUZZ_BUILD_DIR=$root/build-fuzz PROFCPU_BINARY=$root/build/scripts/profcpu \
  bash scripts/fuzz.sh "${FUZZ_SECONDS:-6}"

echo "== install"
prefix=$(mktemp -d)
cmake --install "$root/build" --prefix "$prefix" >/dev/null
"$prefix/bin/profcpu" version
rm -rf "$prefix"
echo "== all tests passed"
