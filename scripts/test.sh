#!/usr/bin/env bash
# Sets everything up, builds, and runs every test.
#   scripts/test.sh [--sanitize asan|tsan | --release] [--build-dir DIR] [cmake args]
# (the arguments of scripts/build.sh, which builds with warnings as errors).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
scripts/build.sh "$@"
build_dir=build
while (($#)); do  # the directory scripts/build.sh chose
  case "$1" in
    --sanitize) build_dir="build-$2"; shift 2 ;;
    --release) build_dir="build-release"; shift ;;
    --build-dir) build_dir="$2"; break ;;
    *) shift ;;
  esac
done
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
