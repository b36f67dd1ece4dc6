#!/usr/bin/env bash
# Runs every libFuzzer target (tests/fuzz/) for SECONDS each (default 60).
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Builds the targets with clang, ASan and UBSan in $FUZZ_BUILD_DIR (default
# build-fuzz/; FUZZ_BUILD_TESTS=ON keeps the tests in that build, as
# scripts/test.sh does to run them under the sanitizers from the same compile), gathers seeds (tests/fuzz/corpus/, seeds make_fuzz_seeds writes,
# the stackcollapse-perf test data in ../shared, this machine's /proc files and
# ELF libraries, the outputs of a real profcpu run when a built profcpu is at
# hand), then fuzzes each target in turn, keeping what it learns in
# $FUZZ_BUILD_DIR/fuzz-corpus/TARGET for the next run. A crash, leak, timeout or
# broken invariant fails the script; the input that caused it is saved as
# $FUZZ_BUILD_DIR/fuzz-crashes/TARGET-*. To keep it as a regression test, fix
# the bug and copy the file into tests/fuzz/corpus/TARGET/ (ctest replays it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
shared=${PROFCPU_SHARED_DIR:-$root/../shared}

command -v clang++ >/dev/null || { echo "fuzz: clang++ is missing; run scripts/setup.sh" >&2; exit 1; }

echo "== fuzz: building targets with clang, ASan and UBSan in $build"
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPROFCPU_FUZZ=ON -DPROFCPU_BUILD_TESTS="${FUZZ_BUILD_TESTS:-OFF}" -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzz_all

seeds=$build/fuzz-seeds
rm -rf "$seeds"
mkdir -p "$seeds"
"$build/tests/fuzz/make_fuzz_seeds" "$seeds"

# Text a parser reads from this machine: /proc files, kernel symbols.
mkdir -p "$seeds/proc_fuzzer" "$seeds/kallsyms_fuzzer" "$seeds/elf_symbols_fuzzer"
cp /proc/self/maps "$seeds/proc_fuzzer/maps"
cp /proc/self/status "$seeds/proc_fuzzer/status"
head -c 48000 /proc/kallsyms > "$seeds/kallsyms_fuzzer/core" || true
grep -m 400 $'\t\\[' /proc/kallsyms > "$seeds/kallsyms_fuzzer/modules" || true

# ELF files: the symbolize fixture library with DWARF 5, stripped, and split
# into a stripped copy with a .gnu_debuglink and its debug file; small system
# libraries.
elf=$seeds/elf_symbols_fuzzer
clang++ -O1 -g -gdwarf-5 -shared -fPIC -o "$elf/fixture_lib.so" \
  "$root/symbolize/testdata/fixture_lib.cc"
strip --strip-all -o "$elf/fixture_lib.stripped.so" "$elf/fixture_lib.so"
objcopy --only-keep-debug "$elf/fixture_lib.so" "$elf/fixture_lib.debug"
objcopy --strip-debug --add-gnu-debuglink="$elf/fixture_lib.debug" "$elf/fixture_lib.so" \
  "$elf/fixture_lib.linked.so"
for lib in /usr/lib/x86_64-linux-gnu/libdl.so.2 /usr/lib/x86_64-linux-gnu/librt.so.1; do
  [ -f "$lib" ] && cp "$lib" "$elf/"
done

# Archives as users repack run folders: GNU tar in each format and Python's
# tarfile, uncompressed (archive_fuzzer reads plain tar too, so mutations reach
# the headers) with names long enough for ustar's prefix, pax paths and GNU
# long names.
tar_seeds=$seeds/archive_fuzzer
tar_src=$(mktemp -d)
long_dir=jit/$(printf 'l%.0s' {1..120})
mkdir -p "$tar_seeds" "$tar_src/$long_dir"
printf 'recording' > "$tar_src/recording.zst"
printf 'map' > "$tar_src/$long_dir/$(printf 'm%.0s' {1..150}).map"
for format in gnu pax; do
  tar --format=$format -b 1 -cf "$tar_seeds/gnu-tar-$format" -C "$tar_src" .
done
tar --format=ustar -b 1 -cf "$tar_seeds/gnu-tar-ustar" -C "$tar_src" recording.zst
python3 - "$tar_src" "$tar_seeds" <<'EOF'
import sys, tarfile
src, seeds = sys.argv[1], sys.argv[2]
for name in ["GNU_FORMAT", "PAX_FORMAT"]:
    with tarfile.open(f"{seeds}/python-{name.lower()}", "w", format=getattr(tarfile, name)) as t:
        t.add(src, arcname=".")
EOF
rm -rf "$tar_src"

# A real run's outputs, when a built profcpu can sample here.
profcpu=${PROFCPU_BINARY:-$root/build/scripts/profcpu}
if [ -x "$profcpu" ]; then
  run_out=$(mktemp -d)
  if run_dir=$("$profcpu" record -freq 999 -out "$run_out" -- \
      sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' 2>/dev/null | tail -n 1) &&
      [ -d "$run_dir" ]; then
    # The real boot id would make every run parse this machine's kallsyms.
    python3 - "$run_dir" "$seeds" <<'EOF'
import os, subprocess, sys
run, seeds = sys.argv[1], sys.argv[2]
stream = subprocess.run(["zstd", "-dcq", os.path.join(run, "recording.zst")],
                        capture_output=True).stdout
boot_id = open("/proc/sys/kernel/random/boot_id").read().strip().encode()
stream = stream.replace(boot_id, b"0" * len(boot_id))[:128 * 1024]
def put(target, name, data):
    os.makedirs(os.path.join(seeds, target), exist_ok=True)
    with open(os.path.join(seeds, target, name), "wb") as f:
        f.write(data)
def read(name):
    with open(os.path.join(run, name), "rb") as f:
        return f.read()
for target in ["recording_reader_fuzzer", "postprocess_fuzzer"]:
    put(target, "real-run", stream)
put("symbol_snapshot_fuzzer", "real-run", read("symbols.bin"))
put("archive_fuzzer", "real-run", read("prof.tar.gz")[:256 * 1024])
for target in ["stackcollapse_fuzzer", "perf_script_import_fuzzer"]:
    put(target, "real-run", read("perf_script.out")[:128 * 1024])
put("flamegraph_fuzzer", "real-run", read("folded_stacks.out")[:64 * 1024])
EOF
  else
    echo "fuzz: could not take a real run with $profcpu; using the other seeds" >&2
  fi
  rm -rf "$run_out"
fi

# Extra read-only corpus folders for a target.
extra_corpora() {
  case "$1" in
    stackcollapse_fuzzer | perf_script_import_fuzzer)
      echo "$shared/testdata/stackcollapse-perf/input" ;;
    flamegraph_fuzzer) echo "$shared/testdata/stackcollapse-perf/expected" ;;
  esac
}

