// Issue 34's figures: webhook deliveries from the one-process server to a local receiver.
// 100 endpoints subscribed to the bench user's voice.created; voices are created at a steady
// rate (each one fans out to every endpoint), and the lag from the voice's 202 (its commit) to
// each delivery's arrival is measured; then a burst, for deliveries per second. Then the same
// with 10 of the endpoints answering only after 10 s: the other 90 must not slow down.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { percentile } from './events';
import path from 'node:path';
import { benchEnv, cpuMs, postJson, printTable, startBenchServer } from './harness';

const ENDPOINTS = 100;
const PACED_VOICES = Number(process.env.BENCH_WEBHOOK_VOICES ?? 40);
const PACED_PER_SECOND = 5; // 500 deliveries offered per second
const BURST_VOICES = Number(process.env.BENCH_WEBHOOK_BURST ?? 60);

interface Receiver {
  url: string;
  /** `path|voice id` → arrival (performance.now()). */
  arrivals: Map<string, number>;
  slow: Set<string>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  const slow = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id;
      if (slow.has(req.url!)) {
        setTimeout(() => res.writeHead(204).end(), 10_000).unref();
        return;
      }
      arrivals.set(`${req.url}|${id}`, performance.now());
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    slow,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function until(probe: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

async function scenario(slowCount: number, script = 'server.js'): Promise<Record<string, string | number>[]> {
  const receiver = await startReceiver();
  const server = await startBenchServer(
    benchEnv('mysql', {
      SYNTHESIS_CONCURRENCY: '0',
      WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      WEBHOOKS_PER_USER: String(ENDPOINTS),
      VOICES_PER_USER: '100000',
    }),
    { script },
  );
  try {
    const login = await postJson(`${server.url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' });
    const token = login.body.access_token as string;
    const paths: string[] = [];
    for (let i = 0; i < ENDPOINTS; i++) {
      const path = `/ep${i}`;
      paths.push(path);
      if (i < slowCount) receiver.slow.add(path);
      const res = await postJson(
        `${server.url}/api/v1/integrations/webhooks`,
        { url: `${receiver.url}${path}`, event_types: ['voice.created'] },
        token,
      );
      if (res.status !== 202) throw new Error(`webhook: ${res.status} ${JSON.stringify(res.body)}`);
    }
    const fast = paths.filter((p) => !receiver.slow.has(p));
    const create = async (name: string) => {
      const res = await postJson(`${server.url}/api/v1/tts/voices`, { name, base_voice: 'm1' }, token);
      if (res.status !== 202) throw new Error(`voice: ${res.status}`);
      return { id: res.body.id as string, at: performance.now() };
    };
    const arrived = (ids: string[]) => ids.every((id) => fast.every((p) => receiver.arrivals.has(`${p}|${id}`)));

    // Paced: PACED_PER_SECOND voices a second, each to every endpoint.
    const paced: { id: string; at: number }[] = [];
    for (let i = 0; i < PACED_VOICES; i++) {
      paced.push(await create(`paced ${i}`));
      await new Promise((r) => setTimeout(r, 1000 / PACED_PER_SECOND));
    }
    const pacedDone = await until(() => arrived(paced.map((v) => v.id)), 60_000);
    const lags: number[] = [];
    for (const v of paced)
      for (const p of fast) {
        const t = receiver.arrivals.get(`${p}|${v.id}`);
        if (t !== undefined) lags.push(t - v.at);
      }
    lags.sort((a, b) => a - b);

    // Burst: as fast as the voices are acknowledged, then until every fast endpoint has them all.
    const burstStart = performance.now();
    const burstCpu = cpuMs(server.pid);
    const burst = await Promise.all(Array.from({ length: BURST_VOICES }, (_, i) => create(`burst ${i}`)));
    const burstDone = await until(() => arrived(burst.map((v) => v.id)), 120_000);
    const cpuPerDelivery = (cpuMs(server.pid) - burstCpu) / (burst.length * ENDPOINTS);
    const last = Math.max(...burst.flatMap((v) => fast.map((p) => receiver.arrivals.get(`${p}|${v.id}`) ?? 0)));
    const deliveries = burst.length * fast.length;
    return [
      {
        build: script === 'server.js' ? 'this' : 'base',
        endpoints: `${fast.length} fast${slowCount ? ` + ${slowCount} answering in 10 s` : ''}`,
        'paced deliveries': paced.length * fast.length,
        'paced complete': pacedDone ? 'yes' : 'NO',
        'lag p50 ms': percentile(lags, 50).toFixed(0),
        'lag p99 ms': percentile(lags, 99).toFixed(0),
        'lag max ms': lags[lags.length - 1].toFixed(0),
        'burst deliveries': deliveries,
        'burst complete': burstDone ? 'yes' : 'NO',
        'burst deliveries/s': (deliveries / ((last - burstStart) / 1000)).toFixed(0),
        // Server CPU over the burst (its voices' creation, fan-out and every attempt, slow ones too) per delivery.
        'burst CPU ms/delivery': cpuPerDelivery.toFixed(2),
      },
    ];
  } finally {
    await server.stop();
    await receiver.close();
  }
}

export async function run(): Promise<void> {
  // BENCH_BASE=<another checkout's dist/bench>: that build's server first, then this one's, for each scenario.
  const builds = ['server.js'];
  if (process.env.BENCH_BASE)
    builds.unshift(path.relative(__dirname, path.join(path.resolve(process.env.BENCH_BASE), 'server.js')));
  // BENCH_WEBHOOK_SLOW=0,10: the scenarios, by the number of endpoints answering in 10 s.
  const slow = (process.env.BENCH_WEBHOOK_SLOW ?? '0,10').split(',').map(Number);
  const rows: Record<string, string | number>[] = [];
  for (const count of slow) for (const script of builds) rows.push(...(await scenario(count, script)));
  printTable(
    `Webhook deliveries, one process on MySQL, ${ENDPOINTS} endpoints on voice.created: ${PACED_VOICES} voices at ${PACED_PER_SECOND}/s (lag from the 202), then a burst of ${BURST_VOICES}`,
    rows,
  );
}
