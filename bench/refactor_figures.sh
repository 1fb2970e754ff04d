#!/usr/bin/env bash
# The two speed figures issue 23 holds within +-1 % across its refactor, measured on one build:
#   1. bench/crawl_profile.sh's instructions per page (callgrind, one single-threaded crawl of the
#      generated 300-page site), as that script prints it;
#   2. bench_seen_filter under callgrind: the total instructions (Ir, callgrind's "Collected") of
#      one iteration each of BM_SeenFilterBatch and BM_SeenFilterSingle (Bloom mode, in memory,
#      ~1M generated URLs of which a third are re-spellings). Google Benchmark 1.7.1 (Debian) has
#      no fixed-iteration flag; --benchmark_min_time=0 makes every benchmark stop after its first
#      iteration (elapsed >= 0), so the work, and the count, does not depend on the machine's load.
#
#   bench/refactor_figures.sh BUILD_DIR [--only crawl|seen] [--keep]
#       BUILD_DIR   a build with crawler/urlsieve, tools/urlsieve-demo-site and
#                   bench/bench_seen_filter (RelWithDebInfo or Release; compare like with like);
#                   a relative path is taken from the repository root, as the others' --build-dir
#       --only      run only measurement 1 (crawl) or 2 (seen)
#       --keep      keep the temp dir (callgrind output, crawl_profile.sh's output)
#
# Prints two labelled lines at the end:
#   crawl_profile instructions per page: N
#   bench_seen_filter callgrind instructions: N
# Takes about 2 minutes on a 2-core machine. Before issue 23's refactor (77defcf, RelWithDebInfo,
# GCC 12, valgrind 3.19), three runs: 20,723,787 / 20,718,324 / 20,721,212 per page (within
# 0.03 %: thread timing) and 7,263,030,782 / 7,263,030,222 / 7,263,028,988 instructions.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

build=
keep=0
only=
while (($#)); do
  case $1 in
    --keep) keep=1; shift ;;
    --only) only=$2; shift 2 ;;
    -h | --help) print_help 23; exit 0 ;;
    -*) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    *) [[ -z $build ]] || { echo "one build dir only (see --help)" >&2; exit 2; }; build=$1; shift ;;
  esac
done
[[ -n $build ]] || { echo "usage: bench/refactor_figures.sh BUILD_DIR [--only crawl|seen] [--keep]" >&2; exit 2; }
[[ -z $only || $only == crawl || $only == seen ]] || { echo "--only takes crawl or seen" >&2; exit 2; }
build=$(cd "$build" && pwd)
seen_bench="$build/bench/bench_seen_filter"
need_built "cmake --build $build --target bench_seen_filter" "$seen_bench"
command -v valgrind > /dev/null || { echo "missing valgrind: apt-get install -y valgrind" >&2; exit 1; }

make_tmp urlsieve_refactor_figures
on_exit cleanup_all

# 1. crawl_profile.sh, default site (300 pages); its line "pages fetched: P; total instructions:
# T = N per page" gives the figure.
measure_crawl() {
  echo "== bench/crawl_profile.sh --build-dir $build"
  bench/crawl_profile.sh --build-dir "$build" | tee "$tmp/crawl_profile.txt"
  per_page=$(sed -n 's/^pages fetched: .* = \([0-9,]*\) per page$/\1/p' "$tmp/crawl_profile.txt")
  crawl_total=$(sed -n 's/^pages fetched: .*; total instructions: \([0-9,]*\) = .*/\1/p' \
    "$tmp/crawl_profile.txt")
  [[ -n $per_page ]] || { echo "no instructions per page in crawl_profile.sh's output" >&2; exit 1; }
}

# 2. bench_seen_filter under callgrind, one iteration of each benchmark.
measure_seen() {
  local filter='^BM_SeenFilter(Batch|Single)$'
  echo "== valgrind --tool=callgrind $seen_bench --benchmark_filter='$filter' --benchmark_min_time=0"
  valgrind --tool=callgrind --callgrind-out-file="$tmp/seen_filter.callgrind" \
    "$seen_bench" --benchmark_filter="$filter" --benchmark_min_time=0 \
    --benchmark_out="$tmp/seen_filter.json" --benchmark_out_format=json \
    > "$tmp/seen_filter.txt" 2> "$tmp/seen_filter.err" || {
    echo "bench_seen_filter failed under callgrind:" >&2
    tail -20 "$tmp/seen_filter.err" >&2
    exit 1
  }
  cat "$tmp/seen_filter.txt"
  # Every benchmark must have run exactly one iteration, or the count depends on the machine's speed.
  python3 - "$tmp/seen_filter.json" << 'PY'
import json, sys
runs = [(b["name"], b["iterations"]) for b in json.load(open(sys.argv[1]))["benchmarks"]]
if len(runs) != 2 or any(n != 1 for _, n in runs):
    sys.exit(f"expected 2 benchmarks at 1 iteration each, got {runs}")
PY
  seen_total=$(awk '$1 == "summary:" || $1 == "totals:" { print $2; exit }' "$tmp/seen_filter.callgrind")
  [[ -n $seen_total ]] || { echo "no totals in the callgrind output" >&2; exit 1; }
  seen_total=$(python3 -c 'import sys; print(f"{int(sys.argv[1]):,}")' "$seen_total")
}

[[ $only == seen ]] || measure_crawl
if [[ $only != crawl ]]; then
  [[ $only == seen ]] || echo
  measure_seen
fi

echo
echo "build: $build"
if [[ $only != seen ]]; then
  echo "crawl_profile total instructions: $crawl_total"
  echo "crawl_profile instructions per page: $per_page"
fi
[[ $only == crawl ]] || echo "bench_seen_filter callgrind instructions: $seen_total"
