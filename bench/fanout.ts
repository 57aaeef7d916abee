// Issue 43's figures, table log against JetStream in one run (`npm run bench -- fanout`): for the
// one-process server on MySQL, once with the event log in the `events` table and once with
// EVENT_LOG_URL (NATS at BENCH_NATS_URL, default nats://127.0.0.1:4222, a stream of its own):
// - idle MySQL queries per second over BENCH_FANOUT_IDLE_SECONDS (default 20) after the server
//   settled, with nothing asked of it, counted two ways: the commands the server itself sent (its
//   MySQL connections go through a counting proxy here: each client packet that starts a command,
//   a query or a prepared statement's execution, counts one), and the delta of SHOW GLOBAL STATUS
//   'Questions', which is the whole MySQL server's (other clients of a shared server count too: the
//   "no bench server" row is the same window without one);
// - fan-out latency p50/p99 from a voice's 202 (its commit) to its SSE frame and to its webhook
//   delivery at a local receiver, BENCH_FANOUT_VOICES (default 50) voices, 5 a second.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import mysql from 'mysql2/promise';
import { percentile, subscribe } from './events';
import { benchEnv, MYSQL_URL, postJson, printTable, startBenchServer } from './harness';
import { mysqlCountingProxy } from '../test/helpers/mysql-counting-proxy';

const NATS_URL = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
const IDLE_SECONDS = Number(process.env.BENCH_FANOUT_IDLE_SECONDS ?? 20);
const SETTLE_SECONDS = Number(process.env.BENCH_FANOUT_SETTLE_SECONDS ?? 10);
const VOICES = Number(process.env.BENCH_FANOUT_VOICES ?? 50);
const PER_SECOND = 5;

async function questions(): Promise<number> {
  const conn = await mysql.createConnection(MYSQL_URL);
  try {
    const [rows] = await conn.query<mysql.RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Questions'");
    return Number(rows[0].Value);
  } finally {
    await conn.end();
  }
}

/** Queries per second MySQL answered over `seconds` (the two SHOW STATUS of the reading count 2 more; subtracted). */
async function queryRate(seconds: number): Promise<number> {
  const before = await questions();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const after = await questions();
  return (after - before - 1) / seconds;
}

async function receiver() {
  const arrivals = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id;
      arrivals.set(id, performance.now());
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const lagStats = (lags: number[], expected: number) => {
  const sorted = [...lags].sort((a, b) => a - b);
  return {
    got: `${sorted.length}/${expected}`,
    p50: sorted.length ? percentile(sorted, 50).toFixed(1) : '-',
    p99: sorted.length ? percentile(sorted, 99).toFixed(1) : '-',
  };
};

async function measure(name: string, extra: Record<string, string>): Promise<Record<string, string | number>> {
  const hook = await receiver();
  const env = benchEnv('mysql', { SYNTHESIS_CONCURRENCY: '0', WEBHOOK_ALLOW_HOSTS: '127.0.0.1', ...extra });
  const direct = new URL(env.DATABASE_URL);
  const proxy = await mysqlCountingProxy(direct);
  const proxied = new URL(env.DATABASE_URL);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  const server = await startBenchServer({ ...env, DATABASE_URL: proxied.toString() }).catch(async (err) => {
    await proxy.close();
    throw err;
  });
  try {
    await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000));
    const before = proxy.commands();
    const idle = await queryRate(IDLE_SECONDS);
    const own = (proxy.commands() - before) / IDLE_SECONDS;
    const login = await postJson(`${server.url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' });
    const token = login.body.access_token as string;
    const hooked = await postJson(
      `${server.url}/api/v1/integrations/webhooks`,
      { url: hook.url, event_types: ['voice.created'] },
      token,
    );
    if (hooked.status !== 202) throw new Error(`webhook: ${hooked.status} ${JSON.stringify(hooked.body)}`);
    const sse = await subscribe(server.url, token);
    const created: { id: string; at: number }[] = [];
    for (let i = 0; i < VOICES; i++) {
      const res = await postJson(`${server.url}/api/v1/tts/voices`, { name: `fan ${i}`, base_voice: 'm1' }, token);
      if (res.status !== 202) throw new Error(`voice: ${res.status}`);
      created.push({ id: res.body.id as string, at: performance.now() });
      await new Promise((r) => setTimeout(r, 1000 / PER_SECOND));
    }
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && !created.every((v) => sse.arrivals.has(v.id) && hook.arrivals.has(v.id)))
      await new Promise((r) => setTimeout(r, 50));
    sse.close();
    const lags = (arrivals: Map<string, number>) =>
      created.filter((v) => arrivals.has(v.id)).map((v) => arrivals.get(v.id)! - v.at);
    const s = lagStats(lags(sse.arrivals), VOICES);
    const w = lagStats(lags(hook.arrivals), VOICES);
    return {
      'event log': name,
      "idle: the server's MySQL commands/s": own.toFixed(2),
      'idle: MySQL Questions/s (global)': idle.toFixed(1),
      'SSE frames': s.got,
      'SSE p50 ms': s.p50,
      'SSE p99 ms': s.p99,
      webhooks: w.got,
      'webhook p50 ms': w.p50,
      'webhook p99 ms': w.p99,
    };
  } finally {
    await server.stop();
    await hook.close();
    await proxy.close();
  }
}

export async function run(): Promise<void> {
  const rows: Record<string, string | number>[] = [];
  const baseline = (await queryRate(IDLE_SECONDS)).toFixed(1);
  rows.push(await measure('MySQL table', {}));
  const stream = `BENCH${crypto.randomBytes(4).toString('hex')}`;
  try {
    rows.push(await measure('JetStream', { EVENT_LOG_URL: NATS_URL, EVENT_LOG_STREAM: stream }));
  } finally {
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: NATS_URL.replace(/^nats:\/\//, '').split(',') });
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
    await nc.close();
  }
  rows.push({
    ...Object.fromEntries(Object.keys(rows[0]).map((k) => [k, '-'])),
    'event log': 'no bench server',
    'idle: MySQL Questions/s (global)': baseline,
  });
  printTable(
    `Event fan-out, table log vs JetStream (one-process server on MySQL): idle queries over ${IDLE_SECONDS} s; ${VOICES} voices at ${PER_SECOND}/s, commit (202) → SSE frame and → webhook delivery`,
    rows,
  );
}
