#!/usr/bin/env bash
# Configures and builds urlsieve with warnings as errors (URLSIEVE_WERROR=ON; a plain cmake build
# leaves it off).
#   scripts/build.sh [--sanitize asan|tsan | --release] [--build-dir DIR] [--target T]... [cmake args]
# Default build directory: build/ (RelWithDebInfo); build-asan/, build-tsan/ with --sanitize;
# build-release/ with --release (-O3, where GCC's optimizer-driven warnings show up).
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
release=""
build_dir=""
targets=()
extra=()
while (($#)); do
  case "$1" in
    --sanitize) sanitize="$2"; shift 2 ;;
    --release) release=1; shift ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --target) targets+=(--target "$2"); shift 2 ;;  # only these (default: all)
    *) extra+=("$1"); shift ;;
  esac
done
if [[ -n "$sanitize" && -n "$release" ]]; then
  echo "build.sh: --sanitize and --release exclude each other" >&2
  exit 2
fi
build_dir=${build_dir:-build${sanitize:+-$sanitize}${release:+-release}}

args=(-S . -B "$build_dir" -G Ninja -DURLSIEVE_SANITIZE="$sanitize" -DURLSIEVE_WERROR=ON)
if [[ -n "$sanitize" ]]; then
  # Sanitizer builds run the tests only; benchmarks there would measure the sanitizer.
  args+=(-DURLSIEVE_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1)
fi
if [[ -n "$release" ]]; then
  args+=(-DCMAKE_BUILD_TYPE=Release)
fi
cmake "${args[@]}" ${extra[@]+"${extra[@]}"} >/dev/null
cmake --build "$build_dir" -j "$(nproc)" ${targets[@]+"${targets[@]}"}
