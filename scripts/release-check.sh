#!/usr/bin/env bash
# What to run before a release, beyond scripts/test.sh: builds the image from
# source as docs/containers.md says (minutes: it compiles profcpu in the
# Dockerfile's build stage) and checks that image records and archives a run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
# The debootstrap base image the from-source build starts from.
bash "$root/scripts/container-images.sh" "$root/build" >/dev/null
cd "$root/tests/integration"
python3 -m unittest -v test_image_from_source
