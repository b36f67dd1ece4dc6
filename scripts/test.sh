#!/usr/bin/env bash
# Sets up, builds and runs every test: the whole suite (unit and integration,
# real perf events on real processes) with ctest, then the unit tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/setup.sh

echo "== build (RelWithDebInfo)"
BUILD_DIR=$root/build bash scripts/build.sh
echo "== tests"
ctest --test-dir "$root/build" --output-on-failure -j 2

echo "== unit tests under ASan + UBSan"
BUILD_DIR=$root/build-asan bash scripts/build.sh -DPROFCPU_SANITIZE=ON
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$root/build-asan" --output-on-failure -L unit -j 2
echo "== all tests passed"
