// The npm package's API: SeenFilter's calls, options and errors (no server needed).
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');

const urlsieve = require('urlsieve');
const { SeenFilter } = urlsieve;

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'urlsieve-node-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('the version is the CMake project\'s', () => {
  assert.equal(urlsieve.version, process.env.URLSIEVE_PROJECT_VERSION);
  assert.equal(urlsieve.version, require('urlsieve/package.json').version);
});

test('insertIfNew, contains and canonicalize use one canonical key', () => {
  const seen = new SeenFilter({ capacity: 1000, fpRate: 1e-6 });
  assert.equal(seen.insertIfNew('http://Example.com/a#top'), true);
  assert.equal(seen.insertIfNew('HTTP://example.com:80/./a'), false);
  assert.equal(seen.contains('http://example.com/a'), true);
  assert.equal(seen.contains('http://example.com/b'), false);
  assert.equal(seen.canonicalize('HTTP://EXAMPLE.com:80/x/../a#f'), 'http://example.com/a');
  assert.equal(seen.stats().bloomInserted, 1);
  assert.deepEqual(seen.notices, []);
  assert.equal(seen.stateDir, null);
  assert.equal(seen.redisName, null);
  seen.close();
});

test('insertMany answers in order; a repeat within the batch is new once', async () => {
  const seen = new SeenFilter({ capacity: 1000 });
  seen.insertIfNew('http://a.com/seen');
  const verdicts = await seen.insertMany(
    ['http://a.com/1', 'http://A.com/1', 'http://a.com/seen', 'http://b.com/']);
  assert.deepEqual(verdicts, [true, false, false, true]);
  assert.deepEqual(await seen.insertMany([]), []);
  seen.close();
});

