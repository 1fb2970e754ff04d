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
    -h | --help) sed -n '2,22s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $pages =~ ^[0-9]+$ && $pages -ge 11 ]] || { echo "--pages must be an integer >= 11" >&2; exit 2; }
[[ $percent =~ ^[0-9]+$ && $percent -le 100 ]] || {
  echo "--changed-percent must be an integer in [0, 100]" >&2
  exit 2
}
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "--threads must be a positive integer" >&2; exit 2; }

urlsieve="$build/crawler/urlsieve"
server_bin="$build/tools/urlsieve-demo-site"
for f in "$urlsieve" "$server_bin"; do
  [[ -x $f ]] || {
    echo "missing $f: cmake --build $build --target urlsieve urlsieve-demo-site" >&2
    exit 1
  }
done

tmp=$(mktemp -d /tmp/urlsieve_recrawlbench.XXXXXX)
server_pid=
stop_server() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2> /dev/null || true
    wait "$server_pid" 2> /dev/null || true
    server_pid=
  fi
}
cleanup() {
  stop_server
  if ((keep)); then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "generating $pages pages ..."
/usr/bin/python3 bench/gen_static_site.py "$tmp/site" --pages "$pages" | sed 's/^/  site: /'

log="$tmp/requests.tsv"
"$server_bin" --root "$tmp/site" --port 0 --log "$log" > "$tmp/server.out" 2> "$tmp/server.err" &
server_pid=$!
base=
for ((i = 0; i < 100; i++)); do
  base=$(head -1 "$tmp/server.out")
  [[ -n $base ]] && break
  kill -0 "$server_pid" 2> /dev/null || break
  sleep 0.1 # polling for the server's first line
done
[[ -n $base ]] || { echo "urlsieve-demo-site did not start:" >&2; cat "$tmp/server.err" >&2; exit 1; }
echo "$base/index.html" > "$tmp/seeds.txt"

common=(--seeds "$tmp/seeds.txt" --out "$tmp/out" --threads "$threads" --per-host "$threads" --delay-ms 0 --max-depth 100
  --ignore-robots ${warc[@]+"${warc[@]}"})

# crawl NAME ARGS...: runs one crawl, prints its wall time in seconds.
crawl() {
  local name=$1
  shift
  local start end
  start=$(date +%s%N)
  "$urlsieve" crawl "$@" > "$tmp/$name.log" 2>&1 || {
    echo "$name failed:" >&2
    tail -20 "$tmp/$name.log" >&2
    exit 1
  }
  end=$(date +%s%N)
  awk -v ns=$((end - start)) 'BEGIN { printf "%.3f", ns / 1e9 }'
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
stop_server # flushes and closes the log

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
    "$(awk -v n="$2" -v s="$7" 'BEGIN { print n / s }')"
}
row full "$full_n" "$full_200" "$full_304" "$full_cond" "$full_bytes" "$full_s"
row re-crawl "$re_n" "$re_200" "$re_304" "$re_cond" "$re_bytes" "$re_s"
awk -v rb="$re_bytes" -v fb="$full_bytes" -v rn="$re_n" -v rs="$re_s" -v fn="$full_n" \
  -v fs="$full_s" 'BEGIN {
    printf "re-crawl / full: bytes %.3f, pages/s %.2f\n", rb / fb, (rn / rs) / (fn / fs) }'
if ((keep)); then echo "request log: $log" >&2; fi