manifest=$build/fuzz_targets.txt
failed=()
summary=()
while read -r name binary max_len committed; do
  if (($#)) && [[ " $* " != *" $name "* ]]; then continue; fi
  work=$build/fuzz-corpus/$name
  crashes=$build/fuzz-crashes
  mkdir -p "$work" "$crashes"
  dirs=("$work")
  for d in "$committed" "$seeds/$name" $(extra_corpora "$name"); do
    [ -d "$d" ] && dirs+=("$d")
  done
  log=$build/fuzz-logs/$name.log
  mkdir -p "$(dirname "$log")"
  echo "== fuzz: $name for ${seconds}s"
  # -timeout: one input taking 10 s is a hang (bounded time is a requirement);
  # -rss_limit_mb: bounded memory, with room for ASan's own.
  if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$binary" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
      -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 \
      -artifact_prefix="$crashes/$name-" "${dirs[@]}" >"$log" 2>&1; then
    runs=$(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*' || echo "?")
    summary+=("$(printf '%-28s %10s runs  coverage %s' "$name" "$runs" "$cov")")
  else
    failed+=("$name")
    summary+=("$(printf '%-28s FAILED (see %s)' "$name" "$log")")
    grep -E -A40 '^==[0-9]+==ERROR|fuzz invariant failed|SUMMARY:|Test unit written' "$log" | head -n 80 >&2 || tail -n 60 "$log" >&2
  fi
done <"$manifest"

echo "== fuzz summary (${seconds}s each)"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}; inputs in $build/fuzz-crashes/" >&2
  exit 1
fi
