#!/usr/bin/env bash
# The npm package against its peers on one generated link stream (bench/node_seen.js): 10^6 URLs,
# 90 % repeats, in batches of 10 000. Enqueue throughput and memory (RSS growth per distinct URL)
# of Crawlee's default RequestQueue alone and behind urlsieve (urlsieve/crawlee's
# seenRequestQueue), and of the addon's batch insertMany against a JavaScript Set of the URL
# strings; prints the ratios. Each measurement is its own process. Not run in CI.
#   bench/node_seen.sh [BUILD_DIR] [URLS]     (after scripts/setup.sh && scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
urls=${2:-1000000}
[[ -f "$build/node/urlsieve/urlsieve.node" ]] \
  || { echo "node_seen: no $build/node/urlsieve/urlsieve.node: run scripts/setup.sh && scripts/build.sh" >&2; exit 1; }
export NODE_PATH=$PWD/$build/node:$PWD/node/node_modules CRAWLEE_LOG_LEVEL=ERROR
scratch=$(mktemp -d "${TMPDIR:-/tmp}/urlsieve-node-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
for mode in set addon crawlee crawlee-urlsieve; do
  # Crawlee's memory storage writes nothing (persistStorage off); its cwd is the scratch dir anyway.
  (cd "$scratch" && node --expose-gc "$OLDPWD/bench/node_seen.js" "$mode" "$urls") | tee -a "$scratch/results"
done
node - "$scratch/results" <<'JS'
const rows = Object.fromEntries(require('fs').readFileSync(process.argv[2], 'utf8').trim().split('\n')
  .map((l) => JSON.parse(l)).map((r) => [r.mode, r]));
const perUrl = (r) => (r.rss_delta_bytes / r.distinct).toFixed(1);
console.log('\nmode               URLs/s      RSS growth   bytes per distinct URL   new');
for (const r of Object.values(rows)) {
  console.log(`${r.mode.padEnd(18)} ${String(r.urls_per_s).padStart(9)}  ${(r.rss_delta_bytes / 2 ** 20).toFixed(1).padStart(8)} MiB  ${perUrl(r).padStart(12)}            ${r.new}`);
}
const ratio = (a, b, f) => (f(rows[a]) / f(rows[b])).toFixed(2);
console.log(`\naddon insertMany vs Set:          throughput ${ratio('addon', 'set', (r) => r.urls_per_s)}x, memory ${ratio('addon', 'set', (r) => r.rss_delta_bytes)}x`);
console.log(`Crawlee + urlsieve vs Crawlee:    throughput ${ratio('crawlee-urlsieve', 'crawlee', (r) => r.urls_per_s)}x, memory ${ratio('crawlee-urlsieve', 'crawlee', (r) => r.rss_delta_bytes)}x`);
JS
