// One Crawlee CheerioCrawler over the test site, as a child process of crawlee.test.js:
//   node crawl_child.js START_URL OPTIONS_JSON
// OPTIONS_JSON: { agent, seen: SeenFilter options (absent: Crawlee alone), saveEvery,
// markSaves: request /saved after each save (the site's log then shows where saves fell),
// queueV1: Crawlee's RequestQueueV1 }.
// Crawlee's storage is CRAWLEE_STORAGE_DIR (the test gives each run its own, or one to resume).
'use strict';

const { CheerioCrawler, Configuration, RequestQueueV1 } = require('crawlee');
const { SeenFilter } = require('urlsieve');
const { createSeenCrawler } = require('urlsieve/crawlee');

async function main() {
  const [start, json] = process.argv.slice(2);
  const options = JSON.parse(json);
  Configuration.getGlobalConfig().set('persistStateIntervalMillis', 3_600_000);
  const crawlerOptions = {
    maxConcurrency: options.maxConcurrency ?? 2,
    maxRequestRetries: 0,
    additionalMimeTypes: ['text/html'],
    preNavigationHooks: [(_context, gotOptions) => {
      gotOptions.headers = { ...gotOptions.headers, 'x-crawler': options.agent ?? '' };
    }],
    useSessionPool: false,
    async requestHandler({ enqueueLinks }) {
      await enqueueLinks({ strategy: 'same-origin' });
    },
  };
  if (!options.seen) {
    await new CheerioCrawler(crawlerOptions).run([start]);
    return;
  }
  const seen = new SeenFilter(options.seen);
  const site = new URL(start).origin;
  // RequestQueueV1: the default queue (v2) locks a request in progress in its storage, and after a
  // kill -9 a restart would wait minutes for the lock to expire before fetching it again.
  if (options.queueV1) crawlerOptions.requestQueue = await RequestQueueV1.open();
  const crawler = await createSeenCrawler(CheerioCrawler, crawlerOptions, {
    seen,
    saveEvery: options.saveEvery ?? 100,
    onSave: options.markSaves ? async () => { await fetch(`${site}/saved`); } : undefined,
  });
  await crawler.run([start]);
  seen.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
