#!/usr/bin/env bash
# Installs what profcpu needs from Debian's packages. Idempotent and quiet:
# does nothing when all is installed.
#   bash scripts/setup.sh        everything: build, test and benchmark tools
#   bash scripts/setup.sh build  only what building profcpu and the demo needs
#                                (scripts/demo.sh: a first run without chromium,
#                                podman, docker, go, ...)
set -euo pipefail
scope=${1:-all}
case $scope in
  all|build) ;;
  *) echo "usage: bash scripts/setup.sh [all|build]" >&2; exit 2 ;;
esac

# What configuring and building needs (the test targets are configured too,
# so GoogleTest, libxml2 and python3 are here; they are small).
packages=(
  build-essential cmake pkg-config ccache
  libelf-dev libdw-dev libzstd-dev libabsl-dev
  libgtest-dev libgmock-dev libbpf-dev nlohmann-json3-dev zlib1g-dev
  libdeflate-dev          # profile.html's data, compressed in pieces on several cores
  libprotobuf-dev protobuf-compiler  # the pprof export (render/proto/profile.proto)
  liblzma-dev libbz2-dev  # libdw.a's decompressors (static link: cmake/StaticDeps.cmake)
  libcurl4-openssl-dev libdebuginfod-dev  # debug files from SSQP and debuginfod servers
  clang llvm bpftool      # BPF programs (collector/bpf/): compiled and skeletoned at build time
  python3 libxml2-dev     # configure-time: the integration tests' runner, the fuzzers' XML check
  libssl-dev              # tests/fixtures/crypto_chain hashes with libcrypto (issue 26)
  libunwind-dev           # libunwind against libdwfl (symbolize/libunwind_unwinder.h, bench/unwinders.sh)
)
if [ "$scope" = all ]; then
  packages+=(
    golang-go             # `go tool pprof` reads the pprof export in the tests
    chromium              # the flame graph's script is tested in a headless browser
    linux-perf            # the comparison in bench/ and nothing else
    debuginfod            # a real debuginfod server for test_symbol_servers
    nodejs                # JIT perf-map tests (node --perf-basic-prof)
    libxml2-utils zstd
    python3-yaml           # containers/k8s/ manifests read by test_manifests
    libcap2-bin util-linux  # capsh and setpriv: tests with fewer privileges
    podman runc debootstrap  # sidecar tests: images from a local rootfs, no registry
    wrk                     # load on the example .NET service (test_sidecar_path)
    libc6-dbg               # this machine's own debug files, found by postprocess
    docker.io               # profile-container -engine docker, tested on a private dockerd
    libclang-rt-14-dev      # libFuzzer for clang 14
    libtsan2                # ThreadSanitizer's runtime for g++ (scripts/tsan.sh)
    clickhouse-server       # the fleet store's shards in tests (scripts/clickhouse-shards.sh)
    clickhouse-client       # bench/fleet.sh's insert baseline and sampled-executable check
  )
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# A node from elsewhere on PATH (e.g. a preinstalled one) is as good as Debian's.
if command -v node >/dev/null 2>&1; then
  kept=()
  for p in "${missing[@]}"; do [ "$p" = nodejs ] || kept+=("$p"); done
  missing=("${kept[@]}")
fi

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ "$scope" = build ]; then exit 0; fi

# Installs npm PACKAGE@VERSION into DIR/node_modules unless it is there
# (npm itself from Debian if missing).
npm_install_into() {
  local dir=$1 package=$2
  [ -f "$dir/node_modules/${package%@*}/package.json" ] && return 0
  command -v npm >/dev/null 2>&1 || {
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null
  }
  echo "setup: installing ${package%@*} into $dir" >&2
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$package" >/dev/null
}

# The Kubernetes API schema, offline, for the manifests in containers/k8s/
# (tests/integration/test_manifests.py): no Debian package ships it; the npm
# package kubernetes-models does, as validators generated from the OpenAPI.
npm_install_into /opt/profcpu-k8s kubernetes-models@5.1.0

# puppeteer-core drives Debian's chromium for profile.html's browser tests
# (tests/browser/page_driver.js, tests/integration/test_profile_page.py,
# bench/page.sh). The -core package downloads no browser of its own. 24.x
# still runs on Debian's Node.js 18 (25.x needs 22).
npm_install_into /opt/profcpu-browser puppeteer-core@24.43.1

# BPF and tracepoint work (later modes) needs tracefs; harmless when present.
if [ -d /sys/kernel/tracing ] && [ -z "$(ls -A /sys/kernel/tracing 2>/dev/null)" ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi
