#!/usr/bin/env bash
# Configures and builds urlsieve with warnings as errors (URLSIEVE_WERROR=ON; a plain cmake build
# leaves it off).
#   scripts/build.sh [--sanitize asan|tsan] [--build-dir DIR] [--target T]... [cmake args]
# Default: build/, Release (-O3, where GCC's optimizer-driven warnings such as -Wrestrict show up,
# and what benchmarks measure); build-asan/, build-tsan/ with --sanitize. Later cmake args win,
# e.g. -DCMAKE_BUILD_TYPE=RelWithDebInfo for symbols in perf or callgrind.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
build_dir=""
targets=()
extra=()
while (($#)); do
  case "$1" in
    --sanitize) sanitize="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --target) targets+=(--target "$2"); shift 2 ;;  # only these (default: all)
    *) extra+=("$1"); shift ;;
  esac
done
build_dir=${build_dir:-build${sanitize:+-$sanitize}}

args=(-S . -B "$build_dir" -G Ninja -DURLSIEVE_SANITIZE="$sanitize" -DURLSIEVE_WERROR=ON)
if [[ -n "$sanitize" ]]; then
  # Sanitizer builds run the tests only; benchmarks there would measure the sanitizer.
  # -g1: line tables for the sanitizer's stack traces, a quarter less compile time than -g.
  args+=(-DURLSIEVE_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1
         -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1)
else
  args+=(-DCMAKE_BUILD_TYPE=Release)
fi
cmake "${args[@]}" ${extra[@]+"${extra[@]}"} >/dev/null
cmake --build "$build_dir" -j "$(nproc)" ${targets[@]+"${targets[@]}"}
