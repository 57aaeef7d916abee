// Issue 17's overheads: GET /api/v1/auth/session of the one-process server with metrics off,
// with metrics on (the default), with metrics on and every request traced and exported over
// OTLP/HTTP to a collector stand-in in this process, and with 1 trace in 10 sampled. Runs alternate A/B/C/D so that a busy machine
// slows all alike; medians and the cost of each against "off" are reported.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { benchEnv, load, LoadResult, median, postJson, printTable, startBenchServer } from './harness';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DB = (process.env.BENCH_DB ?? 'mysql') as 'sqlite' | 'mysql';

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

  const sides = (
    [
      { name: 'metrics off', env: { METRICS_ENABLED: 'false' } },
      { name: 'metrics on (default)', env: {} },
      { name: 'metrics on + tracing exported', env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } },
      // The SDK's own sampler settings: 1 request in 10 starts a recorded trace, and every hop follows its parent's decision.
      {
        name: 'tracing, 10% sampled',
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
          OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
          OTEL_TRACES_SAMPLER_ARG: '0.1',
        },
      },
    ] as { name: string; env: Record<string, string> }[]
  ).map((s) => ({
    ...s,
    runs: [] as LoadResult[],
    server: undefined as Awaited<ReturnType<typeof startBenchServer>> | undefined,
    headers: {},
  }));
  try {
    for (const side of sides) {
      side.server = await startBenchServer(benchEnv(DB, side.env));
      const login = await postJson(`${side.server.url}/api/v1/auth/login`, {
        username: 'bench',
        password: 'bench password',
      });
      side.headers = { authorization: `Bearer ${login.body.access_token}` };
      await load('warm-up', { url: `${side.server.url}/api/v1/auth/session`, headers: side.headers, duration: 2 });
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of sides)
        side.runs.push(
          await load(side.name, {
            url: `${side.server!.url}/api/v1/auth/session`,
            headers: side.headers,
            duration: DURATION,
          }),
        );
    }
    const off = median(sides[0].runs.map((r) => r.rps));
    printTable(
      `GET /api/v1/auth/session, 50 connections, ${ROUNDS} × ${DURATION} s alternating, ${DB}`,
      sides.map((s) => {
        const rps = median(s.runs.map((r) => r.rps));
        return {
          server: s.name,
          'req/s per run': s.runs.map((r) => r.rps).join(', '),
          'median req/s': rps,
          'median p99 ms': median(s.runs.map((r) => r.p99)),
          'cost vs off': `${(((off - rps) / off) * 100).toFixed(1)}%`,
          'non-2xx': s.runs.reduce((n, r) => n + r.non2xx, 0),
        };
      }),
    );
    console.log(
      `\ntargets: metrics < 5%, tracing < 15%; the collector received ${exports} exports, ${(exportedBytes / 2 ** 20).toFixed(1)} MiB`,
    );
  } finally {
    for (const side of sides) await side.server?.stop();
    collector.close();
  }
}
