// Issue 14's gateway tier: the same subgraph processes (MySQL) served by the project's gateway
// and by Hive Gateway (in-flight deduplication off, headers propagated; bench/hive-gateway.ts),
// the same query, runs alternating A/B/A/B. Reports medians, their ratio, and the CPU the
// gateway and the subgraphs spend per request (from /proc, so the subgraphs' share shows that
// both gateways ask them for the same work).
import path from 'node:path';
import { benchEnv, cpuMs, load, LoadResult, median, postJson, printTable, removeBenchData } from './harness';
import { ServiceProcess, startDistributed, startProcess } from '../test/helpers/processes';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const QUERY = '{ currentSession { id userId expiresAt state } }';

export async function run(): Promise<void> {
  const env = benchEnv('mysql');
  const layout = await startDistributed(env, { gateways: 1, facades: 0 });
  let hive: ServiceProcess | undefined;
  try {
    const urls = layout.subgraphs.map((s) => `${s.name.replace(/^subgraph /, '')}=${s.url}/graphql`).join(',');
    hive = await startProcess('hive gateway', '../bench/hive-gateway.js', [], {
      ...env,
      SUPERGRAPH_PATH: path.join(env.DATA_DIR, 'supergraph.graphql'),
      SUBGRAPH_URLS: urls,
    });
    const login = await postJson(`${layout.gateways[0].url}/graphql`, {
      query: 'mutation { login(username: "bench", password: "bench password") { accessToken } }',
    });
    const headers = {
      authorization: `Bearer ${login.body.data.login.accessToken}`,
      'content-type': 'application/json',
    };
    const body = JSON.stringify({ query: QUERY });
    const auth = layout.subgraphs.find((s) => s.name === 'subgraph auth')!;
    const sides = [
      {
        name: 'project gateway (Apollo)',
        gateway: layout.gateways[0],
        runs: [] as LoadResult[],
        gatewayCpu: [] as number[],
        subgraphCpu: [] as number[],
      },
      {
        name: 'Hive Gateway 2.15.1',
        gateway: hive,
        runs: [] as LoadResult[],
        gatewayCpu: [] as number[],
        subgraphCpu: [] as number[],
      },
    ];
    for (const side of sides) {
      const res = await postJson(`${side.gateway.url}/graphql`, { query: QUERY }, login.body.data.login.accessToken);
      if (res.status !== 200 || res.body?.errors)
        throw new Error(`${side.name} answered ${res.status}: ${JSON.stringify(res.body)}`);
      await load('warm-up', { url: `${side.gateway.url}/graphql`, method: 'POST', headers, body, duration: 2 });
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of sides) {
        const [gw, sg] = [cpuMs(side.gateway.pid), cpuMs(auth.pid)];
        const result = await load(side.name, {
          url: `${side.gateway.url}/graphql`,
          method: 'POST',
          headers,
          body,
          duration: DURATION,
        });
        const n = Math.max(1, result.requests);
        side.gatewayCpu.push((cpuMs(side.gateway.pid) - gw) / n);
        side.subgraphCpu.push((cpuMs(auth.pid) - sg) / n);
        side.runs.push(result);
      }
    }
    printTable(
      `POST /graphql ${QUERY}, 50 connections, ${ROUNDS} × ${DURATION} s alternating, MySQL`,
      sides.map((s) => ({
        gateway: s.name,
        'req/s per run': s.runs.map((r) => r.rps).join(', '),
        'median req/s': median(s.runs.map((r) => r.rps)),
        'median p50 ms': median(s.runs.map((r) => r.p50)),
        'median p99 ms': median(s.runs.map((r) => r.p99)),
        'gateway CPU ms/request': median(s.gatewayCpu).toFixed(3),
        'auth subgraph CPU ms/request': median(s.subgraphCpu).toFixed(3),
        'non-2xx': s.runs.reduce((n, r) => n + r.non2xx, 0),
      })),
    );
    const ratio = median(sides[0].runs.map((r) => r.rps)) / median(sides[1].runs.map((r) => r.rps));
    console.log(`\nratio project gateway / Hive Gateway (median requests/s): ${ratio.toFixed(2)}   (target ≥ 1.0)`);
    // On a shared, busy machine requests/s swing with the neighbours' load; CPU per request less so.
    console.log(
      `ratio Hive Gateway / project gateway (median gateway CPU per request): ${(median(sides[1].gatewayCpu) / median(sides[0].gatewayCpu)).toFixed(2)}`,
    );
  } finally {
    await hive?.kill();
    await layout.stop();
    await removeBenchData(env);
  }
}
