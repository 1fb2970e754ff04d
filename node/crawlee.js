// urlsieve/crawlee: urlsieve's seen set in front of a Crawlee crawl (docs/features/node.md).
//
//   const { SeenFilter } = require('urlsieve');
//   const { createSeenCrawler } = require('urlsieve/crawlee');
//   const seen = new SeenFilter({ stateDir: 'seen', sortQuery: true });  // or redis + name
//   const crawler = await createSeenCrawler(CheerioCrawler, { requestHandler }, { seen });
//   await crawler.run(['https://example.com/']);
//
// Three pieces, usable alone:
//  - seenTransform(seen): a transformRequestFunction for enqueueLinks (synchronous, one URL at a
//    time; it runs before enqueueLinks' own strategy and glob filters).
//  - seenRequestQueue(queue, seen): the queue seen by the crawler, admitting only requests the seen
//    set calls new (every add: seeds, enqueueLinks after all its filters, addRequests), in batches
//    off the event loop. Each admitted request's uniqueKey is its urlsieve key, so Crawlee's own
//    deduplication agrees with urlsieve's.
//  - createSeenCrawler(Crawler, options, { seen, saveEvery }): a crawler with that queue that also
//    skips a page fetched before (a restarted crawl), and saves the seen set every `saveEvery`
//    handled pages at a clean cut (no page in flight), so that a kill -9 refetches at most the
//    pages fetched since the last save.
'use strict';

const crypto = require('node:crypto');

// Keys that are not canonical URLs never start with "http": canonical URL keys always do.
const REQUEST_KEY_PREFIX = 'urlsieve-req:';
const FETCHED_KEY_PREFIX = 'urlsieve-fetched:';

// The key urlsieve deduplicates for a request, or null when its URL is not one urlsieve accepts
// (such a request is left to Crawlee). A GET without a payload is its canonical URL; anything else
// is "urlsieve-req:<METHOD>:<sha1 of payload>:<canonical URL>".
function requestKey(seen, request) {
  const url = typeof request === 'string' ? request : request.url;
  let canonical;
  try {
    canonical = seen.canonicalize(url);
  } catch (e) {
    if (e.code === 'INVALID_ARGUMENT' || e.code === 'ERR_INVALID_ARG_TYPE') return null;
    throw e;
  }
  const method = (typeof request === 'string' ? 'GET' : request.method ?? 'GET').toUpperCase();
  const payload = typeof request === 'string' ? undefined : request.payload;
  if (method === 'GET' && (payload === undefined || payload === null || payload === '')) {
    return canonical;
  }
  const digest = crypto.createHash('sha1').update(payload ?? '').digest('hex');
  return `${REQUEST_KEY_PREFIX}${method}:${digest}:${canonical}`;
}

// Inserts one key: a canonical URL key through insertIfNew (the key is its own canonical form),
// a request key as a raw key.
function insertKeyIfNew(seen, key) {
  return key.startsWith(REQUEST_KEY_PREFIX) ? seen.insertKeyIfNew(key) : seen.insertIfNew(key);
}

function withKey(request, key) {
  if (typeof request === 'string') return { url: request, uniqueKey: key };
  request.uniqueKey = key;
  return request;
}

// enqueueLinks({ transformRequestFunction: seenTransform(seen) }): drops a link the seen set
// holds, records a new one. `then`: the caller's own transform, applied to new requests only.
function seenTransform(seen, then) {
  return (request) => {
    const key = requestKey(seen, request);
    if (key === null) return then ? then(request) : request;
    if (!insertKeyIfNew(seen, key)) return false;
    const out = withKey(request, key);
    return then ? then(out) : out;
  };
}

// The requests of `requests` (an array, iterable or async iterable of URLs, Requests or request
// options) that the seen set calls new, each with its uniqueKey set to its urlsieve key; a request
// whose URL urlsieve rejects is kept as it is. URLs go to insertMany in one batch; request keys
// (other methods, payloads) one by one.
async function admit(seen, requests) {
  const all = [];
  for await (const r of requests) all.push(r);
  const keys = all.map((r) => requestKey(seen, r));
  const urlIndexes = [];
  keys.forEach((k, i) => {
    if (k !== null && !k.startsWith(REQUEST_KEY_PREFIX)) urlIndexes.push(i);
  });
  const verdicts = await seen.insertMany(urlIndexes.map((i) => keys[i]));
  const isNew = new Array(all.length).fill(true);
  urlIndexes.forEach((i, j) => {
    isNew[i] = verdicts[j] !== false;
  });
  keys.forEach((k, i) => {
    if (k !== null && k.startsWith(REQUEST_KEY_PREFIX)) isNew[i] = seen.insertKeyIfNew(k);
  });
  const out = [];
  all.forEach((r, i) => {
    if (isNew[i]) out.push(keys[i] === null ? r : withKey(r, keys[i]));
  });
  return out;
}

// The empty result of an add whose requests were all seen before.
const NOTHING_ADDED = Object.freeze({ processedRequests: [], unprocessedRequests: [] });

