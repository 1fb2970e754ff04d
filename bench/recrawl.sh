#!/usr/bin/env bash
# A re-crawl of the generated site with a share of its pages changed, against the full crawl:
# bytes transferred and pages/s (issue 14, "Benchmarks").
#
#   bench/recrawl.sh [--pages N] [--changed-percent P] [--threads T] [--warc] [--build-dir DIR]
#                    [--keep]
#       --pages N            pages in the generated site (default 5000; bench/gen_static_site.py)
#       --changed-percent P  share of the pages changed between the crawls (default 10)
#       --threads T          urlsieve --threads and --per-host (default 2)
#       --warc               both crawls also write WARC (the re-crawl's revisit records)
#       --build-dir DIR      where urlsieve and urlsieve-demo-site were built (default build)
#       --keep               keep the temp dir (site, request log, crawl output) and print its path
#
# The site is served by tools/site_server (urlsieve-demo-site --root): every file has an ETag and
# a Last-Modified, and a conditional GET of an unchanged file gets 304. One server serves both
# crawls; its request log (tab-separated, see tools/site_server/request_log.h) gives the requests,
# statuses and body bytes sent of each. The full crawl is `urlsieve crawl --seeds`; then P % of
# the pages get a new paragraph (and an mtime a day later) and `urlsieve crawl --recrawl
# --revisit-after 0` fetches every page again, conditionally. Pages/s = requests answered (not
# robots.txt) / wall time of the crawl process. Exits 1 when a crawl fails or the re-crawl does
# not request every page.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

pages=5000
percent=10
threads=2
warc=()
build=build
keep=0
while (($#)); do
  case $1 in
    --pages) pages=$2; shift 2 ;;
    --changed-percent) percent=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --warc) warc=(--warc); shift ;;
    --build-dir) build=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) print_help 22; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
need_pages "$pages"
[[ $percent =~ ^[0-9]+$ && $percent -le 100 ]] || {
  echo "--changed-percent must be an integer in [0, 100]" >&2
  exit 2
}
need_positive --threads "$threads"

urlsieve="$build/crawler/urlsieve"
server_bin="$build/tools/urlsieve-demo-site"
need_built "cmake --build $build --target urlsieve urlsieve-demo-site" "$urlsieve" "$server_bin"

make_tmp urlsieve_recrawlbench
on_exit cleanup_all

log="$tmp/requests.tsv"
serve_generated_site "$server_bin" "$pages" /usr/bin/python3 --log "$log"
echo "$base/index.html" > "$tmp/seeds.txt"

common=(--seeds "$tmp/seeds.txt" --out "$tmp/out" --threads "$threads" --per-host "$threads" --delay-ms 0 --max-depth 100
  --ignore-robots ${warc[@]+"${warc[@]}"})

# crawl NAME ARGS...: runs one crawl, prints its wall time in seconds.
crawl() {
  local name=$1
  shift
  local start
  start=$(now_ns)
  "$urlsieve" crawl "$@" > "$tmp/$name.log" 2>&1 || {
    echo "$name failed:" >&2
    tail -20 "$tmp/$name.log" >&2
    exit 1
  }
  seconds_since "$start" 3
}

echo "full crawl ..."
full_s=$(crawl full "${common[@]}")
full_rows=$(wc -l < "$log")

# Change P % of the pages (every k-th by path, deterministic): a paragraph more, mtime + 1 day.
changed=$(/usr/bin/python3 - "$tmp/site" "$percent" << 'PY'
import os, sys
root, percent = sys.argv[1], int(sys.argv[2])
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".html"))
count = round(len(files) * percent / 100)
chosen = [files[int(i * len(files) / count)] for i in range(count)] if count else []
for path in chosen:
    st = os.stat(path)
    text = open(path, encoding="utf-8").read()
    text = text.replace("</body>", "<p>Changed for the re-crawl.</p>\n</body>", 1)
    open(path, "w", encoding="utf-8").write(text)
    os.utime(path, (st.st_atime, st.st_mtime + 86400))
print(len(chosen))
PY
)

echo "re-crawl ($changed pages changed) ..."
re_s=$(crawl recrawl --recrawl --revisit-after 0 "${common[@]}")
stop_site_server # flushes and closes the log

# Columns: 1 ms, 2 host, 3 port, 4 method, 5 Host, 6 target, 7 status, 8 body bytes, 9 If-None-Match,
# 10 If-Modified-Since.
summary() { # summary FIRST_ROW LAST_ROW -> "requests bytes n200 n304 conditional other"
  awk -F'\t' -v from="$1" -v to="$2" '
    NR >= from && NR <= to && $6 != "/robots.txt" {
      n++; bytes += $8
      if ($7 == 200) ok++; else if ($7 == 304) nm++; else other++
      if ($9 != "-" || $10 != "-") cond++
    }
    END { printf "%d %d %d %d %d %d\n", n, bytes, ok, nm, cond, other }' "$log"
}
read -r full_n full_bytes full_200 full_304 full_cond full_other <<< "$(summary 1 "$full_rows")"
read -r re_n re_bytes re_200 re_304 re_cond re_other <<< "$(summary $((full_rows + 1)) 1000000000)"

if ((re_n < full_n)); then
  echo "the re-crawl requested $re_n pages, the full crawl $full_n" >&2
  exit 1
fi

printf '\n%s pages, %s changed (%s %%), %s thread(s)%s\n' "$pages" "$changed" "$percent" \
  "$threads" "${warc[@]+", --warc"}"
printf '%-10s %8s %8s %8s %8s %14s %9s %9s\n' crawl requests 200 304 cond. "body bytes" "wall s" \
  "pages/s"
row() {
  printf '%-10s %8d %8d %8d %8d %14d %9.2f %9.1f\n' "$1" "$2" "$3" "$4" "$5" "$6" "$7" \
    "$(ratio "$2" "$7")"
}
row full "$full_n" "$full_200" "$full_304" "$full_cond" "$full_bytes" "$full_s"
row re-crawl "$re_n" "$re_200" "$re_304" "$re_cond" "$re_bytes" "$re_s"
awk -v rb="$re_bytes" -v fb="$full_bytes" -v rn="$re_n" -v rs="$re_s" -v fn="$full_n" \
  -v fs="$full_s" 'BEGIN {
    printf "re-crawl / full: bytes %.3f, pages/s %.2f\n", rb / fb, (rn / rs) / (fn / fs) }'
if ((keep)); then echo "request log: $log" >&2; fi
