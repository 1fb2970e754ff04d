#!/usr/bin/env bash
# Sets everything up, builds, and runs every test.
#   scripts/test.sh [--fast] [--sanitize asan|tsan] [--build-dir DIR] [cmake args]
# (the arguments of scripts/build.sh, which builds with warnings as errors).
# --fast: the quick loop — builds only the unit-test targets (`unit_tests`) and runs the tests
# labelled `unit` (no urlsieve binary, no crawl over a site, no Redis; tests/CMakeLists.txt).
# Without it every label runs: unit, e2e, redis, cluster, pip.
set -euo pipefail
cd "$(dirname "$0")/.."

fast=""
args=()
for arg in "$@"; do
  if [[ "$arg" == "--fast" ]]; then fast=1; else args+=("$arg"); fi
done
set -- ${args[@]+"${args[@]}"}

scripts/setup.sh
if [[ -n "$fast" ]]; then
  scripts/build.sh --target unit_tests "$@"
else
  scripts/build.sh "$@"
fi
build_dir=build
while (($#)); do  # the directory scripts/build.sh chose
  case "$1" in
    --sanitize) build_dir="build-$2"; shift 2 ;;
    --build-dir) build_dir="$2"; break ;;
    *) shift ;;
  esac
done
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
# Three tests per core: most of them wait (a crawl's politeness delays, servers starting), a crawl
# test uses ~5 % of a core; the longest (the pip install, compiling) is started first.
ctest --test-dir "$build_dir" --output-on-failure -j "$(($(nproc) * 3))" ${fast:+-L '^unit$'}
