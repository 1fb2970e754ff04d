// urlsieve: the URL-seen test of urlsieve for Node.js (docs/features/node.md). A thin layer over
// the native addon (src/): finding the addon, and the Redis password taken from the environment.
'use strict';

const path = require('node:path');

// Where the addon is: cmake-js's output (npm install), or beside this file (the project's own
// build lays the package out in <build>/node/urlsieve/, tests/node/CMakeLists.txt).
function loadAddon() {
  const candidates = [
    path.join(__dirname, 'build', 'Release', 'urlsieve.node'),
    path.join(__dirname, 'urlsieve.node'),
  ];
  for (const file of candidates) {
    try {
      return require(file);
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND') throw e;
    }
  }
  throw new Error(`urlsieve: the native addon is not built (looked for ${candidates.join(', ')}); ` +
                  'run `npm install` in the package directory (needs cmake and a C++ compiler: ' +
                  'see the README, "Node.js and Crawlee")');
}

const native = loadAddon();

// redisPasswordEnv: NAME takes the Redis password from process.env[NAME] rather than from the URL,
// so that it stays out of code, config files and process listings. The variable must be set and
// the URL must carry no password of its own (either would be a silent surprise).
function withPasswordFromEnv(options) {
  if (options == null || typeof options !== 'object' || !('redisPasswordEnv' in options)) {
    return options;
  }
  const { redisPasswordEnv: variable, ...rest } = options;
  if (variable === undefined) return rest;
  const fail = (message) => {
    const error = new Error(`urlsieve: new SeenFilter: ${message}`);
    error.code = 'INVALID_ARGUMENT';
    return error;
  };
  if (typeof variable !== 'string' || variable === '') {
    throw fail('redisPasswordEnv must name an environment variable');
  }
  const password = process.env[variable];
  if (password === undefined || password === '') {
    throw fail(`redisPasswordEnv: the environment variable ${variable} is not set`);
  }
  const match = typeof rest.redis === 'string' && /^redis:\/\/(?:([^@]*)@)?(.*)$/.exec(rest.redis);
  if (!match) throw fail('redisPasswordEnv needs a redis: "redis://host:port[/db]" URL');
  const [, userinfo, address] = match;
  if (userinfo !== undefined && userinfo.includes(':')) {
    throw fail(`redisPasswordEnv: the redis URL has a password already (set it in one place)`);
  }
  rest.redis = `redis://${userinfo ?? ''}:${password}@${address}`;
  return rest;
}

class SeenFilter extends native.SeenFilter {
  constructor(options) {
    super(withPasswordFromEnv(options));
  }
}

module.exports = {
  SeenFilter,
  CANONICALIZE_RULES: Object.freeze(native.CANONICALIZE_RULES),
  DEFAULT_REDIS_FRONT_CACHE_KEYS: native.DEFAULT_REDIS_FRONT_CACHE_KEYS,
  version: native.version,
};