test('insertMany with a bad URL: rejects naming it and inserts nothing, or null with invalid "null"',
  async () => {
    const seen = new SeenFilter({ capacity: 1000 });
    await assert.rejects(seen.insertMany(['http://a.com/1', 'not a url']), (e) => {
      assert.equal(e.code, 'INVALID_ARGUMENT');
      assert.match(e.message, /insertMany: invalid URL at index 1 \(not a url\); nothing was inserted/);
      return true;
    });
    assert.equal(seen.contains('http://a.com/1'), false);
    assert.deepEqual(await seen.insertMany(['http://a.com/1', 'ftp://x/'], { invalid: 'null' }),
                     [true, null]);
    assert.throws(() => seen.insertMany(['http://a.com/'], { invalid: 'skip' }),
                  { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    assert.throws(() => seen.insertMany(['http://a.com/', 7]), /urls\[1\] is not a string/);
    assert.throws(() => seen.insertMany('http://a.com/'), { code: 'ERR_INVALID_ARG_TYPE' });
    seen.close();
  });

test('bad input is an Error carrying the status code', () => {
  const seen = new SeenFilter({ capacity: 1000 });
  assert.throws(() => seen.insertIfNew('/relative'),
                { code: 'INVALID_ARGUMENT', message: /^urlsieve: insertIfNew: / });
  assert.throws(() => seen.contains(42), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => seen.forget('http://a.com/'), { code: 'UNSUPPORTED', message: /deletable/ });
  assert.throws(() => new SeenFilter({ fpRate: 2 }), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => new SeenFilter({ capacity: -1 }), { name: 'RangeError' });
  assert.throws(() => new SeenFilter({ exact: true }), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => new SeenFilter({ sortquery: true }), /unknown option 'sortquery'/);
  assert.throws(() => new SeenFilter({ sortQuery: 'yes' }), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => new SeenFilter({ redis: 'redis://127.0.0.1:1' }), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => new SeenFilter({ revisitAfter: '7 fortnights' }), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => new SeenFilter('big'), { code: 'ERR_INVALID_ARG_TYPE' });
  seen.close();
  assert.equal(seen.closed, true);
  seen.close();  // a second close is a no-op
  assert.throws(() => seen.insertIfNew('http://a.com/'), { code: 'FAILED_PRECONDITION', message: /closed/ });
});

test('the opt-in canonicalization rules are options', () => {
  assert.deepEqual([...urlsieve.CANONICALIZE_RULES],
                   ['sortQuery', 'dropEmptyQuery', 'stripSessionIds', 'stripWww', 'collapseSlashes',
                    'stripTrackingParams']);
  const plain = new SeenFilter({ capacity: 100 });
  const all = new SeenFilter({ capacity: 100, ...Object.fromEntries(urlsieve.CANONICALIZE_RULES.map((r) => [r, true])) });
  const url = 'http://www.a.com//x?b=2&a=1';
  assert.equal(plain.canonicalize(url), 'http://www.a.com//x?b=2&a=1');
  assert.equal(all.canonicalize(url), 'http://a.com/x?a=1&b=2');
});

test('tracking parameters leave the key, except where an exception keeps them', () => {
  const seen = new SeenFilter({ capacity: 100, stripTrackingParams: true,
                                trackingExceptions: ['keep.example:utm_source'] });
  assert.equal(seen.canonicalize('http://a.com/p?utm_source=x&id=1&fbclid=y'), 'http://a.com/p?id=1');
  assert.equal(seen.canonicalize('http://www.keep.example/?utm_source=x&gclid=1'),
               'http://www.keep.example/?utm_source=x');
  assert.equal(new SeenFilter({ capacity: 100 }).canonicalize('http://a.com/?utm_source=x'),
               'http://a.com/?utm_source=x');
  assert.throws(() => new SeenFilter({ stripTrackingParams: true, trackingExceptions: ['no-colon'] }),
                { code: 'INVALID_ARGUMENT', message: /HOST:NAME/ });
  assert.throws(() => new SeenFilter({ trackingExceptions: 'a.com:x' }), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => new SeenFilter({ trackingExceptions: [1] }), { code: 'ERR_INVALID_ARG_TYPE' });
  seen.close();
});

test('a state directory persists at save and close, and is locked while open', async (t) => {
  const dir = path.join(tempDir(t), 'seen');
  const seen = new SeenFilter({ stateDir: dir, capacity: 1000 });
  assert.equal(seen.stateDir, dir);
  seen.insertIfNew('http://a.com/1');
  await seen.save();
  assert.throws(() => new SeenFilter({ stateDir: dir }), { code: 'FAILED_PRECONDITION', message: new RegExp(`in use by process ${process.pid}`) });
  const pending = seen.insertMany(['http://a.com/2']);
  assert.throws(() => seen.close(), { code: 'FAILED_PRECONDITION', message: /pending/ });
  await pending;
  seen.close();
  const again = new SeenFilter({ stateDir: dir, capacity: 5 });  // the stored capacity wins
  assert.equal(again.contains('http://a.com/1'), true);
  assert.equal(again.contains('http://a.com/2'), true);
  assert.equal(again.stats().capacity, 1000);
  assert.match(again.notices.join('\n'), /capacity/);
  again.close();
});

test('exact mode and deletable filters forget', (t) => {
  const exact = new SeenFilter({ stateDir: path.join(tempDir(t), 'exact'), exact: true });
  const deletable = new SeenFilter({ deletable: true, capacity: 1000 });
  for (const seen of [exact, deletable]) {
    assert.equal(seen.insertIfNew('http://a.com/x'), true);
    assert.equal(seen.forget('http://a.com/x'), true);
    assert.equal(seen.forget('http://a.com/x'), false);
    assert.equal(seen.insertIfNew('http://a.com/x'), true);
    seen.close();
  }
});

test('revisitAfter takes seconds or a duration', () => {
  assert.equal(new SeenFilter({ revisitAfter: '7d', capacity: 100 }).stats().revisitAfter, 604800);
  assert.equal(new SeenFilter({ revisitAfter: 3600, capacity: 100 }).stats().revisitAfter, 3600);
  assert.equal(new SeenFilter({ revisitAfter: null, capacity: 100 }).stats().revisitAfter, 0);
  assert.throws(() => new SeenFilter({ revisitAfter: 1.5 }), { name: 'RangeError' });
});

test('insertKeyIfNew takes raw keys', () => {
  const seen = new SeenFilter({ capacity: 100 });
  assert.equal(seen.insertKeyIfNew('job:1'), true);
  assert.equal(seen.insertKeyIfNew('job:1'), false);
  seen.close();
});

test('redisPasswordEnv: the variable must be set, and the URL must carry no password', () => {
  delete process.env.URLSIEVE_TEST_UNSET;
  assert.throws(() => new SeenFilter({ redis: 'redis://127.0.0.1:1', name: 'n', redisPasswordEnv: 'URLSIEVE_TEST_UNSET' }),
                { code: 'INVALID_ARGUMENT', message: /URLSIEVE_TEST_UNSET is not set/ });
  process.env.URLSIEVE_TEST_PW = 'secret';
  assert.throws(() => new SeenFilter({ redis: 'redis://:pw@127.0.0.1:1', name: 'n', redisPasswordEnv: 'URLSIEVE_TEST_PW' }),
                { code: 'INVALID_ARGUMENT', message: /has a password already/ });
});
