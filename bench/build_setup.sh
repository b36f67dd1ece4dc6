# Sourced by the bench scripts: builds profcpu (unless SKIP_BUILD) and makes a
# scratch folder removed on exit. Sets: root, build, profcpu, work.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
if [ -z "${SKIP_BUILD:-}" ]; then
  bash "$root/scripts/setup.sh"
  BUILD_DIR=$build bash "$root/scripts/build.sh" >/dev/null
fi
profcpu=$build/scripts/profcpu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
