// urlsieve/crawlee with a real Crawlee CheerioCrawler (a child process) over the test site on
// 127.0.0.1 (site.js): every page once; Crawlee alone fetches some twice; a kill -9 and a restart
// on a state directory fetch nothing twice that was fetched before the last save.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');

const { SeenFilter } = require('urlsieve');
const { requestKey, seenTransform } = require('urlsieve/crawlee');
const { crawl, startCrawl } = require('./crawl.js');
const { Site, PAGES, everyPageOnce } = require('./site.js');

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'urlsieve-crawlee-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function startSite(t, onRequest) {
  const site = await new Site(onRequest).start();
  t.after(() => site.close());
  return site;
}

test('request keys: canonical URL for a GET, method + payload digest otherwise', () => {
  const seen = new SeenFilter({ capacity: 100, sortQuery: true });
  assert.equal(requestKey(seen, 'HTTP://A.com/x?b=1&a=2#f'), 'http://a.com/x?a=2&b=1');
  assert.equal(requestKey(seen, { url: 'http://a.com/x', method: 'post', payload: 'q=1' }),
               'urlsieve-req:POST:7de36096ee27ab707af7d922f8caec37e8d6c644:http://a.com/x');
  assert.equal(requestKey(seen, { url: 'mailto:x@a.com' }), null);
  const transform = seenTransform(seen);
  assert.deepEqual(transform({ url: 'http://a.com/x#1' }), { url: 'http://a.com/x#1', uniqueKey: 'http://a.com/x' });
  assert.equal(transform({ url: 'http://A.com/./x' }), false);
  assert.deepEqual(transform({ url: 'mailto:x@a.com' }), { url: 'mailto:x@a.com' });
  seen.close();
});

test('a CheerioCrawler with urlsieve fetches every page once', async (t) => {
  const site = await startSite(t);
  const dir = tempDir(t);
  await crawl(site.url('/p/0'), { seen: { capacity: 1000, sortQuery: true } }, path.join(dir, 'storage'));
  assert.deepEqual(site.counts(), everyPageOnce());
});

test('Crawlee alone fetches some pages of this site twice', async (t) => {
  // The site's spellings are really different to Crawlee's uniqueKey (percent-encoded digits):
  // the test above would fail without urlsieve.
  const site = await startSite(t);
  await crawl(site.url('/p/0'), {}, path.join(tempDir(t), 'storage'));
  const counts = site.counts();
  assert.deepEqual(Object.keys(counts).sort(), Object.keys(everyPageOnce()).sort());
  assert.ok(Math.max(...Object.values(counts)) > 1, JSON.stringify(counts));
});

test('kill -9 and a restart on the state directory refetch only what was fetched since the last save',
  async (t) => {
    const dir = tempDir(t);
    const KILL_AT = 17;  // page requests into the first run
    let first = null;
    let pagesFirst = 0;
    const site = await startSite(t, (entry) => {
      if (first && entry.agent === 'first' && entry.page !== '/saved' && ++pagesFirst === KILL_AT) {
        first.child.kill('SIGKILL');  // before this page is answered
      }
    });
    const options = { seen: { stateDir: path.join(dir, 'seen'), capacity: 1000, sortQuery: true },
                      saveEvery: 5, markSaves: true, maxConcurrency: 1, queueV1: true };
    // Crawlee's queue persists too (not purged at start): it holds what was admitted, not fetched.
    const storage = path.join(dir, 'storage');
    const env = { CRAWLEE_PURGE_ON_START: 'false' };
    first = startCrawl(site.url('/p/0'), { ...options, agent: 'first' }, storage, env);
    const killed = await first.done;
    assert.equal(killed.signal, 'SIGKILL', killed.stderr.slice(-3000));
    const firstLog = site.log.slice();
    const lastSave = firstLog.map((e) => e.page).lastIndexOf('/saved');
    assert.ok(lastSave > 0, 'the first run saved before it was killed');
    const beforeSave = new Set(firstLog.slice(0, lastSave).map((e) => e.page));

    await crawl(site.url('/p/0'), { ...options, agent: 'second' }, storage, env);
    const again = site.counts('second');
    for (const page of Object.keys(again)) {
      assert.ok(!beforeSave.has(page), `${page} was fetched before the last save and again after the restart`);
    }
    // Nothing lost: every page was fetched by one run or the other.
    assert.deepEqual(Object.keys(site.counts()).sort(), Object.keys(everyPageOnce()).sort());
    assert.ok(Object.keys(again).length < PAGES, 'the restart resumed rather than started over');
  });
