#!/usr/bin/env bash
# Installs the Debian 12 packages kingman needs, and only those that are missing.
#
#   bash scripts/install_deps.sh [--dry-run] [build|main|bench]
#
#   build  (default) compiler, CMake and the libraries to build kingman and run its tests
#   main   build + python3-numpy python3-scipy python3-sklearn (the main job's baseline)
#   bench  main + python3-fastcluster python3-matplotlib hyperfine (peer-tool benchmarks)
#
# Checks each package with dpkg first; runs `apt-get update` and
# `apt-get install -y --no-install-recommends` only when something is missing. Runs apt-get
# directly as root, through sudo otherwise (when sudo exists). --dry-run only lists what is
# missing. Exits non-zero if packages are missing and cannot be installed.
set -euo pipefail

BUILD_PACKAGES=(cmake g++ make libtbb-dev libeigen3-dev libboost-math-dev libgtest-dev
                libbenchmark-dev libcli11-dev nlohmann-json3-dev libfmt-dev)
MAIN_PACKAGES=(python3-numpy python3-scipy python3-sklearn)
BENCH_PACKAGES=(python3-fastcluster python3-matplotlib hyperfine)

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }

dry_run=0
set_name=build
for arg in "$@"; do
  case "$arg" in
    --dry-run|-n) dry_run=1 ;;
    build|main|bench) set_name="$arg" ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install_deps.sh: unknown argument '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done

wanted=("${BUILD_PACKAGES[@]}")
case "$set_name" in
  main)  wanted+=("${MAIN_PACKAGES[@]}") ;;
  bench) wanted+=("${MAIN_PACKAGES[@]}" "${BENCH_PACKAGES[@]}") ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install_deps.sh: dpkg not found; this script is for Debian 12. Install by hand:" >&2
  echo "  ${wanted[*]}" >&2
  exit 1
fi

missing=()
for pkg in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed'; then
    missing+=("$pkg")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install_deps.sh: all ${#wanted[@]} packages for '$set_name' are installed"
  exit 0
fi

echo "install_deps.sh: missing for '$set_name': ${missing[*]}"
if [ "$dry_run" -eq 1 ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install_deps.sh: not root and no sudo; as root run:" >&2
  echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
echo "install_deps.sh: installed ${missing[*]}"
