#!/usr/bin/env bash
# Builds the profcpu image from source with containers/Dockerfile (its default
# `runtime` target: build stage, then the slim runtime stage) and prints how
# long it took and how big the image is. Needs no registry: the base is the
# debootstrap image scripts/container-images.sh imports.
#   scripts/build-image.sh [TAG]      (default localhost/profcpu:latest)
# The tests build the Dockerfile's `prebuilt` target around the binary they
# test instead (scripts/container-images.sh): the same runtime stage, without
# minutes of compiling in every CI run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tag=${1:-localhost/profcpu:latest}
base=localhost/profcpu-base:bookworm
podman image exists "$base" || {
  echo "build-image: $base is missing; scripts/container-images.sh BUILD_DIR makes it" >&2; exit 1; }
start=$(date +%s)
podman build --network host --build-arg "BASE=$base" \
  --ignorefile "$root/containers/Dockerfile.dockerignore" \
  -f "$root/containers/Dockerfile" -t "$tag" "$root" >&2
seconds=$(($(date +%s) - start))
size=$(podman image inspect --format '{{.Size}}' "$tag")
base_size=$(podman image inspect --format '{{.Size}}' "$base")
echo "build-image: $tag built in ${seconds}s; $((size / 1000000)) MB" \
     "($(((size - base_size) / 1000000)) MB over the $((base_size / 1000000)) MB base)"
