// Runs crawl_child.js (a Crawlee CheerioCrawler) over the test site in a child process; the
// crawl tests' one way of starting a crawler.
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');

const CHILD = path.join(__dirname, 'crawl_child.js');

// Starts a crawl; `done` resolves with { code, signal, stderr } when the process exits.
function startCrawl(startUrl, options, storageDir, env = {}) {
  const child = spawn(process.execPath, [CHILD, startUrl, JSON.stringify(options)], {
    env: { ...process.env, CRAWLEE_STORAGE_DIR: storageDir, CRAWLEE_LOG_LEVEL: 'WARNING', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const done = new Promise((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
  return { child, done };
}

// A crawl that must succeed.
async function crawl(startUrl, options, storageDir, env) {
  const result = await startCrawl(startUrl, options, storageDir, env).done;
  if (result.code !== 0) throw new Error(`crawler exited ${result.code}: ${result.stderr.slice(-3000)}`);
  return result;
}

module.exports = { startCrawl, crawl };
