// A real redis-server for a test (a port of tests/python/redis_server.py): 127.0.0.1, a free
// port, its files in the test's directory. Readiness is polled (PING) up to a deadline; a server
// that exits at start (its port taken between the probe and its bind) is started on another port.
'use strict';

const { spawn } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// Resolves true when the server on `port` answers PING (after AUTH when there is a password).
function answersPing(port, password) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    socket.setTimeout(1000, () => socket.destroy());
    socket.on('connect', () => socket.write((password ? `AUTH ${password}\r\n` : '') + 'PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk;
      if (reply.includes('+PONG\r\n') || reply.includes('-')) socket.end();
    });
    socket.on('close', () => resolve(reply.includes('+PONG\r\n')));
    socket.on('error', () => {});
  });
}

class RedisServer {
  static async start(dir, { password } = {}) {
    for (let attempt = 0; attempt < 8; ++attempt) {
      const server = new RedisServer(dir, await freePort(), password);
      if (await server.launch()) return server;
    }
    throw new Error(`could not start redis-server in ${dir} (scripts/setup.sh installs it)`);
  }

  constructor(dir, port, password) {
    Object.assign(this, { dir, port, password });
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  async launch() {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir,
                  '--save', '', '--daemonize', 'no', '--protected-mode', 'no',
                  '--logfile', path.join(this.dir, 'redis.log')];
    if (this.password) args.push('--requirepass', this.password);
    this.process = spawn('redis-server', args, { stdio: 'ignore' });
    let exited = false;
    this.process.on('exit', () => { exited = true; });
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && !exited) {
      if (await answersPing(this.port, this.password)) return true;
      await new Promise((resolve) => setTimeout(resolve, 10));  // polling for readiness
    }
    this.stop();
    return false;
  }

  stop() {
    if (this.process && this.process.exitCode === null) this.process.kill('SIGKILL');
  }
}

module.exports = { RedisServer };
