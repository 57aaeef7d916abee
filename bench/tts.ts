// Issue 3's figures: voice creates and deletes through the facade (facade → gateway → tts
// subgraph) beside the same writes done by a baseline route without GraphQL, in one run, on
// SQLite and on MySQL, at 50 connections.
import type autocannon from 'autocannon';
import { benchEnv, load, LoadResult, postJson, printTable, startBenchServer } from './harness';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);

export async function run(): Promise<void> {
  const dbs = (process.env.BENCH_DB ? [process.env.BENCH_DB] : ['sqlite', 'mysql']) as ('sqlite' | 'mysql')[];
  for (const db of dbs) {
    const server = await startBenchServer(benchEnv(db));
    try {
      const login = await postJson(`${server.url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' });
      const headers = { authorization: `Bearer ${login.body.access_token}`, 'content-type': 'application/json' };
      let n = 0;
      const created: Record<string, string[]> = { facade: [], baseline: [] };
      const createRequests = (path: string, into: string[]): autocannon.Request[] => [{
        method: 'POST',
        path,
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: `bench voice ${n++}`, base_voice: 'f3' }) }),
        onResponse: (status, body) => {
          if (status === 202) into.push(JSON.parse(body).id);
        },
      }];
      const deleteRequests = (prefix: string, ids: string[]): autocannon.Request[] => [{
        method: 'DELETE',
        setupRequest: (req) => ({ ...req, path: `${prefix}/${ids.pop()}?version=1` }),
      }];
      // Warm both paths (the engine catalog, JIT, statements) before measuring.
      await load('warm-up', { url: server.url, headers, duration: 2, requests: createRequests('/api/v1/tts/voices', []) });
      await load('warm-up', { url: server.url, headers, duration: 2, requests: createRequests('/bench/baseline/voices', []) });

      const rows: LoadResult[] = [];
      rows.push(await load('POST /api/v1/tts/voices (facade → gateway → subgraph)', { url: server.url, headers, duration: DURATION, requests: createRequests('/api/v1/tts/voices', created.facade) }));
      rows.push(await load('POST /bench/baseline/voices (same writes, no GraphQL)', { url: server.url, headers, duration: DURATION, requests: createRequests('/bench/baseline/voices', created.baseline) }));
      const toDelete = Math.min(created.facade.length, created.baseline.length);
      rows.push(await load('DELETE /api/v1/tts/voices/{id}?version=1 (facade)', { url: server.url, headers, amount: toDelete, requests: deleteRequests('/api/v1/tts/voices', created.facade) }));
      rows.push(await load('DELETE /bench/baseline/voices/{id}?version=1 (no GraphQL)', { url: server.url, headers, amount: toDelete, requests: deleteRequests('/bench/baseline/voices', created.baseline) }));
      printTable(`Voice writes, 50 connections, ${db} (creates for ${DURATION} s; then ${toDelete} deletes each)`, rows.map((r) => ({
        route: r.name, 'req/s': r.rps, 'p50 ms': r.p50, 'p99 ms': r.p99, requests: r.requests, 'non-2xx': r.non2xx, errors: r.errors,
      })));
      console.log(`\nratio facade / baseline (requests/s): create ${(rows[0].rps / rows[1].rps).toFixed(2)}, delete ${(rows[2].rps / rows[3].rps).toFixed(2)}`);
    } finally {
      await server.stop();
    }
  }
}
