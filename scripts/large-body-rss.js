#!/usr/bin/env node
// Issue 41 finding 8's measurement, not a timed test: the resident memory of one server process
// (the built one-process server, SQLite in a temporary folder) before and after N concurrent
// vault captures of a 10 MiB file (13.3 MiB of JSON each), one per user.
//   node scripts/large-body-rss.js [dist folder, default ./dist] [N, default 20]
// Prints the RSS before, its peak during (VmHWM), after, and the answers' statuses.
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { setInterval, clearInterval } = require('node:timers');

const { fetch } = globalThis;

const dist = path.resolve(process.argv[2] ?? 'dist');
const count = Number(process.argv[3] ?? 20);
const port = 20000 + Math.floor(Math.random() * 20000);
const base = `http://127.0.0.1:${port}`;
const admin = { username: 'admin', password: 'correct horse battery' };

const memory = (pid) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)[1]);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
};

async function post(p, body, token) {
  const res = await fetch(base + p, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'large-body-rss-'));
  const server = spawn(process.execPath, [path.join(dist, 'bin/all-in-one.js')], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: 'sqlite',
      LOG_LEVEL: 'silent',
      AUTH_BOOTSTRAP_USERNAME: admin.username,
      AUTH_BOOTSTRAP_PASSWORD: admin.password,
      LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
      SYNTHESIS_CONCURRENCY: '0',
    },
    stdio: 'inherit',
  });
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/health/ready`)).ok) break;
      } catch {
        // not listening yet
      }
      if (i > 600) throw new Error('the server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const adminToken = (await post('/api/v1/auth/login', admin)).body.access_token;
    const tokens = [];
    for (let i = 0; i < count; i++) {
      const user = { username: `rss${i}`, password: 'a long enough password' };
      await post('/api/v1/admin/users', user, adminToken);
      tokens.push((await post('/api/v1/auth/login', user)).body.access_token);
    }
    // Each body is its own text, as twenty clients would send.
    const bodies = tokens.map((_, i) =>
      JSON.stringify({
        title: `capture ${i}`,
        file: { name: `f${i}.bin`, content_base64: crypto.randomBytes(10 * 1024 * 1024).toString('base64') },
      }),
    );
    global.gc?.();
    await new Promise((r) => setTimeout(r, 1000));
    const before = memory(server.pid);
    let peak = before.rss;
    const sampler = setInterval(() => (peak = Math.max(peak, memory(server.pid).rss)), 20);
    const started = Date.now();
    const answers = await Promise.all(bodies.map((body, i) => post('/api/v1/vault/items', body, tokens[i])));
    const took = Date.now() - started;
    await new Promise((r) => setTimeout(r, 3000));
    clearInterval(sampler);
    const after = memory(server.pid);
    const statuses = {};
    for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    console.log(
      JSON.stringify({
        dist,
        captures: count,
        body_mib: +(bodies[0].length / 2 ** 20).toFixed(1),
        rss_before_mib: Math.round(before.rss),
        rss_peak_mib: Math.round(Math.max(peak, after.peak)),
        rss_after_3s_mib: Math.round(after.rss),
        statuses,
        took_ms: took,
      }),
    );
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
