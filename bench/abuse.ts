// Issue 12's figures: what hostile GraphQL clients cost everyone else. Session reads of a
// normal client (p99) with no attack, then while 20 clients send 4,000-alias anonymous
// mutations in a loop; and the server's RSS before and after amplification attempts (audio
// chunk aliases, __schema aliases) that once made answers of hundreds of megabytes. Then the
// metrics-cardinality attack of issue 29: case variants of a path under every method, with
// /health/live's latency, the RSS and the size of /metrics before and after. Last, issue 29's
// subgraph amplification: a subgraph process of its own, as deployed (production, hop secret),
// under concurrent alias floods of `_service { sdl }` and thousands of `_entities`
// representations, with its RSS and /health/live latency.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { startProcess } from '../test/helpers/processes';
import { benchEnv, load, postJson, printTable, removeBenchData, startBenchServer } from './harness';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const ATTACKERS = 20;

const aliases = (n: number, field: string) => Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ');

interface AttackStats {
  requests: number;
  statuses: Record<number, number>;
  p99: number;
  maxBytes: number;
}

/** `clients` loops sending `body` until `until` resolves. */
async function hammer(
  url: string,
  body: string,
  clients: number,
  until: Promise<unknown>,
  headers: Record<string, string> = {},
): Promise<AttackStats> {
  let stop = false;
  void until.then(() => (stop = true));
  const times: number[] = [];
  const statuses: Record<number, number> = {};
  let maxBytes = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (!stop) {
        const started = performance.now();
        const res = await fetch(`${url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body,
        });
        const text = await res.arrayBuffer();
        times.push(performance.now() - started);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        maxBytes = Math.max(maxBytes, text.byteLength);
      }
    }),
  );
  times.sort((a, b) => a - b);
  return { requests: times.length, statuses, p99: Math.round(times[Math.floor(times.length * 0.99)] ?? 0), maxBytes };
}

/** One request; its status, answer size and time. */
async function once(url: string, query: string, variables: Record<string, unknown>, token?: string) {
  const started = performance.now();
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = Buffer.from(await res.arrayBuffer());
  let message = '';
  try {
    message = JSON.parse(body.toString()).errors?.[0]?.message ?? '';
  } catch {
    /* not JSON */
  }
  return {
    status: res.status,
    bytes: body.length,
    ms: Math.round(performance.now() - started),
    message: message.slice(0, 90),
  };
}

export async function run(): Promise<void> {
  const db = (process.env.BENCH_DB as 'sqlite' | 'mysql') ?? 'sqlite';
  // As deployed, but with introspection on, so that the __schema attempt meets the limits
  // rather than the introspection switch.
  // /metrics on the public port (production refuses it otherwise), so that its size can be read.
  const server = await startBenchServer(
    benchEnv(db, { NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true', METRICS_PUBLIC: 'true' }),
  );
  try {
    const login = await postJson(`${server.url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' });
    const token = login.body.access_token as string;
    const headers = { authorization: `Bearer ${token}` };
    const session = `${server.url}/api/v1/auth/session`;

    // ---- session reads, quiet and under attack --------------------------------------------
    await load('warm-up', { url: session, headers, connections: 10, duration: 2 });
    const quiet = await load('GET /api/v1/auth/session, no attack', {
      url: session,
      headers,
      connections: 10,
      duration: DURATION,
    });
    const attack = JSON.stringify({
      query: `mutation { ${aliases(4000, 'refreshSession(refreshToken: "x") { accessToken }')} }`,
    });
    const reads = load(`GET /api/v1/auth/session, ${ATTACKERS} clients sending 4,000-alias mutations`, {
      url: session,
      headers,
      connections: 10,
      duration: DURATION,
    });
    const attackers = await hammer(server.url, attack, ATTACKERS, reads);
    const loud = await reads;
    printTable(
      `Session reads (10 connections, ${DURATION} s, ${db}) beside ${ATTACKERS} attackers`,
      [quiet, loud].map((r) => ({
        route: r.name,
        'req/s': r.rps,
        'p50 ms': r.p50,
        'p99 ms': r.p99,
        'non-2xx': r.non2xx,
      })),
    );
    console.log(`\np99 under attack / quiet p99: ${(loud.p99 / Math.max(1, quiet.p99)).toFixed(2)}`);
    printTable('The attackers', [
      {
        'request bytes': attack.length,
        requests: attackers.requests,
        statuses: JSON.stringify(attackers.statuses),
        'p99 ms': attackers.p99,
        'largest answer bytes': attackers.maxBytes,
      },
    ]);

    // ---- amplification attempts -------------------------------------------------------------
    // A synthesis of about 2 MB of audio, like the one in the issue.
    const created = await postJson(
      `${server.url}/api/v1/tts/syntheses`,
      { text: 'A sentence of some length, spoken slowly. '.repeat(18), base_voice: 'f3', speed: 0.8 },
      token,
    );
    const id = created.body.id as string;
    for (;;) {
      const res = await fetch(`${server.url}/api/v1/tts/syntheses/${id}`, { headers });
      const state = ((await res.json()) as { state: string }).state;
      if (state === 'succeeded') break;
      if (state === 'failed') throw new Error('the synthesis failed');
      await new Promise((r) => setTimeout(r, 100));
    }
    const audio = await fetch(`${server.url}/api/v1/tts/syntheses/${id}/audio`, { method: 'HEAD', headers });
    const audioBytes = Number(audio.headers.get('content-length'));
    await new Promise((r) => setTimeout(r, 1000));
    const rssBefore = server.rssMiB();
    const chunkOf = (n: number) =>
      `query ($id: ID!) { synthesisAudio(id: $id) { ${aliases(n, 'chunk(offset: 0, length: 1048576)')} } }`;
    const attempts = [
      { name: '200 aliases of chunk(length: 1 MiB)', query: chunkOf(200), token },
      { name: '700 aliases of chunk(length: 1 MiB)', query: chunkOf(700), token },
      { name: '30 aliases of chunk(length: 1 MiB) (within the alias limit)', query: chunkOf(30), token },
      {
        name: '2,500 aliases of __schema { types { fields { args } } }',
        query: `{ ${aliases(2500, '__schema { types { fields { args { name } } } }')} }`,
      },
      {
        name: '20 aliases of __schema { types { fields { args } } } (within the limits)',
        query: `{ ${aliases(20, '__schema { types { name description fields { name description args { name description } } } }')} }`,
      },
    ];
    const rows = [];
    for (const a of attempts) {
      // Each sent 10 times, so that a leak or a big answer would show in the RSS.
      let last;
      for (let i = 0; i < 10; i++) last = await once(server.url, a.query, { id }, a.token);
      rows.push({
        attempt: a.name,
        'request bytes': a.query.length,
        status: last!.status,
        'answer bytes': last!.bytes,
        'ms (last)': last!.ms,
        error: last!.message,
      });
    }
    const rssAfter = server.rssMiB();
    printTable(`Amplification attempts, each sent 10 times (audio of ${audioBytes} bytes)`, rows);
    printTable('RSS', [{ 'before (MiB)': rssBefore.toFixed(1), 'after (MiB)': rssAfter.toFixed(1) }]);
    await metricsCardinality(server);
  } finally {
    await server.stop();
  }
  await subgraphAmplification(db);
}

/** A random variant of `path`'s letters' case. */
const anyCase = (path: string) => [...path].map((c) => (Math.random() < 0.5 ? c.toUpperCase() : c)).join('');

/**
 * Issue 29's attack on /metrics: 8,192 case variants of /graphql/stream (no token), sent with
 * every method Node parses, while a normal client reads /health/live. Once, the route label
 * was the path as sent: a series per variant, 44 MB of /metrics and 300 MB more RSS.
 */
async function metricsCardinality(server: { url: string; rssMiB(): number }): Promise<void> {
  const scrape = async () => {
    const started = performance.now();
    const text = await (await fetch(`${server.url}/metrics`)).text();
    return {
      bytes: Buffer.byteLength(text),
      ms: Math.round(performance.now() - started),
      series: text.split('\n').filter((l) => l.startsWith('http_server_request_duration_seconds_count')).length,
    };
  };
  const methods = http.METHODS.filter((m) => m !== 'CONNECT');
  const before = { ...(await scrape()), rss: server.rssMiB() };
  const quiet = await load('GET /health/live, no attack', {
    url: `${server.url}/health/live`,
    connections: 4,
    duration: 3,
  });
  const variants = Array.from({ length: 8192 }, (_, i) => ({
    method: methods[i % methods.length],
    path: anyCase('/graphql/stream'),
  }));
  const probes = load('GET /health/live, during 8,192 case variants × every method', {
    url: `${server.url}/health/live`,
    connections: 4,
    duration: DURATION,
  });
  let next = 0;
  let sent = 0;
  const started = performance.now();
  let stop = false;
  void probes.then(() => (stop = true));
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (!stop) {
        const { method, path } = variants[next++ % variants.length];
        await fetch(`${server.url}${path}${next > variants.length ? `?${next}` : ''}`, {
          method,
          headers: { accept: 'text/event-stream' },
          signal: AbortSignal.timeout(2000),
        }).then(
          (r) => r.arrayBuffer(),
          () => undefined,
        );
        sent++;
      }
    }),
  );
  const loud = await probes;
  const after = { ...(await scrape()), rss: server.rssMiB() };
  printTable(
    `/health/live beside the metrics-cardinality attack (${sent} requests in ${Math.round((performance.now() - started) / 1000)} s)`,
    [quiet, loud].map((r) => ({
      route: r.name,
      'req/s': r.rps,
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'non-2xx': r.non2xx,
    })),
  );
  printTable(
    '/metrics and RSS, before and after',
    [before, after].map((m, i) => ({
      when: i ? 'after' : 'before',
      'request series': m.series,
      '/metrics bytes': m.bytes,
      'scrape ms': m.ms,
      'RSS MiB': m.rss.toFixed(1),
    })),
  );
}

