#!/usr/bin/env bash
# profile.html's load time and size next to flamegraph.svg's and speedscope's
# on the same synthetic perf script text (16 CPUs, ~100 threads, thousands of
# distinct stacks 10-60 deep, 60 s) of 10k, 200k and 1M samples, in headless
# Chromium driven by tests/browser/page_driver.js. Prints one table, and the
# issue's targets (200k samples < 2 s, 1M < 5 s, <= 16 B/sample). Builds
# profcpu (unless SKIP_BUILD), installs puppeteer-core (scripts/setup.sh) and
# speedscope (npm, into ~/.cache/profcpu-bench) when missing.
#   bash bench/page.sh [--sizes 10000,200000] [--runs 3] [--no-speedscope]
set -euo pipefail
source "$(dirname "$0")/build_setup.sh"
command -v npm >/dev/null 2>&1 || {
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null
}
python3 "$root/bench/page.py" --profcpu "$profcpu" "$@"