// A view of a Crawlee RequestQueue whose adds go through the seen set first. `tracker` (optional)
// is told when an add starts and ends (createSeenCrawler saves only between adds).
function seenRequestQueue(queue, seen, tracker) {
  const track = async (work) => {
    tracker?.begin();
    try {
      return await work();
    } finally {
      tracker?.end();
    }
  };
  const methods = {
    addRequest: (request, options) =>
      track(async () => {
        const [admitted] = await admit(seen, [request]);
        if (admitted === undefined) {
          return { requestId: undefined, uniqueKey: requestKey(seen, request),
                   wasAlreadyPresent: true, wasAlreadyHandled: true };
        }
        return queue.addRequest(admitted, options);
      }),
    addRequests: (requests, options) =>
      track(async () => {
        const admitted = await admit(seen, requests);
        return admitted.length ? queue.addRequests(admitted, options) : NOTHING_ADDED;
      }),
    // enqueueLinks and crawler.addRequests call this one. Crawlee adds the first 1000 requests
    // before it resolves and the rest in the background (unless waitForAllRequestsToBeAdded).
    addRequestsBatched: (requests, options) =>
      track(async () => {
        const admitted = await admit(seen, requests);
        return queue.addRequestsBatched(admitted, { ...options, waitForAllRequestsToBeAdded: true });
      }),
  };
  return new Proxy(queue, {
    get(target, property, receiver) {
      if (Object.hasOwn(methods, property)) return methods[property];
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

// Counts the pages and adds in flight, and runs a save when none is: new pages wait while a save
// is due (adds never wait: they happen inside pages, which the save is waiting for).
class SaveGate {
  constructor(seen, onSave) {
    this.seen = seen;
    this.onSave = onSave;
    this.inFlight = 0;
    this.closed = null;  // while a save is due: the Promise that resolves when it is done
    this.idle = null;    // resolves when inFlight drops to 0
  }

  begin() {
    ++this.inFlight;
  }

  end() {
    if (--this.inFlight === 0 && this.idle) this.idle();
  }

  // Before a page starts: waits for a save in progress.
  async enter() {
    while (this.closed) await this.closed;
    this.begin();
  }

  save() {
    if (this.closed) return this.closed;
    this.closed = (async () => {
      if (this.inFlight > 0) await new Promise((resolve) => { this.idle = resolve; });
      this.idle = null;
      try {
        await this.seen.save();
        if (this.onSave) await this.onSave();
      } finally {
        this.closed = null;
      }
    })();
    return this.closed;
  }
}

// A Crawlee crawler (CheerioCrawler or any HttpCrawler/BasicCrawler subclass) with urlsieve as its
// seen stage:
//  - its request queue is seenRequestQueue(options.requestQueue ?? the default queue, seen);
//  - a page is marked fetched ("urlsieve-fetched:<key>") before it is fetched, and a page already
//    marked is skipped (no request, no handler): after a restart on a state directory, the pages
//    the persisted Crawlee queue still holds but that were handled before the last save. A retry
//    is fetched again (a retry is not a duplicate);
//  - with a state directory, the seen set is saved every `saveEvery` handled pages (100) and when
//    run() ends, each time with no page or add in flight, then onSave() is awaited (still with no
//    page in flight). What a save holds is therefore a clean cut: every admitted request was in
//    Crawlee's queue, every page marked fetched was handled.
// Restarting needs Crawlee's own queue to persist (Configuration purgeOnStart: false, or
// CRAWLEE_PURGE_ON_START=0): it holds the pages admitted but not yet fetched.
async function createSeenCrawler(Crawler, options, { seen, saveEvery = 100, onSave } = {}) {
  if (!seen || typeof seen.insertMany !== 'function') {
    throw new TypeError('urlsieve/crawlee: createSeenCrawler needs { seen: a urlsieve SeenFilter }');
  }
  const { RequestQueue } = require('crawlee');
  const persistent = seen.stateDir !== null;
  const gate = persistent ? new SaveGate(seen, onSave) : null;
  const queue = seenRequestQueue(options.requestQueue ?? (await RequestQueue.open()), seen, gate);
  const counted = new WeakSet();  // crawling contexts that hold a place in the gate
  const release = (context) => {
    if (counted.delete(context)) gate.end();
  };
  let handled = 0;
  const skipFetched = async (context) => {
    const { request } = context;
    if (gate) {
      await gate.enter();
      counted.add(context);
    }
    const key = requestKey(seen, request);
    if (key === null || request.retryCount > 0) return;
    if (!seen.insertKeyIfNew(FETCHED_KEY_PREFIX + key)) {
      request.skipNavigation = true;
      request.userData.__urlsieveFetchedBefore = true;
    }
  };
  const requestHandler = async (context) => {
    try {
      if (context.request.userData.__urlsieveFetchedBefore) return;
      await options.requestHandler(context);
    } finally {
      release(context);
      if (gate && ++handled % saveEvery === 0) void gate.save();
    }
  };
  const releasing = (handler) => async (context, error) => {
    release(context);
    if (handler) await handler(context, error);
  };
  const crawler = new Crawler({
    ...options,
    requestQueue: queue,
    preNavigationHooks: [skipFetched, ...(options.preNavigationHooks ?? [])],
    requestHandler,
    errorHandler: releasing(options.errorHandler),
    failedRequestHandler: releasing(options.failedRequestHandler),
  });
  const run = crawler.run.bind(crawler);
  crawler.run = async (...args) => {
    const stats = await run(...args);
    if (gate) await gate.save();
    return stats;
  };
  return crawler;
}

module.exports = { requestKey, seenTransform, seenRequestQueue, createSeenCrawler };
