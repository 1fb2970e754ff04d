#!/usr/bin/env bash
# Crawls one generated static site served by nginx on 127.0.0.1 with urlsieve (Bloom, --exact,
# --warc, --no-content-seen), wget2 -r and Scrapy, in one run, next to the parse ceiling: how many
# pages/s gumbo alone parses on as many cores as the crawl has threads (a crawl that extracts links
# cannot beat it).
#
#   bench/crawl_vs_peers.sh [--pages N] [--threads T] [--build-dir DIR] [--keep] [--urlsieve-only]
#       --pages N      pages in the generated site (default 5000; 10-60 KB, 50-100 links each)
#       --threads T    urlsieve --threads/--per-host, wget2 --max-threads, and the parse-ceiling
#                      cores (default 2)
#       --build-dir    where urlsieve and bench_parse_ceiling were built (default build; Release)
#       --keep         keep the temp dir (site, nginx logs, crawl outputs) and print its path
#       --urlsieve-only  run only the urlsieve crawls (and the ceiling), not wget2 and Scrapy
#
# Wall time, CPU time and peak RSS come from /usr/bin/time -v; pages and duplicate requests from
# nginx's access log (a fresh nginx and log per tool): pages = distinct URIs served with 200,
# duplicates = requests beyond the first for a URI. Exits 1 when urlsieve misses a page.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

pages=5000
threads=2
build=build
keep=0
peers=1
while (($#)); do
  case $1 in
    --pages) pages=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --urlsieve-only) peers=0; shift ;;
    -h | --help) print_help 18; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
need_pages "$pages"
need_positive --threads "$threads"

urlsieve="$build/crawler/urlsieve"
ceiling_bin="$build/bench/bench_parse_ceiling"
python=/usr/bin/python3
need_built "cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release &&\
 cmake --build $build --target urlsieve bench_parse_ceiling" "$urlsieve" "$ceiling_bin"
missing=()
[[ -x $(nginx_bin) ]] || missing+=(nginx-light)
if ((peers)); then
  command -v wget2 > /dev/null || missing+=(wget2)
  [[ -x $python ]] && "$python" -c 'import scrapy' 2> /dev/null || missing+=(python3-scrapy)
fi
[[ -x /usr/bin/time ]] || missing+=(time)
need_missing_none "nginx-light wget2 python3-scrapy time"

make_tmp urlsieve_crawlbench
chmod 755 "$tmp" # nginx's workers run as an unprivileged user when started as root
on_exit cleanup_all

echo "generating $pages pages ..."
gen_site "$tmp/site" "$pages" "$python"
chmod -R a+rX "$tmp/site"
site_mb=$(du -sm "$tmp/site" | cut -f1)

port=$(free_port)
base="http://127.0.0.1:$port"
echo "$base/index.html" > "$tmp/seeds.txt"
mkdir -p "$tmp/nginx/logs"

# start_nginx LOG: a fresh nginx (foreground child) logging "status uri" per request to LOG.
start_nginx() {
  # shellcheck disable=SC2016 # nginx's variables
  start_nginx_on "$tmp/nginx" "$tmp/site" "$1" '$status $request_uri' "$port"
}

declare -A wall cpu usr sys rss served requests dupes other
names=()
# run NAME COMMAND...: one crawl against a fresh nginx, timed.
run() {
  local name=$1
  shift
  local log="$tmp/nginx/logs/${#names[@]}.log"
  names+=("$name")
  echo "running $name ..."
  start_nginx "$log"
  /usr/bin/time -v -o "$tmp/time" "$@" > "$tmp/out.log" 2>&1 || {
    echo "$name failed:" >&2
    tail -20 "$tmp/out.log" "$tmp/time" >&2
    exit 1
  }
  stop_nginx
  wall[$name]=$(time_v_wall "$tmp/time")
  usr[$name]=$(time_v_field "$tmp/time" "User time (seconds)")
  sys[$name]=$(time_v_field "$tmp/time" "System time (seconds)")
  cpu[$name]=$(time_v_cpu "$tmp/time")
  rss[$name]=$(time_v_field "$tmp/time" "Maximum resident set size (kbytes)")
  requests[$name]=$(wc -l < "$log")
  served[$name]=$(awk '$1 == 200 { print $2 }' "$log" | sort -u | wc -l)
  dupes[$name]=$(awk '{ n[$2]++ } END { d = 0; for (u in n) d += n[u] - 1; print d }' "$log")
  other[$name]=$(awk '$1 != 200' "$log" | wc -l)
}

