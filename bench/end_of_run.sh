#!/usr/bin/env bash
# Issue 29's table: the end of a run on 16 CPUs, on recordings grown to stand
# for 16 CPUs (bench/grow_recording; busycfi, fp+cfi, as recorded: it cannot
# grow stack copies), new and old profcpu side by side, with
# the stage times and what 16 cores would give (bench/end_of_run.py says how).
#   [OLD_PROFCPU=/path/to/old/profcpu] [ONLY=perf999,perf4999,busy,busycfi] [RUNS=3] \
#     bash bench/end_of_run.sh
set -euo pipefail
[ -x /usr/bin/time ] || { echo "/usr/bin/time is required: apt-get install time" >&2; exit 1; }
source "$(dirname "$0")/build_setup.sh"
# Copied first: a rebuild while this runs must not swap the code measured.
cp "$profcpu" "$work/profcpu"
cp "$build/bench/grow_recording" "$work/grow_recording"
old=()
if [ -n "${OLD_PROFCPU:-}" ]; then
  cp "$OLD_PROFCPU" "$work/old-profcpu"
  old=(--old "$work/old-profcpu")
fi
python3 "$root/bench/end_of_run.py" --profcpu "$work/profcpu" "${old[@]}" \
  --grow-recording "$work/grow_recording" --build "$build" --work "$work" --runs "${RUNS:-3}" "$@"
