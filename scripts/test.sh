#!/usr/bin/env bash
# Sets up, builds and runs every test: the whole suite (unit and integration,
# real perf events on real processes) with ctest; then the unit tests and the
# integration tests that feed profcpu outside input built with
# AddressSanitizer + UndefinedBehaviorSanitizer; then the collector under
# ThreadSanitizer; then every fuzz target briefly; then checks that
# `cmake --install` yields a working profcpu. The first build is a unity build
# (CMakeLists.txt); the sanitizer build compiles file by file, so a missing
# include fails the run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/setup.sh

echo "== build (RelWithDebInfo)"
BUILD_DIR=$root/build bash scripts/build.sh
echo "== tests"
ctest --test-dir "$root/build" --output-on-failure -j 2

# Under ASan + UBSan: every unit test, every fuzz corpus, and the integration
# tests that feed profcpu real and hostile input (perf data, ELF and DWARF,
# perf maps and jitdumps, perf script text, archives, injected faults) and
# drive the collector end to end (the NetTrace reader on a real runtime's
# stream: test_eventpipe). The rest (.NET, containers, off-CPU, target
# selection, the PerfView reader: test_exports writes the same export) run the
# same parsers on the same kinds of input; they ran above. The leaf-caller
# tests need glibc's own wrappers at the leaf, which ASan's interceptors
# (write, pthread_join) wrap in frames of their own; so does the crypto
# chain's (libcrypto's calls to free). The bare-container test checks the
# release binary's static linking, which sanitizer builds do not have. The
# fleet agent's and store's tests check memory bounds (the agent under 100 MB,
# the client reading a 2 GB answer), which ASan's shadow memory would break;
# their units run here as unit tests.
# (g++ like the plain build: the fixtures' inlining and frame pointers and the
# stacks the BPF test walks are what the tests expect; a clang build with
# libFuzzer's instrumentation changes them.)
# -O1 -g1 (ASan's advice; line tables name the lines in its reports) compiles
# a third faster than -O2 -g.
# This build compiles every file on its own (UNITY=0): the other builds are
# unity builds, where a file that forgets an #include still compiles because
# an earlier file of its batch included it; here it fails CI.
echo "== tests again under ASan + UBSan (every file compiled on its own)"
BUILD_DIR=$root/build-asan UNITY=0 bash scripts/build.sh -DPROFCPU_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions=$root/scripts/lsan.supp \
  ctest --test-dir "$root/build-asan" --output-on-failure -j 2 \
  -E 'integration\.test_(dotnet|dotnet_osr|dotnet_events|sidecar|docker_engine|offcpu|targets|perfview|leaf_callers|crypto_chain|bare_container|fleet_agent|fleet_store)$'

# The collector and the unit tests that start threads under ThreadSanitizer,
# with real record/collect runs (only the targets it needs are built).
echo "== collector under ThreadSanitizer"
TSAN_BUILD_DIR=$root/build-tsan bash scripts/tsan.sh

# Every parser's fuzz target, briefly (scripts/fuzz.sh builds only them, with
# clang); a find fails the run and leaves its input in build-fuzz/fuzz-crashes/.
echo "== fuzz targets, ${FUZZ_SECONDS:-4}s each"
FUZZ_BUILD_DIR=$root/build-fuzz PROFCPU_BINARY=$root/build/scripts/profcpu \
  bash scripts/fuzz.sh "${FUZZ_SECONDS:-4}"

echo "== install"
prefix=$(mktemp -d)
cmake --install "$root/build" --prefix "$prefix" >/dev/null
"$prefix/bin/profcpu" version
rm -rf "$prefix"
echo "== all tests passed"
