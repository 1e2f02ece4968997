#!/usr/bin/env bash
# Builds everything in a fresh build directory and runs the whole test suite (all labels:
# unit, cli, stats, package).
#
#   bash scripts/run_tests.sh
#   KINGMAN_SANITIZER=address|undefined|thread bash scripts/run_tests.sh
#
# Plain run: build-test/ (Release). With KINGMAN_SANITIZER set: build-test-<sanitizer>/ with
# -DKINGMAN_SANITIZER=<sanitizer> and the benchmarks left out (-DKINGMAN_BUILD_BENCH=OFF).
# The build directory is removed first; KINGMAN_KEEP_BUILD=1 reuses it (incremental build).
# Extra CMake configure arguments can be passed in KINGMAN_CMAKE_ARGS.
# Exits non-zero if the build or any test fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SAN="${KINGMAN_SANITIZER:-}"
configure_args=(-DCMAKE_BUILD_TYPE=Release)
case "$SAN" in
  "")
    BUILD=build-test ;;
  address|undefined|thread)
    BUILD="build-test-$SAN"
    configure_args+=(-DKINGMAN_SANITIZER="$SAN" -DKINGMAN_BUILD_BENCH=OFF) ;;
  *)
    echo "run_tests.sh: KINGMAN_SANITIZER must be address, undefined or thread, got '$SAN'" >&2
    exit 2 ;;
esac

# Sanitizer reports fail the test that triggers them (the caller's settings win).
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"

JOBS="$(nproc)"

echo "== installing missing packages"
bash scripts/install_deps.sh build

if [ "${KINGMAN_KEEP_BUILD:-0}" != 1 ]; then
  rm -rf "$BUILD"
fi

echo "== configuring $BUILD/ (${configure_args[*]})"
# shellcheck disable=SC2086
cmake -S . -B "$BUILD" "${configure_args[@]}" ${KINGMAN_CMAKE_ARGS:-}

echo "== building ($JOBS jobs)"
cmake --build "$BUILD" -j"$JOBS"

echo "== testing"
ctest --test-dir "$BUILD" --output-on-failure --no-tests=error -j"$JOBS"
echo "== all tests passed ($BUILD)"
