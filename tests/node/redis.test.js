// The npm package over a real redis-server on a free loopback port (redis_server.js): the password
// taken from the environment, and two Crawlee processes sharing one set, which between them fetch
// every page of the test site once.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');

const { SeenFilter } = require('urlsieve');
const { crawl } = require('./crawl.js');
const { RedisServer } = require('./redis_server.js');
const { Site, everyPageOnce } = require('./site.js');

async function startRedis(t, options) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'urlsieve-redis-'));
  const server = await RedisServer.start(dir, options);
  t.after(() => {
    server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return server;
}

test('a Redis set with the password from the environment is shared by two filters', async (t) => {
  const server = await startRedis(t, { password: 'pw:with@odd/chars' });
  process.env.URLSIEVE_TEST_REDIS_PASSWORD = server.password;
  const options = { redis: server.url, name: 'api', redisPasswordEnv: 'URLSIEVE_TEST_REDIS_PASSWORD' };
  const a = new SeenFilter({ ...options, capacity: 1000 });
  const b = new SeenFilter({ ...options, capacity: 5 });  // the set's stored capacity wins
  assert.equal(a.redisName, 'api');
  assert.equal(a.insertIfNew('http://a.com/1'), true);
  assert.equal(b.insertIfNew('http://A.com/1'), false);
  assert.deepEqual(await b.insertMany(['http://a.com/1', 'http://a.com/2']), [false, true]);
  assert.equal(a.contains('http://a.com/2'), true);
  assert.equal(b.stats().capacity, 1000);
  a.close();
  b.close();
  assert.throws(() => new SeenFilter({ redis: server.url, name: 'api' }),
                (e) => e.code === 'FAILED_PRECONDITION' && !e.message.includes(server.password));
});

test('an unreachable Redis is UNAVAILABLE', async (t) => {
  const server = await startRedis(t);
  server.stop();
  assert.throws(() => new SeenFilter({ redis: server.url, name: 'gone' }), { code: 'UNAVAILABLE' });
});

test('two CheerioCrawler processes sharing a Redis set fetch every page once between them',
  async (t) => {
    const server = await startRedis(t);
    // The site holds its responses until both crawlers have sent their first request, so both
    // really crawl (neither can finish before the other starts).
    const agents = new Set();
    const held = [];
    const site = await new Site().start();
    t.after(() => site.close());
    const answer = site.answer.bind(site);
    site.answer = (req, res) => {
      agents.add(req.headers['x-crawler']);
      if (agents.size < 2) {
        held.push(() => answer(req, res));
        return;
      }
      held.splice(0).forEach((release) => release());
      answer(req, res);
    };
    const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'urlsieve-crawls-'));
    t.after(() => fs.rmSync(storage, { recursive: true, force: true }));
    const seen = { redis: server.url, name: 'site-crawl', capacity: 1000, sortQuery: true };
    await Promise.all([
      crawl(site.url('/p/0'), { agent: 'a', seen }, path.join(storage, 'a')),
      crawl(site.url('/p/20'), { agent: 'b', seen }, path.join(storage, 'b')),
    ]);
    assert.deepEqual(site.counts(), everyPageOnce());
    assert.ok(Object.keys(site.counts('a')).length > 0 && Object.keys(site.counts('b')).length > 0);
  });
