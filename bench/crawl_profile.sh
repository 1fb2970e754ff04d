#!/usr/bin/env bash
# Profiles one single-threaded crawl under callgrind: instructions per page for the whole crawl and
# for the link -> frontier path (canonicalize + scope + seen stage + push), the figures of issue 11.
#
#   bench/crawl_profile.sh [--pages N] [--build-dir DIR] [--exact] [--keep]
#       --pages N      pages in the generated site (default 300; 10-60 KB, 50-100 links each)
#       --build-dir    where urlsieve and urlsieve-demo-site were built (default build, from
#                      scripts/build.sh)
#       --exact        crawl with --exact (every Bloom "maybe" confirmed in the exact store)
#       --keep         keep the temp dir (site, crawl output, callgrind.out) and print its path
#
# The site comes from bench/gen_static_site.py and is served by tools/site_server
# (urlsieve-demo-site --root) on 127.0.0.1; `urlsieve crawl --threads 1 --delay-ms 0` runs under
# valgrind --tool=callgrind (robots.txt obeyed: the static site answers 404). Prints the total
# instructions (Ir) per page, then for Crawler::QueueLinks and Crawler::PushNew their inclusive Ir
# per page and share of the total, each with its callees (from callgrind_annotate
# --inclusive=yes --tree=calling). Exits 1 when the crawl did not fetch every page.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

pages=300
build=build
keep=0
mode=()
while (($#)); do
  case $1 in
    --pages) pages=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --exact) mode=(--exact); shift ;;
    --keep) keep=1; shift ;;
    -h | --help) print_help 17; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
need_pages "$pages"

urlsieve="$build/crawler/urlsieve"
server_bin="$build/tools/urlsieve-demo-site"
need_built "scripts/build.sh (or --build-dir DIR)" "$urlsieve" "$server_bin"
for tool in valgrind callgrind_annotate python3; do
  command -v "$tool" > /dev/null || { echo "missing $tool: apt-get install -y valgrind" >&2; exit 1; }
done

make_tmp urlsieve_profile
on_exit cleanup_all

serve_generated_site "$server_bin" "$pages" python3
echo "$base/index.html" > "$tmp/seeds.txt"

echo "crawling $base under callgrind (a minute or two) ..."
valgrind --tool=callgrind --callgrind-out-file="$tmp/callgrind.out" \
  "$urlsieve" crawl --seeds "$tmp/seeds.txt" --out "$tmp/out" --threads 1 --per-host 1 \
  --delay-ms 0 --max-depth 100 --checkpoint-s 30 ${mode[@]+"${mode[@]}"} > "$tmp/crawl.log" 2>&1 || {
  echo "the crawl failed:" >&2
  tail -20 "$tmp/crawl.log" >&2
  exit 1
}
fetched=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["pages"])' \
  "$tmp/out/stats.json")

callgrind_annotate --inclusive=yes --tree=calling --threshold=100 "$tmp/callgrind.out" \
  > "$tmp/annotate.txt" 2> /dev/null
python3 - "$tmp/callgrind.out" "$tmp/annotate.txt" "$fetched" << 'EOF'
import re, sys

out_file, annotate, pages = sys.argv[1], sys.argv[2], int(sys.argv[3])
total = None
for line in open(out_file):
    if line.startswith(("summary:", "totals:")):
        total = int(line.split()[1])
        break
assert total, "no totals in " + out_file

# --tree=calling: a function's own line ("Ir (pct) * file:fn [obj]"), then one line per callee
# ("Ir (pct) > file:fn (Nx) [obj]"), the Ir being the inclusive cost of those calls.
entry = re.compile(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?([*>])\s+(?:[^:]*:)?(.*?)(?: \(\d+x\))?(?: \[[^\]]*\])?\s*$")
blocks, current = {}, None
for line in open(annotate):
    m = entry.match(line)
    if not m:
        continue
    ir, mark, fn = int(m.group(1).replace(",", "")), m.group(2), m.group(3)
    if mark == "*":
        current = blocks.setdefault(fn, [ir, []])
    elif current is not None:
        current[1].append((ir, fn))

def short(fn):
    fn = re.sub(r"\(.*\)( const)?$", "", fn)  # drop the parameter list
    fn = fn.replace("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
                    "std::string")
    return fn.replace("urlsieve::", "")

def row(label, ir, indent=""):
    print(f"{indent}{label[:70 - len(indent)]:<{70 - len(indent)}} {ir / pages:>12,.0f} {100 * ir / total:>7.2f} %")

print(f"\npages fetched: {pages}; total instructions: {total:,} = {total / pages:,.0f} per page\n")
print(f"{'inclusive cost':<70} {'Ir per page':>12} {'of total':>9}")
for name in ("Crawler::QueueLinks", "Crawler::PushNew"):
    found = [(fn, b) for fn, b in blocks.items() if short(fn) == name]
    if not found:
        print(f"{name}: not in the profile (inlined?)")
        continue
    for fn, (ir, callees) in found:
        row(short(fn), ir)
        for cir, cfn in sorted(callees, reverse=True):
            if cir * 1000 >= ir:  # callees above 0.1 % of the function
                row(short(cfn), cir, "    ")
EOF
if ((fetched != pages)); then
  echo "CHECK: the crawl fetched $fetched of $pages pages" >&2
  exit 1
fi
