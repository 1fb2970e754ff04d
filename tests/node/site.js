// The test site of the Crawlee tests, served by node:http on 127.0.0.1 only (a port of the
// Python tests' site, tests/python/test_scrapy_dupefilter.py): pages /p/0 .. /p/N-1, each linking
// to three others in several spellings of one URL (relative, absolute, upper-case scheme, dot
// segments, percent-encoded digits, fragments), plus /s with its query in two orders. The request
// log is the ground truth: which page was asked for, by which crawler (User-Agent), in order.
'use strict';

const http = require('node:http');

const PAGES = 40;

function spellings(port, j) {
  const digits = [...String(j)].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');
  return [
    `/p/${j}`,
    `${j}`,  // relative to /p/i
    `../p/${j}#frag`,
    `http://127.0.0.1:${port}/p/${j}`,
    `HTTP://127.0.0.1:${port}/p/./${j}`,
    `http://127.0.0.1:${port}/p/x/../${j}`,
    `/p/${digits}`,
  ];
}

// The page a request path stands for: percent-decoded, dot segments gone, query sorted.
function pageOf(path) {
  const url = new URL(path, 'http://site');
  let page = decodeURIComponent(url.pathname);
  if (url.search) page += '?' + url.search.slice(1).split('&').sort().join('&');
  return page;
}

class Site {
  // onRequest(entry, log): called for every request before it is answered (the kill -9 test
  // stops the crawler there); entry = { page, agent }.
  constructor(onRequest) {
    this.log = [];
    this.onRequest = onRequest;
    this.server = http.createServer((req, res) => this.answer(req, res));
  }

  async start() {
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = this.server.address().port;
    return this;
  }

  async close() {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  url(path) {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  answer(req, res) {
    const entry = { page: pageOf(req.url), agent: req.headers['x-crawler'] ?? '' };
    this.log.push(entry);
    if (this.onRequest) this.onRequest(entry, this.log);
    const html = this.html(entry.page);
    res.writeHead(html ? 200 : 404, { 'Content-Type': 'text/html', 'Content-Length': Buffer.byteLength(html) });
    res.end(html);
  }

  html(page) {
    let links = [];
    let i = -1;
    if (page.startsWith('/p/')) {
      i = Number(page.slice(3));
      if (!(Number.isInteger(i) && i >= 0 && i < PAGES)) return '';
      [(i + 1) % PAGES, (i + 7) % PAGES, (i * 3) % PAGES].forEach((j, k) => {
        const forms = spellings(this.port, j);
        links.push(forms[(i + k) % forms.length], forms[(i + k + 3) % forms.length]);
      });
      links.push(i % 2 ? '/s?a=1&b=2' : '/s?b=2&a=1');
    } else if (page !== '/s?a=1&b=2' && page !== '/saved') {
      return '';
    }
    const anchors = links.map((h) => `<a href="${h}">link</a>\n`).join('');
    return `<html><body><h1>page ${i}</h1>\n${anchors}</body></html>`;
  }

  // Requests per page (optionally of one crawler only); the /saved markers are not pages.
  counts(agent) {
    const counts = {};
    for (const e of this.log) {
      if (e.page === '/saved' || (agent !== undefined && e.agent !== agent)) continue;
      counts[e.page] = (counts[e.page] ?? 0) + 1;
    }
    return counts;
  }
}

// Every page of the site, each once.
function everyPageOnce() {
  const expected = { '/s?a=1&b=2': 1 };
  for (let i = 0; i < PAGES; ++i) expected[`/p/${i}`] = 1;
  return expected;
}

module.exports = { Site, PAGES, everyPageOnce };
