#!/usr/bin/env bash
# Configures and builds urlsieve.  scripts/build.sh [--sanitize asan|tsan] [--build-dir DIR]
# Default build directory: build/ (build-asan/, build-tsan/ with --sanitize).
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
build_dir=""
extra=()
while (($#)); do
  case "$1" in
    --sanitize) sanitize="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    *) extra+=("$1"); shift ;;
  esac
done
build_dir=${build_dir:-build${sanitize:+-$sanitize}}

args=(-S . -B "$build_dir" -G Ninja -DURLSIEVE_SANITIZE="$sanitize")
if [[ -n "$sanitize" ]]; then
  # Sanitizer builds run the tests only; benchmarks there would measure the sanitizer.
  args+=(-DURLSIEVE_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1)
fi
cmake "${args[@]}" ${extra[@]+"${extra[@]}"} >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
