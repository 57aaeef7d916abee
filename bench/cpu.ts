// CPU per request of the one-process server on its hot routes: steady on a shared, busy machine,
// where requests/s are not. A fixed number of requests per route (BENCH_REQUESTS, 10 connections),
// BENCH_ROUNDS rounds, the server's user + system CPU from /proc less what it spends idle; medians. With
// BENCH_BASE=<another checkout's dist/bench> that build's server runs too, alternating with this
// one (before/after of a change in one run). Also the idle RSS.
import path from 'node:path';
import type autocannon from 'autocannon';
import { BenchServer, benchEnv, cpuMs, load, median, postJson, printTable, startBenchServer } from './harness';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

interface Route {
  name: string;
  opts: (url: string, token: string) => Parameters<typeof load>[1];
}

let n = 0;
const voiceCreate = (p: string): autocannon.Request[] => [
  {
    method: 'POST',
    path: p,
    setupRequest: (req) => ({
      ...req,
      body: JSON.stringify({ name: `cpu voice ${process.pid} ${n++}`, base_voice: 'f3' }),
    }),
  },
];
const ROUTES: Route[] = [
  {
    name: 'GET /api/v1/auth/session',
    opts: (url, token) => ({ url: `${url}/api/v1/auth/session`, headers: { authorization: `Bearer ${token}` } }),
  },
  {
    name: 'POST /graphql currentSession',
    opts: (url, token) => ({
      url: `${url}/graphql`,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ currentSession { id userId expiresAt state } }' }),
    }),
  },
  {
    name: 'GET /api/v1/tts/voices?limit=5',
    opts: (url, token) => ({ url: `${url}/api/v1/tts/voices?limit=5`, headers: { authorization: `Bearer ${token}` } }),
  },
  {
    name: 'POST /api/v1/tts/voices',
    opts: (url, token) => ({
      url,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      requests: voiceCreate('/api/v1/tts/voices'),
    }),
  },
  {
    name: 'POST /bench/baseline/voices (no GraphQL)',
    opts: (url, token) => ({
      url,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      requests: voiceCreate('/bench/baseline/voices'),
    }),
  },
];

export async function run(): Promise<void> {
  const db = (process.env.BENCH_DB ?? 'mysql') as 'sqlite' | 'mysql';
  const only = process.env.BENCH_ROUTES?.split(',');
  const routes = ROUTES.filter((r, i) => !only || only.includes(String(i)));
  // BENCH_NODE_OPTIONS / BENCH_BASE_NODE_OPTIONS: node options of this build's / the base's server.
  const builds = [{ name: 'this build', script: 'server.js', nodeOptions: process.env.BENCH_NODE_OPTIONS }];
  if (process.env.BENCH_BASE || process.env.BENCH_BASE_NODE_OPTIONS) {
    builds.unshift({
      name: 'base',
      script: process.env.BENCH_BASE
        ? path.relative(__dirname, path.join(process.env.BENCH_BASE, 'server.js'))
        : 'server.js',
      nodeOptions: process.env.BENCH_BASE_NODE_OPTIONS,
    });
  }
  const servers: {
    name: string;
    server: BenchServer;
    token: string;
    rss: number;
    idle: number;
    cpu: Record<string, number[]>;
  }[] = [];
  try {
    for (const b of builds) {
      const extra = {
        // Every round creates voices: past the per-user cap (VOICES_PER_USER, 1,000) they would be 409s.
        VOICES_PER_USER: '100000000',
        ...(process.env.BENCH_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_LOG_LEVEL } : {}),
        ...(b.nodeOptions ? { NODE_OPTIONS: b.nodeOptions } : {}),
      };
      const server = await startBenchServer(benchEnv(db, extra), { script: b.script });
      await new Promise((r) => setTimeout(r, 3000));
      const rss = server.rssMiB();
      const login = await postJson(`${server.url}/api/v1/auth/login`, {
        username: 'bench',
        password: 'bench password',
      });
      servers.push({ name: b.name, server, token: login.body.access_token, rss, idle: 0, cpu: {} });
    }
    for (const s of servers)
      for (const r of routes)
        await load('warm-up', { ...r.opts(s.server.url, s.token), connections: 10, amount: Math.min(REQUESTS, 1000) });
    // What the server spends with no request (its pollers: outbox relays, event log, job queue),
    // per millisecond, is taken out of each run's figure: it depends on how long the run took.
    for (const s of servers) {
      const [cpu, at] = [cpuMs(s.server.pid), Date.now()];
      await new Promise((r) => setTimeout(r, 5000));
      s.idle = (cpuMs(s.server.pid) - cpu) / (Date.now() - at);
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const r of routes) {
        for (const s of servers) {
          const [before, at] = [cpuMs(s.server.pid), Date.now()];
          const result = await load(r.name, { ...r.opts(s.server.url, s.token), connections: 10, amount: REQUESTS });
          if (result.non2xx || result.errors)
            throw new Error(`${s.name}: ${r.name} had ${result.non2xx} non-2xx answers and ${result.errors} errors`);
          (s.cpu[r.name] ??= []).push((cpuMs(s.server.pid) - before - s.idle * (Date.now() - at)) / result.requests);
        }
      }
    }
    // The least of the rounds too: other processes on the machine only ever add to a figure.
    const least = (values: number[]) => Math.min(...values);
    printTable(
      `Server CPU ms per request (median and least of ${ROUNDS} × ${REQUESTS} requests, 10 connections, ${db})`,
      routes.map((r) => ({
        route: r.name,
        ...Object.fromEntries(
          servers.flatMap((s) => [
            [`${s.name} median`, median(s.cpu[r.name]).toFixed(3)],
            [`${s.name} least`, least(s.cpu[r.name]).toFixed(3)],
          ]),
        ),
        ...(servers.length === 2
          ? {
              'this / base (median)': (median(servers[1].cpu[r.name]) / median(servers[0].cpu[r.name])).toFixed(2),
              'this / base (least)': (least(servers[1].cpu[r.name]) / least(servers[0].cpu[r.name])).toFixed(2),
            }
          : {}),
      })),
    );
    printTable(
      'Idle',
      servers.map((s) => ({
        build: s.name,
        'RSS 3 s after start (MiB)': s.rss.toFixed(1),
        'CPU without requests (ms/s)': (s.idle * 1000).toFixed(1),
      })),
    );
  } finally {
    for (const s of servers) await s.server.stop();
  }
}
