// The whole hub in the distributed layout (`BENCH_HUB_DISTRIBUTED=1 npm run bench -- hubs`): the
// typed GraphQL selection of every node and edge field sent to the gateway, and GET /hubs/{id} to
// the facade, one request at a time, with the CPU per request of the facade, the gateway and the
// hubs subgraph, each its own process: what each hop pays (issue 44).
import path from 'node:path';
import { processesModule } from './distributed';
import { benchEnv, cpuMs, postJson, removeBenchData } from './harness';
import type * as Processes from '../test/helpers/processes';

export async function distributedRows(
  builds: { tag: string; bench: string }[],
  db: 'sqlite' | 'mysql',
  canvas: unknown,
  typedQuery: string,
  rounds: number,
): Promise<Record<string, string | number>[]> {
  const rows: Record<string, string | number>[] = [];
  for (const build of builds) {
    const { startDistributed } = (await import(processesModule(path.resolve(build.bench)))) as typeof Processes;
    const env = benchEnv(db, { SYNTHESIS_CONCURRENCY: '0', EXPENSIVE_PER_USER: '1000', LOG_LEVEL: 'warn' });
    const layout = await startDistributed(env);
    try {
      const facade = layout.facades[0];
      const gateway = layout.gateways[0];
      const hubs = layout.subgraphs.find((s) => s.name === 'subgraph hubs')!;
      const login = await postJson(`${facade.url}/api/v1/auth/login`, {
        username: 'bench',
        password: 'bench password',
      });
      const headers = { authorization: `Bearer ${login.body.access_token}`, 'content-type': 'application/json' };
      const imported = await postJson(
        `${facade.url}/api/v1/hubs/import`,
        { name: 'big', canvas },
        login.body.access_token,
      );
      if (imported.status !== 202) throw new Error(`import: ${imported.status} ${JSON.stringify(imported.body)}`);
      const hub = imported.body.id as string;
      const body = JSON.stringify({ query: typedQuery, variables: { id: hub } });
      const requests = {
        'POST /graphql (gateway) hub { nodes {…} edges {…} }': () =>
          fetch(`${gateway.url}/graphql`, { method: 'POST', headers, body }),
        'GET /hubs/{id} (facade)': () => fetch(`${facade.url}/api/v1/hubs/${hub}`, { headers }),
      };
      for (const [what, send] of Object.entries(requests)) {
        // The first builds and keeps what the next ones read.
        for (let i = 0; i < 2; i++) await (await send()).arrayBuffer();
        const procs = [facade, gateway, hubs];
        const before = procs.map((p) => cpuMs(p.pid));
        for (let i = 0; i < rounds; i++) {
          const res = await send();
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`${what}: ${res.status}`);
        }
        const cpu = procs.map((p, i) => ((cpuMs(p.pid) - before[i]) / rounds).toFixed(1));
        rows.push({
          db: `${db}${build.tag}, distributed`,
          what,
          'facade CPU ms / request': cpu[0],
          'gateway CPU ms / request': cpu[1],
          'hubs subgraph CPU ms / request': cpu[2],
        });
      }
    } finally {
      await layout.stop();
      await removeBenchData(env);
    }
  }
  return rows;
}
