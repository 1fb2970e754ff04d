#!/usr/bin/env bash
# The content-seen test in a crawl, on DustSite (tools/site_server/dust_site.h: an application's
# duplicates of known kinds — a mirrored directory whose relative links grow a copy of the tree,
# session tokens, one login form per article, one stylesheet under two names): how many requests
# each setting of the links options makes, how many of them fetch content the crawl already had,
# and how many distinct pages (payload digests) it finds. The figures behind the defaults of
# --duplicate-links and --near-duplicate-links (docs/features/content-seen.md, "In the crawl").
#
#   bench/content_seen.sh [--articles N] [--build-dir DIR]
#       --articles N   DustSite articles (default 200)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

articles=200
build=build
while (($#)); do
  case $1 in
    --articles) articles=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    -h | --help) print_help 10; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
need_positive --articles "$articles"
urlsieve="$build/crawler/urlsieve"
site_bin="$build/tools/urlsieve-demo-site"
need_built "cmake --build $build --target urlsieve urlsieve-demo-site" "$urlsieve" "$site_bin"
make_tmp urlsieve_content_seen
on_exit cleanup_all
serve_site "$site_bin" "$tmp" --dust "$articles"
echo "$base/" > "$tmp/seeds.txt"

printf '%-44s %9s %9s %9s %9s %9s\n' setting requests exact near distinct "dup share"
crawl() {
  local name=$1 out="$tmp/out-$2"
  shift 2
  "$urlsieve" crawl --seeds "$tmp/seeds.txt" --out "$out" --threads 2 --delay-ms 0 \
    --max-depth 1000 --ignore-robots "$@" > /dev/null 2> "$out.err" || {
    cat "$out.err" >&2
    exit 1
  }
  # Distinct payloads: the WARC-Payload-Digest values of the WARC's records.
  python3 - "$name" "$out" << 'PY'
import gzip, json, sys
name, out = sys.argv[1], sys.argv[2]
pages = [json.loads(l) for l in open(f"{out}/pages.jsonl")]
exact = sum("duplicate_of" in p for p in pages)
near = sum("near_duplicate_of" in p for p in pages)
digests = set()
with gzip.open(f"{out}/crawl.warc.gz", "rb") as f:
    for line in f:
        if line.startswith(b"WARC-Payload-Digest:"):
            digests.add(line.split(b":", 1)[1].strip())
distinct = len(digests)
dups = exact + near
print(f"{name:44s} {len(pages):9d} {exact:9d} {near:9d} {distinct:9d} {dups / len(pages):9.2f}")
PY
}
crawl "content-seen off (--no-content-seen)" off --warc --no-content-seen --duplicate-links follow
crawl "defaults (exact skip, near follow)" defaults --warc
crawl "--duplicate-links follow" follow --warc --duplicate-links follow
crawl "--near-duplicate-links skip" nearskip --warc --near-duplicate-links skip
stop_site_server
