// Issue 36's figures: what metrics and tracing cost. GET /api/v1/auth/session, 20 connections,
// on the one-process server (SQLite, BENCH_DB to change) with
//   everything off; metrics only (the default); metrics and tracing at 0 % (the cost of a request
//   not sampled), at 10 % and at 100 %;
// and on the distributed layout (facade → gateway → subgraphs as processes, MySQL) with metrics
// only, tracing at 10 % and at 100 %. Traces are exported over OTLP/HTTP to a collector stand-in
// in this process that reads and discards them. Runs alternate (BENCH_ROUNDS rounds of
// BENCH_SECONDS each) so that a busy machine slows all alike; the table has the median req/s,
// the CPU each request took (all processes), and the cost of each against its baseline.
// BENCH_BASE=<another checkout's dist/bench> adds that build's one-process tracing at 10 % and
// 100 %, alternating with the rest (before/after in one run).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  benchEnv,
  cpuMs,
  load,
  LoadResult,
  median,
  postJson,
  printTable,
  removeBenchData,
  startBenchServer,
} from './harness';
import type * as Processes from '../test/helpers/processes';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DB = (process.env.BENCH_DB ?? 'sqlite') as 'sqlite' | 'mysql';
const CONNECTIONS = 20;

interface Side {
  name: string;
  /** The side this one's cost is measured against (its name). */
  baseline?: string;
  url: string;
  pids: number[];
  stop(): Promise<void>;
  headers: Record<string, string>;
  runs: LoadResult[];
  /** CPU µs per request of each run, all the side's processes together. */
  cpu: number[];
}

export async function run(): Promise<void> {
  // An OTLP receiver that takes every export and counts its bytes, as a collector would.
  let exportedBytes = 0;
  let exports = 0;
  const collector = http.createServer((req, res) => {
    req.on('data', (d: Buffer) => (exportedBytes += d.length));
    req.on('end', () => {
      exports++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  const tracing = (ratio: string) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, TRACE_SAMPLE_RATIO: ratio });

  const oneProcess: { name: string; env: Record<string, string>; baseline?: string; script?: string }[] = [
    { name: 'off', env: { METRICS_ENABLED: 'false' } },
    { name: 'metrics only', env: {}, baseline: 'off' },
    // Every request in its trace scope, none sampled: what a request not sampled costs.
    { name: 'tracing 0 %', env: tracing('0'), baseline: 'off' },
    { name: 'tracing 10 %', env: tracing('0.1'), baseline: 'off' },
    { name: 'tracing 100 %', env: tracing('1'), baseline: 'off' },
  ];
  if (process.env.BENCH_BASE) {
    const script = path.relative(__dirname, path.join(path.resolve(process.env.BENCH_BASE), 'server.js'));
    oneProcess.push(
      { name: 'base build: tracing 10 %', env: tracing('0.1'), baseline: 'off', script },
      { name: 'base build: tracing 100 %', env: tracing('1'), baseline: 'off', script },
    );
  }
  const distributed: { name: string; env: Record<string, string>; baseline?: string }[] = [
    { name: 'distributed: metrics only', env: {} },
    { name: 'distributed: tracing 10 %', env: tracing('0.1'), baseline: 'distributed: metrics only' },
    { name: 'distributed: tracing 100 %', env: tracing('1'), baseline: 'distributed: metrics only' },
  ];

  const sides: Side[] = [];
  try {
    for (const s of oneProcess) {
      const server = await startBenchServer(benchEnv(DB, s.env), s.script ? { script: s.script } : {});
      sides.push({
        ...s,
        url: server.url,
        pids: [server.pid],
        stop: () => server.stop(),
        headers: {},
        runs: [],
        cpu: [],
      });
    }
    if (process.env.BENCH_DISTRIBUTED !== 'false') {
      const { startDistributed }: typeof Processes = await import('../test/helpers/processes');
      for (const s of distributed) {
        const env = benchEnv('mysql', s.env);
        const layout = await startDistributed(env);
        sides.push({
          ...s,
          url: layout.facades[0].url,
          pids: layout.all.map((p) => p.pid),
          stop: async () => {
            await layout.stop();
            await removeBenchData(env);
          },
          headers: {},
          runs: [],
          cpu: [],
        });
      }
    }
    for (const side of sides) {
      const login = await postJson(`${side.url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' });
      side.headers = { authorization: `Bearer ${login.body.access_token}` };
      await load('warm-up', {
        url: `${side.url}/api/v1/auth/session`,
        headers: side.headers,
        duration: 2,
        connections: CONNECTIONS,
      });
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of sides) {
        const before = side.pids.map(cpuMs);
        const result = await load(side.name, {
          url: `${side.url}/api/v1/auth/session`,
          headers: side.headers,
          duration: DURATION,
          connections: CONNECTIONS,
        });
        side.runs.push(result);
        const used = side.pids.reduce((sum, pid, i) => sum + cpuMs(pid) - before[i], 0);
        side.cpu.push(Math.round((used * 1000) / Math.max(1, result.requests)));
      }
    }
    const rps = (s: Side) => median(s.runs.map((r) => r.rps));
    const cpu = (s: Side) => median(s.cpu);
    const byName = new Map(sides.map((s) => [s.name, s]));
    printTable(
      `GET /api/v1/auth/session, ${CONNECTIONS} connections, ${ROUNDS} × ${DURATION} s alternating; one process on ${DB}, distributed on MySQL`,
      sides.map((s) => {
        const base = s.baseline ? byName.get(s.baseline) : undefined;
        return {
          setting: s.name,
          'req/s per run': s.runs.map((r) => r.rps).join(', '),
          'median req/s': rps(s),
          'median p99 ms': median(s.runs.map((r) => r.p99)),
          'CPU µs/request (median)': cpu(s),
          'req/s vs baseline': base ? `${((rps(s) / rps(base)) * 100).toFixed(0)} % of ${base.name}` : '',
          'CPU vs baseline': base ? `${(((cpu(s) - cpu(base)) / cpu(base)) * 100).toFixed(0)} %` : '',
          'non-2xx': s.runs.reduce((n, r) => n + r.non2xx, 0),
        };
      }),
    );
    console.log(
      `\ntargets (req/s lost against the baseline): metrics ≤ 3 %, tracing at 10 % ≤ 10 %, at 100 % ≤ 30 %. ` +
        `The collector received ${exports} exports, ${(exportedBytes / 2 ** 20).toFixed(1)} MiB`,
    );
  } finally {
    for (const side of sides) await side.stop().catch(() => undefined);
    collector.close();
  }
}
