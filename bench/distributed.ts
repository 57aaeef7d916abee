// Issue 5's figures: the same requests through the distributed layout (1 facade, 1 gateway,
// each subgraph its own process, all over HTTP) and through the one-process server, in one
// run on MySQL.
import type autocannon from 'autocannon';
import { benchEnv, load, LoadResult, postJson, printTable, removeBenchData, startBenchServer } from './harness';
import { startDistributed } from './processes';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);

export async function run(): Promise<void> {
  const oneProcess = await startBenchServer(benchEnv('mysql'));
  const distributedEnv = benchEnv('mysql');
  const distributed = await startDistributed(distributedEnv);
  try {
    const rows: Record<string, LoadResult[]> = { reads: [], creates: [] };
    for (const [layout, url] of [['one process', oneProcess.url], ['distributed', distributed.facades[0].url]] as const) {
      const login = await postJson(`${url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' });
      const headers = { authorization: `Bearer ${login.body.access_token}`, 'content-type': 'application/json' };
      let n = 0;
      const creates: autocannon.Request[] = [{
        method: 'POST', path: '/api/v1/tts/voices',
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: `bench ${n++}`, base_voice: 'f3' }) }),
      }];
      await load('warm-up', { url: `${url}/api/v1/auth/session`, headers, duration: 2 });
      await load('warm-up', { url, headers, duration: 2, requests: creates });
      rows.reads.push(await load(`GET /api/v1/auth/session, ${layout}`, { url: `${url}/api/v1/auth/session`, headers, duration: DURATION }));
      rows.creates.push(await load(`POST /api/v1/tts/voices, ${layout}`, { url, headers, duration: DURATION, requests: creates }));
    }
    const table = (r: LoadResult) => ({ route: r.name, 'req/s': r.rps, 'p50 ms': r.p50, 'p99 ms': r.p99, 'non-2xx': r.non2xx, errors: r.errors });
    printTable(`One process vs distributed, 50 connections, ${DURATION} s each, MySQL`, [...rows.reads, ...rows.creates].map(table));
    const ratio = (pair: LoadResult[]) => (pair[1].rps / pair[0].rps).toFixed(2);
    console.log(`\nratio distributed / one process (requests/s): session reads ${ratio(rows.reads)}, voice creates ${ratio(rows.creates)}`);
  } finally {
    await oneProcess.stop();
    await distributed.stop();
    await removeBenchData(distributedEnv);
  }
}