/** Concurrent attackers on a subgraph process. */
const SUBGRAPH_ATTACKERS = 8;

/**
 * Issue 29's attack on a subgraph port: once, one request of 12,434 aliases of `_service { sdl }`
 * answered 152 MB and held the event loop 1.8 s; 8 at once stalled /health/live 13 s at 2.9 GB
 * RSS, 20 killed the process. Each attack here runs SUBGRAPH_ATTACKERS loops for DURATION seconds
 * against the auth subgraph in a process of its own, while a client reads /health/live.
 */
async function subgraphAmplification(db: 'sqlite' | 'mysql'): Promise<void> {
  const secret = crypto.randomBytes(24).toString('hex');
  const env = benchEnv(db, { NODE_ENV: 'production', SUBGRAPH_SECRET: secret, LOG_LEVEL: 'warn' });
  const subgraph = await startProcess('subgraph auth', 'subgraph.js', ['auth'], env);
  const rssMiB = () =>
    Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${subgraph.pid}/status`, 'utf8'))![1]) / 1024;
  try {
    const live = `${subgraph.url}/health/live`;
    const quiet = await load('no attack', { url: live, connections: 4, duration: 3 });
    const rows: Record<string, string | number>[] = [
      // Every column in the first row: the table takes its columns from it.
      {
        attack: 'none',
        'request bytes': '',
        requests: '',
        statuses: '',
        'attack p99 ms': '',
        'largest answer bytes': '',
        'live p50 ms': quiet.p50,
        'live p99 ms': quiet.p99,
        'live non-2xx': quiet.non2xx,
        'RSS MiB after': rssMiB().toFixed(1),
      },
    ];
    const sdlFlood = JSON.stringify({
      query: `{ ${Array.from({ length: 12_434 }, (_, i) => `a${i.toString(36)}:_service{sdl}`).join(' ')} }`,
    });
    const representations = JSON.stringify({
      query: 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on User { id username } } }',
      variables: { r: Array.from({ length: 3500 }, () => ({ __typename: 'User', id: crypto.randomUUID() })) },
    });
    const attacks: { name: string; body: string; headers: Record<string, string> }[] = [
      { name: '12,434 aliases of _service{sdl}, no secret', body: sdlFlood, headers: {} },
      { name: '12,434 aliases of _service{sdl}, with the secret', body: sdlFlood, headers: { 'x-hop-secret': secret } },
      {
        name: '3,500 _entities representations, with the secret',
        body: representations,
        headers: { 'x-hop-secret': secret },
      },
    ];
    const rssBefore = rssMiB();
    let rssPeak = rssBefore;
    for (const a of attacks) {
      const probes = load(a.name, { url: live, connections: 4, duration: DURATION });
      const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMiB())), 200);
      const attackers = await hammer(subgraph.url, a.body, SUBGRAPH_ATTACKERS, probes, a.headers);
      clearInterval(sampler);
      const probed = await probes;
      rows.push({
        attack: a.name,
        'request bytes': a.body.length,
        requests: attackers.requests,
        statuses: JSON.stringify(attackers.statuses),
        'attack p99 ms': attackers.p99,
        'largest answer bytes': attackers.maxBytes,
        'live p50 ms': probed.p50,
        'live p99 ms': probed.p99,
        'live non-2xx': probed.non2xx,
        'RSS MiB after': rssMiB().toFixed(1),
      });
    }
    printTable(
      `A subgraph process (auth, production, ${db}) beside ${SUBGRAPH_ATTACKERS} attackers, ${DURATION} s each`,
      rows,
    );
    printTable('Subgraph RSS', [
      { 'before (MiB)': rssBefore.toFixed(1), 'peak (MiB)': rssPeak.toFixed(1), 'after (MiB)': rssMiB().toFixed(1) },
    ]);
  } finally {
    await subgraph.kill();
    await removeBenchData(env);
  }
}
