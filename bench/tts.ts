// Issue 3's and 14's figures: voice creates through the facade (facade → gateway → tts subgraph)
// beside the same writes done by a baseline route without GraphQL (bench/baselines/tts.ts), in
// one server, on SQLite and on MySQL, at 50 connections. Creates run A/B/A/B (BENCH_ROUNDS,
// medians, with the server's CPU per request, steadier on a shared machine); then as many deletes
// of each. Issue 14's target is on MySQL: the facade at ≥ 0.6× the baseline.
import type autocannon from 'autocannon';
import { benchEnv, cpuMs, load, LoadResult, median, postJson, printTable, startBenchServer } from './harness';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

export async function run(): Promise<void> {
  const dbs = (process.env.BENCH_DB ? [process.env.BENCH_DB] : ['sqlite', 'mysql']) as ('sqlite' | 'mysql')[];
  for (const db of dbs) {
    const server = await startBenchServer(benchEnv(db));
    try {
      const login = await postJson(`${server.url}/api/v1/auth/login`, {
        username: 'bench',
        password: 'bench password',
      });
      const headers = { authorization: `Bearer ${login.body.access_token}`, 'content-type': 'application/json' };
      let n = 0;
      const createRequests = (path: string, into: string[]): autocannon.Request[] => [
        {
          method: 'POST',
          path,
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: `bench voice ${n++}`, base_voice: 'f3' }) }),
          onResponse: (status, body) => {
            if (status === 202) into.push(JSON.parse(body).id);
          },
        },
      ];
      const deleteRequests = (prefix: string, ids: string[]): autocannon.Request[] => [
        {
          method: 'DELETE',
          setupRequest: (req) => ({ ...req, path: `${prefix}/${ids.pop()}?version=1` }),
        },
      ];
      // Warm both paths (the engine catalog, JIT, statements) before measuring.
      await load('warm-up', {
        url: server.url,
        headers,
        duration: 2,
        requests: createRequests('/api/v1/tts/voices', []),
      });
      await load('warm-up', {
        url: server.url,
        headers,
        duration: 2,
        requests: createRequests('/bench/baseline/voices', []),
      });

      const sides = [
        {
          name: 'POST /api/v1/tts/voices (facade → gateway → subgraph)',
          path: '/api/v1/tts/voices',
          created: [] as string[],
          runs: [] as LoadResult[],
          cpu: [] as number[],
        },
        {
          name: 'POST /bench/baseline/voices (same writes, no GraphQL)',
          path: '/bench/baseline/voices',
          created: [] as string[],
          runs: [] as LoadResult[],
          cpu: [] as number[],
        },
      ];
      for (let round = 0; round < ROUNDS; round++) {
        for (const side of sides) {
          const before = cpuMs(server.pid);
          const result = await load(side.name, {
            url: server.url,
            headers,
            duration: DURATION,
            requests: createRequests(side.path, side.created),
          });
          side.cpu.push((cpuMs(server.pid) - before) / Math.max(1, result.requests));
          side.runs.push(result);
        }
      }
      const toDelete = Math.min(sides[0].created.length, sides[1].created.length);
      const deletes = [
        await load('DELETE /api/v1/tts/voices/{id}?version=1 (facade)', {
          url: server.url,
          headers,
          amount: toDelete,
          requests: deleteRequests('/api/v1/tts/voices', sides[0].created),
        }),
        await load('DELETE /bench/baseline/voices/{id}?version=1 (no GraphQL)', {
          url: server.url,
          headers,
          amount: toDelete,
          requests: deleteRequests('/bench/baseline/voices', sides[1].created),
        }),
      ];
      printTable(
        `Voice creates, 50 connections, ${db}, ${ROUNDS} × ${DURATION} s alternating`,
        sides.map((s) => ({
          route: s.name,
          'req/s per run': s.runs.map((r) => r.rps).join(', '),
          'median req/s': median(s.runs.map((r) => r.rps)),
          'median p50 ms': median(s.runs.map((r) => r.p50)),
          'median p99 ms': median(s.runs.map((r) => r.p99)),
          'server CPU ms/request': median(s.cpu).toFixed(3),
          'non-2xx': s.runs.reduce((k, r) => k + r.non2xx, 0),
          errors: s.runs.reduce((k, r) => k + r.errors, 0),
        })),
      );
      printTable(
        `Voice deletes, ${toDelete} each, ${db}`,
        deletes.map((r) => ({
          route: r.name,
          'req/s': r.rps,
          'p50 ms': r.p50,
          'p99 ms': r.p99,
          requests: r.requests,
          'non-2xx': r.non2xx,
          errors: r.errors,
        })),
      );
      const create = median(sides[0].runs.map((r) => r.rps)) / median(sides[1].runs.map((r) => r.rps));
      console.log(
        `\nratio facade / baseline on ${db}: create ${create.toFixed(2)} (median requests/s${db === 'mysql' ? '; target ≥ 0.6' : ''}), ` +
          `create ${(median(sides[1].cpu) / median(sides[0].cpu)).toFixed(2)} (baseline / facade server CPU per request), delete ${(deletes[0].rps / deletes[1].rps).toFixed(2)}`,
      );
    } finally {
      await server.stop();
    }
  }
}
