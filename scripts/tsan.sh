#!/usr/bin/env bash
# ThreadSanitizer for the collector (issue 8, docs/security.md "How it is
# tested"). profcpu's collector is one thread: one loop drains every ring
# buffer, and SIGINT/SIGTERM handlers only set atomics. What TSan can still
# catch there is a handler doing something async-signal-unsafe, and races in
# the code the unit tests drive from several threads (the sampler following
# threads that start and end under it, a .NET diagnostics server thread
# answering the IPC client, the BPF session sampling a spinning thread).
#
#   bash scripts/tsan.sh
#
# Builds only what it runs, in $TSAN_BUILD_DIR (default build-tsan/): the
# collector's, the BPF backend's, fold's (the parallel replay) and archive's
# (the parallel deflate) unit tests, profcpu and two fixtures. Then
# runs those tests and real `profcpu record` / `collect` runs on threaded
# targets, one stopped by SIGINT. Any TSan report fails the script.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TSAN_BUILD_DIR:-$root/build-tsan}
jobs=${TSAN_JOBS:-$(nproc)}

echo "== tsan: building in $build"
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROFCPU_TSAN=ON \
  -DCMAKE_UNITY_BUILD=ON -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$jobs" --target collector_test bpf_test fold_test archive_test profcpu \
  thread_churn demo_workload

# halt_on_error: the first report fails the step; exitcode 66 tells a TSan
# report from any other failure.
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:report_signal_unsafe=1"
profcpu=$build/scripts/profcpu
fixtures=$build/tests/fixtures
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
logs=$build/tsan-logs
mkdir -p "$logs"

# TSan must be able to fail here: a two-thread race it has to report (a
# kernel whose address layout TSan cannot use would otherwise pass silently).
cat >"$out/race.cc" <<'END'
#include <thread>
volatile int shared_counter;
int main() {
  std::thread other([] {
    for (int i = 0; i < 100000; ++i) shared_counter = shared_counter + 1;
  });
  for (int i = 0; i < 100000; ++i) shared_counter = shared_counter + 1;
  other.join();
  return shared_counter == 0;
}
END
c++ -std=c++20 -g -O1 -fsanitize=thread -o "$out/race" "$out/race.cc"
status=0
"$out/race" >"$logs/self-check.log" 2>&1 || status=$?
if [ "$status" -ne 66 ] || ! grep -q 'WARNING: ThreadSanitizer: data race' "$logs/self-check.log"; then
  echo "tsan: ThreadSanitizer did not report a known race (status $status); see $logs/self-check.log" >&2
  exit 1
fi
echo "tsan: self-check ok (a known race is reported)"

failed=()
check() {  # check NAME STATUS LOG
  if [ "$2" -ne 0 ] || grep -q 'WARNING: ThreadSanitizer' "$3"; then
    failed+=("$1")
    echo "tsan: $1 failed (status $2), see $3" >&2
    grep -A30 'WARNING: ThreadSanitizer' "$3" | head -n 60 >&2 || tail -n 30 "$3" >&2
  else
    echo "tsan: $1 ok"
  fi
}

# fold_test and archive_test: the replay split over worker threads and
# profile.html's data compressed in pieces on several (issue 29).
for test in collector_test bpf_test fold_test archive_test; do
  binary=$(find "$build/collector" "$build/fold" "$build/archive" -name "$test" -type f -perm -u+x | head -n 1)
  status=0
  "$binary" >"$logs/$test.log" 2>&1 || status=$?
  check "$test" "$status" "$logs/$test.log"
done

# The fixtures are built with TSan too, but they are the profiled targets, not
# what is under test: their reports are off (report_bugs=0) so that a race in
# a workload neither ends it early nor fails the step.
target_env=(env TSAN_OPTIONS=report_bugs=0)

# A target that starts and ends ~1,000 threads a second, for its whole life.
status=0
"$profcpu" record -freq 999 -out "$out" -- "${target_env[@]}" "$fixtures/thread_churn" 1000 2 \
  >"$logs/record.log" 2>&1 || status=$?
check "profcpu record (thread churn)" "$status" "$logs/record.log"

# An attached collection of a multi-threaded process, ended by Ctrl-C: the
# signal handler runs while the loop drains the ring buffers.
"${target_env[@]}" "$fixtures/demo_workload" 30 >/dev/null 2>"$logs/collect-target.log" &
target=$!
"$profcpu" collect -pid "$target" -duration 0 -freq 999 -out "$out" >"$logs/collect.log" 2>&1 &
collector=$!
# Ctrl-C once it samples (TSan slows the start), and a second later.
for _ in $(seq 600); do
  grep -q 'Ctrl-C stops early' "$logs/collect.log" && break
  kill -0 "$collector" 2>/dev/null || break
  sleep 0.1
done
sleep 1
# (A target that died would end the collection before the signal; kill -0
# would not tell: our dead child stays a zombie until waited for.)
state=$(sed 's/.*) //' "/proc/$target/stat" 2>/dev/null | cut -d' ' -f1)
if [ -z "$state" ] || [ "$state" = Z ]; then
  echo "tsan: the collect target ended early; see $logs/collect-target.log" >&2
  exit 1
fi
kill -INT "$collector" 2>/dev/null || true
status=0
wait "$collector" || status=$?
kill "$target" 2>/dev/null || true
wait "$target" 2>/dev/null || true
check "profcpu collect -pid (SIGINT)" "$status" "$logs/collect.log"

if ((${#failed[@]})); then
  echo "tsan: ${#failed[@]} failed: ${failed[*]}" >&2
  exit 1
fi
echo "== tsan: no data race reported"
