#!/usr/bin/env bash
# Builds the container images the podman tests use, when they are missing:
#   localhost/profcpu-base:bookworm  a Debian bookworm minbase rootfs (debootstrap),
#                                    imported: no registry is needed
#   localhost/profcpu:dev            the sidecar image around build/scripts/profcpu:
#                                    containers/Dockerfile's `prebuilt` target, whose
#                                    runtime stage is the released image's (rebuilt
#                                    whenever that binary or the Dockerfile changed)
# Also writes the containers.conf podman needs on this kind of kernel (runc,
# lower ulimits) unless one exists. Usage: container-images.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:-$root/build}
base=localhost/profcpu-base:bookworm
sidecar=localhost/profcpu:dev

if [ ! -f /etc/containers/containers.conf ] && [ -z "${CONTAINERS_CONF:-}" ]; then
  mkdir -p /etc/containers
  cat > /etc/containers/containers.conf <<'CONF'
[engine]
runtime = "runc"
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
CONF
fi

if ! podman image exists "$base"; then
  rootfs=$(mktemp -d /var/tmp/profcpu-rootfs.XXXXXX)
  echo "container-images: debootstrap bookworm (about a minute)" >&2
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >/dev/null
  tar -C "$rootfs" -c . | podman import - "$base" >/dev/null
  rm -rf "$rootfs"
fi

binary=$build_dir/scripts/profcpu
[ -x "$binary" ] || { echo "container-images: build profcpu first ($binary)" >&2; exit 1; }
sum=$(cat "$binary" "$root/containers/Dockerfile" | sha256sum | cut -c1-16)
if [ "$(podman image inspect --format '{{index .Labels "profcpu.binary"}}' "$sidecar" 2>/dev/null)" != "$sum" ]; then
  previous=$(podman image inspect --format '{{.Id}}' "$sidecar" 2>/dev/null || true)
  context=$(mktemp -d)
  cp "$binary" "$context/profcpu"
  echo "container-images: building $sidecar" >&2
  # Building from source (the Dockerfile's default target) takes minutes more
  # than the tests can spend: docs/containers.md, "Building the image".
  podman build -q --network host --build-arg "BASE=$base" --label "profcpu.binary=$sum" \
    --target prebuilt --build-context "profcpu-bin=$context" \
    -f "$root/containers/Dockerfile" -t "$sidecar" "$context" >/dev/null
  rm -rf "$context"
  # The replaced image is left untagged: drop it, or every rebuild (each test
  # build alternates the binary) keeps another 300 MB. In use, it stays.
  if [ -n "$previous" ]; then podman rmi "$previous" >/dev/null 2>&1 || true; fi
fi
echo "$base $sidecar"
