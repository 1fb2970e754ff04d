#!/usr/bin/env bash
# The generational seen set (--revisit-after) against the static Bloom filter at the same ε:
# bits per URL at steady state (N URLs per revisit period) and ns per test-and-insert, and their
# ratios (issue 14's target: <= 1.6x the static filter's bits per URL). See bench_generational.cc.
#
#   bench/generational.sh [BUILD_DIR]      default: build
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
build=${1:-build}
bench="$build/bench/bench_generational"
need_built "cmake --build $build --target bench_generational" "$bench"
tmp=$(mktemp /tmp/urlsieve_generational.XXXXXX.json)
trap 'rm -f "$tmp"' EXIT
"$bench" --benchmark_format=json --benchmark_out="$tmp" --benchmark_out_format=json > /dev/null
python3 - "$tmp" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
static = {}
for r in runs:
    name = r["name"].split("/")
    if name[0] == "BM_StaticBloom":
        static[name[1]] = r
print(f"{'filter':<28}{'eps':>8}{'bits/URL':>10}{'ratio':>8}{'ns/insert':>11}{'ratio':>8}")
for r in runs:
    name = r["name"].split("/")
    s = static[name[1]]
    eps = 1 / int(name[1])
    label = "static" if name[0] == "BM_StaticBloom" else f"generational G={name[2]}"
    print(f"{label:<28}{eps:>8.0e}{r['bits_per_url']:>10.1f}"
          f"{r['bits_per_url'] / s['bits_per_url']:>7.3f}x{r['ns_per_insert']:>11.1f}"
          f"{r['ns_per_insert'] / s['ns_per_insert']:>7.2f}x")
PY
