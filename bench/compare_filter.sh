#!/usr/bin/env bash
# Compares `urlsieve filter` (Bloom and --exact) with `awk '!seen[$0]++'` and `sort -u` on one
# generated file of URLs with repeats and re-spellings (tools/gen_urls.cc), in one run, measuring
# wall time and peak RSS with /usr/bin/time -v.
#
#   bench/compare_filter.sh [BUILD_DIR] [N]      defaults: build, 10000000
#
# Not the same job: awk and sort -u drop exact duplicate lines; urlsieve drops duplicate canonical
# URLs (so it also removes re-spellings), and sort -u does not keep input order.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."
build=${1:-build}
n=${2:-10000000}
urlsieve="$build/crawler/urlsieve"
gen="$build/tools/urlsieve_gen_urls"
need_built "cmake --build $build --target urlsieve urlsieve_gen_urls" "$urlsieve" "$gen"
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }

tmp=$(mktemp -d /tmp/urlsieve_compare.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "generating $n URLs (60% new, 20% exact repeats, 20% re-spellings) ..."
"$gen" "$n" > "$tmp/urls.txt"
echo "input: $(wc -l < "$tmp/urls.txt") lines, $(du -m "$tmp/urls.txt" | cut -f1) MB"
echo

declare -A wall cpu rss lines
# run NAME COMMAND...: stdin is the URL file, stdout is counted.
run() {
  local name=$1
  shift
  /usr/bin/time -v "$@" < "$tmp/urls.txt" > "$tmp/out" 2> "$tmp/time" || {
    echo "$name failed:" >&2
    cat "$tmp/time" >&2
    exit 1
  }
  wall[$name]=$(time_v_wall "$tmp/time")
  cpu[$name]=$(time_v_cpu "$tmp/time")
  rss[$name]=$(time_v_field "$tmp/time" "Maximum resident set size (kbytes)")
  lines[$name]=$(wc -l < "$tmp/out")
}

run "urlsieve filter" "$urlsieve" filter --state "$tmp/state-bloom" --capacity "$n"
run "urlsieve filter --exact" "$urlsieve" filter --exact --state "$tmp/state-exact" --capacity "$n"
run "awk '!seen[\$0]++'" awk '!seen[$0]++'
run "sort -u" env LC_ALL=C sort -u -T "$tmp"

awk_name="awk '!seen[\$0]++'"
printf '%-26s %9s %9s %12s %11s %14s %12s\n' tool "wall s" "cpu s" "peak RSS MB" "lines out" \
  "speed vs awk" "RSS vs awk"
for name in "urlsieve filter" "urlsieve filter --exact" "$awk_name" "sort -u"; do
  awk -v name="$name" -v w="${wall[$name]}" -v c="${cpu[$name]}" -v r="${rss[$name]}" \
      -v l="${lines[$name]}" -v aw="${wall[$awk_name]}" -v ar="${rss[$awk_name]}" 'BEGIN {
    printf "%-26s %9.2f %9.2f %12.1f %11d %13.2fx %11.3fx\n", name, w, c, r / 1024, l, aw / w, r / ar }'
done
echo
echo "Note: awk and sort -u remove exact duplicate lines only; urlsieve removes duplicate canonical"
echo "URLs, so it also drops the re-spellings (fewer lines out). sort -u does not keep input order."
echo "urlsieve filter: Bloom filter, fp-rate 1e-3 (a new URL is dropped with probability <= 1e-3);"
echo "--exact: Bloom + SQLite confirmation, no false positives, state on disk."
echo "speed vs awk = awk wall time / tool wall time; cpu s = user + system (sort -u uses threads)."