# The parse ceiling. bench_parse_ceiling is single-threaded (items_per_second = pages per CPU
# second on one core), so it runs once per core in parallel and the rates add up: in CPU time
# (pages/s per core x cores, what an idle machine would give) and in wall time (what these cores
# gave while the machine was as busy as it is for the crawls; on a shared machine it is lower).
echo "parse ceiling: bench_parse_ceiling x $threads in parallel over the site ..."
for ((i = 0; i < threads; i++)); do
  URLSIEVE_SITE_DIR="$tmp/site" "$ceiling_bin" --benchmark_filter='BM_ParseCeiling|BM_ExtractCorpus' \
    --benchmark_min_time=3 --benchmark_format=json > "$tmp/ceiling.$i.json" 2> "$tmp/ceiling.$i.err" &
done
for job in $(jobs -p); do
  wait "$job" || { echo "bench_parse_ceiling failed:" >&2; cat "$tmp"/ceiling.*.err >&2; exit 1; }
done
read -r parse_core parse_all parse_wall extract_core parse_mbs < <("$python" - "$tmp"/ceiling.*.json << 'EOF'
import json, sys
rate = {"BM_ParseCeiling": [], "BM_ExtractCorpus": []}
wall, mbs = [], []
for path in sys.argv[1:]:
    for b in json.load(open(path))["benchmarks"]:
        assert b["time_unit"] == "ns"
        rate[b["name"]].append(b["items_per_second"])
        if b["name"] == "BM_ParseCeiling":
            wall.append(1e9 / b["real_time"])
            mbs.append(b["bytes_per_second"] / 1e6)
p, e = rate["BM_ParseCeiling"], rate["BM_ExtractCorpus"]
print(sum(p) / len(p), sum(p), sum(wall), sum(e) / len(e), sum(mbs) / len(mbs))
EOF
)

crawl=("$urlsieve" crawl --seeds "$tmp/seeds.txt" --threads "$threads" --delay-ms 0 --per-host "$threads"
  --max-depth 100 --checkpoint-s 30 --ignore-robots)
run "urlsieve" "${crawl[@]}" --out "$tmp/out-bloom"
run "urlsieve --exact" "${crawl[@]}" --out "$tmp/out-exact" --exact
run "urlsieve --warc" "${crawl[@]}" --out "$tmp/out-warc" --warc
# The content-seen test's cost (docs/features/content-seen.md): the default crawl has it.
run "urlsieve no-content" "${crawl[@]}" --out "$tmp/out-nocontent" --no-content-seen
if ((peers)); then
  run "wget2 -r" wget2 -r -l 100 --no-parent --robots=off --max-threads "$threads" -q \
    -P "$tmp/wget2" "$base/index.html"
  run "scrapy" "$python" -m scrapy runspider bench/scrapy_crawl_spider.py -a "start_url=$base/index.html" \
    -s CONCURRENT_REQUESTS=16 -s CONCURRENT_REQUESTS_PER_DOMAIN=16 -s DOWNLOAD_DELAY=0 \
    -s ROBOTSTXT_OBEY=False -s LOG_LEVEL=WARNING
fi

echo
echo "site: $pages pages, $site_mb MB, served by nginx on $base; $threads crawl threads;" \
  "$(machine_load)"
printf 'parse ceiling (gumbo alone): %.0f pages/s per core (%.1f MB/s) x %d cores = %.0f pages/s' \
  "$parse_core" "$parse_mbs" "$threads" "$parse_all"
