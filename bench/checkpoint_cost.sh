#!/usr/bin/env bash
# What checkpoints cost a crawl: crawls one generated static site (bench/gen_static_site.py, served
# by urlsieve-demo-site on 127.0.0.1, politeness delay 0) with checkpoints only at the end (an
# interval longer than the crawl: the baseline), after every page (--checkpoint-s 0) and at a few
# candidate intervals, all in one run, and prints wall times and ratios against the baseline.
#
#   bench/checkpoint_cost.sh [--pages N] [--threads T] [--runs R] [--intervals "0 1 2 5"]
#                            [--exact] [--build-dir DIR] [--keep]
#       --pages N      pages in the generated site (default 1500; 10-60 KB, 50-100 links each)
#       --threads T    urlsieve --threads and --per-host (default 2)
#       --runs R       crawls per setting, interleaved; the median is reported (default 3)
#       --intervals    the --checkpoint-s values to compare (default "0 1 2 5")
#       --exact        crawl with --exact (the SQLite exact store as well)
#       --build-dir    where urlsieve and urlsieve-demo-site were built (default build)
#       --keep         keep the temp dir (site, crawl outputs) and print its path
#
# The crawl is short (a few seconds), so an interval of s seconds fires about wall/s times; the
# per-checkpoint cost is measured from the --checkpoint-s 0 crawl ((its time - baseline) / pages,
# one checkpoint per page), and "projected" is that cost over the interval: the overhead the
# interval costs a crawl of any length. Settings run in rounds (one crawl of each per round) and
# ratios are taken within a round: on a shared machine the load drifts between rounds.
# Targets (issue 10): --checkpoint-s 0 <= 2x the baseline; the default interval <= 1.05x.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

pages=1500
threads=2
runs=3
intervals="0 1 2 5"
exact=()
build=build
keep=0
while (($#)); do
  case $1 in
    --pages) pages=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --intervals) intervals=$2; shift 2 ;;
    --exact) exact=(--exact); shift ;;
    --build-dir) build=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) print_help 23; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
need_pages "$pages"
need_positive --threads "$threads"
need_positive --runs "$runs"
for s in $intervals; do
  [[ $s =~ ^[0-9]+$ ]] || { echo "--intervals: '$s' is not a number of seconds" >&2; exit 2; }
done

urlsieve="$build/crawler/urlsieve"
server_bin="$build/tools/urlsieve-demo-site"
need_built "cmake --build $build --target urlsieve urlsieve-demo-site" "$urlsieve" "$server_bin"

make_tmp urlsieve_ckptbench
on_exit cleanup_all

serve_generated_site "$server_bin" "$pages" /usr/bin/python3
echo "$base/index.html" > "$tmp/seeds.txt"

# The baseline checkpoints only at the end: its interval is far longer than the crawl.
baseline=86400
settings=("$baseline" $intervals)
declare -A times
crawl_once() { # crawl_once INTERVAL RUN -> prints the wall time in seconds
  local out="$tmp/out-$1-$2"
  local start wall
  start=$(now_ns)
  "$urlsieve" crawl --seeds "$tmp/seeds.txt" --out "$out" --threads "$threads" \
    --per-host "$threads" --delay-ms 0 --max-depth 100 --ignore-robots --checkpoint-s "$1" \
    ${exact[@]+"${exact[@]}"} > "$tmp/crawl.log" 2>&1 || {
    echo "crawl --checkpoint-s $1 failed:" >&2
    tail -20 "$tmp/crawl.log" >&2
    exit 1
  }
  wall=$(seconds_since "$start" 4)
  local fetched
  fetched=$(wc -l < "$out/pages.jsonl")
  if ((fetched != pages)); then
    echo "crawl --checkpoint-s $1 fetched $fetched of $pages pages" >&2
    exit 1
  fi
  rm -rf "$out"
  echo "$wall"
}

# Each round crawls every setting once, starting at a different one each round; ratios are taken
# within a round (the machine's load drifts less within one round than across them), and the
# median over rounds is reported.
declare -A ratios
n=${#settings[@]}
for ((run = 1; run <= runs; run++)); do
  declare -A round=()
  for ((k = 0; k < n; k++)); do
    s=${settings[$(((k + run - 1) % n))]}
    t=$(crawl_once "$s" "$run")
    echo "run $run: --checkpoint-s $s: $t s"
    times[$s]="${times[$s]:-} $t"
    round[$s]=$t
  done
  for s in "${settings[@]}"; do
    ratios[$s]="${ratios[$s]:-} $(ratio "${round[$s]}" "${round[$baseline]}")"
  done
done

base_time=$(median "${times[$baseline]}")

echo
echo "site: $pages pages on $base; $threads threads; ${exact[*]:-Bloom-only}; $runs runs per" \
  "setting (median); $(machine_load)"
printf '%-22s %8s %9s %8s %11s\n' "--checkpoint-s" "wall s" "pages/s" "ratio" "projected"
per_checkpoint=
if [[ " $intervals " == *" 0 "* ]]; then
  per_checkpoint=$(awk -v r="$(median "${ratios[0]}")" -v b="$base_time" -v p="$pages" 'BEGIN {
    c = (r - 1) * b / p; print (c > 0 ? c : 0) }')
fi
for s in "${settings[@]}"; do
  t=$(median "${times[$s]}")
  label=$s
  [[ $s == "$baseline" ]] && label="end only (baseline)"
  awk -v l="$label" -v t="$t" -v r="$(median "${ratios[$s]}")" -v p="$pages" -v s="$s" \
    -v c="$per_checkpoint" -v base="$baseline" 'BEGIN {
    proj = "";
    if (c != "" && s > 0 && s != base) proj = sprintf("%10.4fx", 1 + c / s);
    printf "%-22s %8.3f %9.1f %7.3fx %11s\n", l, t, p / t, r, proj }'
done
if [[ -n $per_checkpoint ]]; then
  awk -v c="$per_checkpoint" 'BEGIN {
    printf "cost of one checkpoint: %.2f ms (from the --checkpoint-s 0 crawl)\n", 1000 * c }'
fi
echo "(wall s, pages/s: medians over the runs; ratio: median over the rounds of the wall time over"
echo " the same round's baseline; projected: 1 + checkpoint cost / interval, the overhead of that"
echo " interval on a crawl of any length; targets: 0 <= 2x, the default <= 1.05x)"
