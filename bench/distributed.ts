// Issue 5's figures: the same requests through the distributed layout (1 facade, 1 gateway,
// each subgraph its own process, all over HTTP) and through the one-process server, in one
// run on MySQL.
import { benchEnv, load, LoadResult, postJson, printTable, startBenchServer } from './harness';
import { startDistributed } from './processes';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);

export async function run(): Promise<void> {
  const oneProcess = await startBenchServer(benchEnv('mysql'));
  const distributed = await startDistributed(benchEnv('mysql'));
  try {
    const rows: LoadResult[] = [];
    for (const [layout, url] of [['one process', oneProcess.url], ['distributed', distributed.facades[0].url]] as const) {
      const login = await postJson(`${url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' });
      const headers = { authorization: `Bearer ${login.body.access_token}` };
      await load('warm-up', { url: `${url}/api/v1/auth/session`, headers, duration: 2 });
      rows.push(await load(`GET /api/v1/auth/session, ${layout}`, { url: `${url}/api/v1/auth/session`, headers, duration: DURATION }));
    }
    printTable(`Session reads, 50 connections, ${DURATION} s, MySQL`, rows.map((r) => ({ route: r.name, 'req/s': r.rps, 'p50 ms': r.p50, 'p99 ms': r.p99, 'non-2xx': r.non2xx, errors: r.errors })));
    console.log(`\nratio distributed / one process (requests/s): ${(rows[1].rps / rows[0].rps).toFixed(2)}`);
  } finally {
    await oneProcess.stop();
    await distributed.stop();
  }
}
