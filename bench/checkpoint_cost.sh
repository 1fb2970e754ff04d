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
    -h | --help) sed -n '2,23s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $pages =~ ^[0-9]+$ && $pages -ge 11 ]] || { echo "--pages must be an integer >= 11" >&2; exit 2; }
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "--threads must be a positive integer" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "--runs must be a positive integer" >&2; exit 2; }
for s in $intervals; do
  [[ $s =~ ^[0-9]+$ ]] || { echo "--intervals: '$s' is not a number of seconds" >&2; exit 2; }
done

urlsieve="$build/crawler/urlsieve"
server_bin="$build/tools/urlsieve-demo-site"
for f in "$urlsieve" "$server_bin"; do
  [[ -x $f ]] || {
    echo "missing $f: cmake --build $build --target urlsieve urlsieve-demo-site" >&2
    exit 1
  }
done

tmp=$(mktemp -d /tmp/urlsieve_ckptbench.XXXXXX)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2> /dev/null || true
    wait "$server_pid" 2> /dev/null || true
  fi
  if ((keep)); then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "generating $pages pages ..."
/usr/bin/python3 bench/gen_static_site.py "$tmp/site" --pages "$pages" | sed 's/^/  site: /'

"$server_bin" --root "$tmp/site" --port 0 > "$tmp/server.out" 2> "$tmp/server.err" &
server_pid=$!
base=
for ((i = 0; i < 100; i++)); do
  base=$(head -1 "$tmp/server.out")
  [[ -n $base ]] && break
  kill -0 "$server_pid" 2> /dev/null || break
  sleep 0.1
done
[[ -n $base ]] || { echo "urlsieve-demo-site did not start:" >&2; cat "$tmp/server.err" >&2; exit 1; }
echo "$base/index.html" > "$tmp/seeds.txt"

# The baseline checkpoints only at the end: its interval is far longer than the crawl.
baseline=86400
settings=("$baseline" $intervals)
declare -A times
crawl_once() { # crawl_once INTERVAL RUN -> prints the wall time in seconds
  local out="$tmp/out-$1-$2"
  local start end
  start=$(date +%s%N)
  "$urlsieve" crawl --seeds "$tmp/seeds.txt" --out "$out" --threads "$threads" \
    --per-host "$threads" --delay-ms 0 --max-depth 100 --ignore-robots --checkpoint-s "$1" \
    ${exact[@]+"${exact[@]}"} > "$tmp/crawl.log" 2>&1 || {
    echo "crawl --checkpoint-s $1 failed:" >&2
    tail -20 "$tmp/crawl.log" >&2
    exit 1
  }
  end=$(date +%s%N)
  local fetched
  fetched=$(wc -l < "$out/pages.jsonl")
  if ((fetched != pages)); then
    echo "crawl --checkpoint-s $1 fetched $fetched of $pages pages" >&2
    exit 1
  fi
  rm -rf "$out"
  awk -v ns=$((end - start)) 'BEGIN { printf "%.4f", ns / 1e9 }'
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
    ratios[$s]="${ratios[$s]:-} $(awk -v t="${round[$s]}" -v b="${round[$baseline]}" 'BEGIN { print t / b }')"
  done
done

median() { tr ' ' '\n' <<< "$1" | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END {
  print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
base_time=$(median "${times[$baseline]}")

echo
echo "site: $pages pages on $base; $threads threads; ${exact[*]:-Bloom-only}; $runs runs per" \
  "setting (median); $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
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
