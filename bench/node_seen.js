// One measurement of bench/node_seen.sh, in its own process so that its RSS is its own:
//   node bench/node_seen.js MODE [URLS] [REPEAT_SHARE]
// MODE: set (a JavaScript Set of URL strings), addon (SeenFilter.insertMany), crawlee (Crawlee's
// RequestQueue.addRequestsBatched, its own uniqueKey deduplication), crawlee-urlsieve (the same
// queue behind urlsieve/crawlee's seenRequestQueue). The link stream: URLS URLs (10^6), of which
// REPEAT_SHARE (0.9) repeat an earlier one, drawn by a fixed-seed generator, fed in batches of
// 10 000 as a crawler's pages would (Crawlee's addRequestsBatched in one batch, no pause: its
// defaults, 1000 and 1 s, would measure the pause). Prints one JSON line: mode, urls, distinct, seconds,
// urls_per_s, rss_delta_bytes (RSS after - RSS before the stream, after a GC when exposed),
// new (URLs called new).
'use strict';

const mode = process.argv[2];
const total = Number(process.argv[3] ?? 1_000_000);
const repeatShare = Number(process.argv[4] ?? 0.9);
const BATCH = 10_000;
// The filter is sized for the stream's distinct URLs, as a crawler sizes it for its crawl.
const CAPACITY = Math.ceil(total * (1 - repeatShare));

// xorshift32: the same stream in every mode.
let state = 0x9e3779b9;
function random() {
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state / 4294967296;
}

// Each URL is a new string, as links parsed from pages are: whatever keeps one keeps its memory.
let distinct = 0;
function* batches() {
  let batch = [];
  for (let i = 0; i < total; ++i) {
    const n = distinct > 0 && random() < repeatShare ? Math.floor(random() * distinct) : distinct++;
    batch.push(`https://host${n % 997}.example.com/section/${n % 31}/page-${n}.html?ref=${n % 7}`);
    if (batch.length === BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

function rss() {
  if (global.gc) global.gc();
  return process.memoryUsage().rss;
}

async function makeSink() {
  if (mode === 'set') {
    const set = new Set();
    return async (urls) => urls.reduce((n, u) => (set.has(u) ? n : (set.add(u), n + 1)), 0);
  }
  const { SeenFilter } = require('urlsieve');
  if (mode === 'addon') {
    const seen = new SeenFilter({ capacity: CAPACITY, fpRate: 1e-6 });
    return async (urls) => (await seen.insertMany(urls)).filter(Boolean).length;
  }
  const { RequestQueue, Configuration } = require('crawlee');
  Configuration.getGlobalConfig().set('persistStorage', false);
  let queue = await RequestQueue.open(`bench-${process.pid}`);
  if (mode === 'crawlee-urlsieve') {
    const { seenRequestQueue } = require('urlsieve/crawlee');
    queue = seenRequestQueue(queue, new SeenFilter({ capacity: CAPACITY, fpRate: 1e-6 }));
  } else if (mode !== 'crawlee') {
    throw new Error(`unknown mode ${mode} (set, addon, crawlee, crawlee-urlsieve)`);
  }
  return async (urls) => {
    const { addedRequests } = await queue.addRequestsBatched(urls, {
      waitForAllRequestsToBeAdded: true, batchSize: BATCH, waitBetweenBatchesMillis: 0 });
    return addedRequests.filter((r) => !r.wasAlreadyPresent).length;
  };
}

async function main() {
  const sink = await makeSink();
  const before = rss();
  const start = process.hrtime.bigint();
  let added = 0;
  for (const batch of batches()) added += await sink(batch);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const after = rss();
  console.log(JSON.stringify({ mode, urls: total, distinct, seconds,
                               urls_per_s: Math.round(total / seconds),
                               rss_delta_bytes: after - before, new: added }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