printf '; full link extraction %.0f pages/s per core\n' "$extract_core"
printf 'parse ceiling in wall time on this machine now: %.0f pages/s\n\n' "$parse_wall"
printf '%-18s %6s %6s %8s %9s %7s %7s %7s %8s %8s %7s\n' tool pages "%site" "wall s" "pages/s" \
  "user s" "sys s" "cpu%" "ms/page" "RSS MB" "dupes"
for name in "${names[@]}"; do
  awk -v name="$name" -v p="${served[$name]}" -v n="$pages" -v w="${wall[$name]}" -v u="${usr[$name]}" \
    -v s="${sys[$name]}" -v r="${rss[$name]}" -v d="${dupes[$name]}" 'BEGIN {
    printf "%-18s %6d %6.1f %8.2f %9.1f %7.2f %7.2f %7.0f %8.3f %8.1f %7d\n", name, p, 100 * p / n, w,
      p / w, u, s, 100 * (u + s) / w, 1000 * (u + s) / p, r / 1024, d }'
done
echo "(pages: distinct URIs served with 200; %site: of the pages generated; cpu%: user+sys over wall;"
echo " ms/page: CPU ms per page; dupes: requests beyond the first per URI; nginx's own CPU not counted)"
echo

# Wall-time ratios, then the same on CPU time per page (steadier on a loaded machine, where a
# crawler waits for a core as much as for the network).
rate() { ratio "${served[$1]}" "${wall[$1]}"; }
cpu_ms() { awk -v p="${served[$1]}" -v c="${cpu[$1]}" 'BEGIN { print 1000 * c / p }'; }
peer_rate() { if ((peers)); then rate "$1"; else echo 0; fi; }
peer_cpu_ms() { if ((peers)); then cpu_ms "$1"; else echo 0; fi; }
awk -v us="$(rate urlsieve)" -v ceil="$parse_all" -v ceil_wall="$parse_wall" -v core="$parse_core" \
  -v sc="$(peer_rate scrapy)" -v wg="$(peer_rate 'wget2 -r')" -v uc="$(cpu_ms urlsieve)" \
  -v scc="$(peer_cpu_ms scrapy)" -v wgc="$(peer_cpu_ms 'wget2 -r')" -v t="$threads" \
  -v warc="$(rate 'urlsieve --warc')" -v warcc="$(cpu_ms 'urlsieve --warc')" -v peers="$peers" \
  -v nocs="$(rate 'urlsieve no-content')" -v nocsc="$(cpu_ms 'urlsieve no-content')" 'BEGIN {
  printf "%-34s %12s %18s\n", "ratio", "wall pages/s", "CPU ms per page"
  printf "%-34s %11.1f%% %17.1f%%   (target >= 80 %%)\n", "urlsieve / parse ceiling", 100 * us / ceil,
    100 * (1000 / core) / uc
  printf "%-34s %11.1f%%\n", "urlsieve / wall-time parse ceiling", 100 * us / ceil_wall
  if (peers) {
    printf "%-34s %11.1fx %17.1fx   (target >= 10 x)\n", "urlsieve / scrapy", us / sc, scc / uc
    printf "%-34s %11.1fx %17.1fx\n", "urlsieve / wget2", us / wg, wgc / uc
  }
  printf "%-34s %11.2fx %17.2fx   (target >= 0.9 x)\n", "urlsieve --warc / urlsieve", warc / us,
    uc / warcc
  printf "%-34s %11.2fx %17.2fx   (target >= 0.97 x)\n", "content-seen on / off", us / nocs,
    nocsc / uc
  printf "(CPU column: gumbo CPU ms per page at the ceiling over urlsieve CPU ms per page, so the\n"
  printf " share of the crawl CPU that is the HTML parse; the peers and --warc: urlsieve CPU per\n"
  printf " page over theirs, so above 1 is cheaper than urlsieve, below 1 costlier)\n" }'

status=0
for name in "${names[@]}"; do
  if ((served[$name] != pages || other[$name] != 0)); then
    echo "CHECK: $name served ${served[$name]} of $pages pages, ${other[$name]} non-200 responses" >&2
    [[ $name == urlsieve* ]] && status=1
  fi
done
((status == 0)) && echo "check: every urlsieve run fetched all $pages pages"
exit $status
