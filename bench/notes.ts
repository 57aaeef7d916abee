// Issue 31's figures: the notes module at 100,000 notes for one user and 10,000 for each of 9
// others (Markdown of 200–2,000 characters, seeded straight into the database by
// bench/baselines/notes.ts), with 20 concurrent clients:
// - search p95 (a term in ≤ 1,000 of the user's notes, and a common one in 20 %), target ≤ 50 ms;
// - create p95, target ≤ 20 ms; a listing page by tag p95, target ≤ 20 ms;
// - each beside the same operation on the service without GraphQL (token check + SQL), alternating
//   (BENCH_ROUNDS), with the server's CPU per request, and the statements alone timed in-process;
// - the search index's size on disk.
// BENCH_DB=sqlite|mysql picks one database (default: both); BENCH_SECONDS per run (default 8).
import { benchEnv, cpuMs, median, postJson, printTable, startBenchServer } from './harness';
import { COMMON_TERM, rareTerm } from './baselines/notes';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CLIENTS = 20;
const BIG = Number(process.env.BENCH_NOTES_BIG ?? 100_000);
const SMALL = Number(process.env.BENCH_NOTES_SMALL ?? 10_000);
const OTHERS = 9;

interface Run {
  requests: number;
  failed: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  cpuPerRequest: number;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN;

/** CLIENTS loops, each sending the next request as soon as its last answered, for DURATION seconds. */
async function closedLoop(pid: number, send: (i: number) => Promise<Response>, expect: number): Promise<Run> {
  const latencies: number[] = [];
  let failed = 0;
  let i = 0;
  const cpu0 = cpuMs(pid);
  const start = performance.now();
  const deadline = start + DURATION * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const res = await send(i++);
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (res.status !== expect) failed++;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    failed,
    rps: Math.round(latencies.length / elapsed),
    p50: quantile(latencies, 0.5),
    p95: quantile(latencies, 0.95),
    p99: quantile(latencies, 0.99),
    cpuPerRequest: (cpuMs(pid) - cpu0) / Math.max(1, latencies.length),
  };
}

export async function run(): Promise<void> {
  const dbs = (process.env.BENCH_DB ? [process.env.BENCH_DB] : ['sqlite', 'mysql']) as ('sqlite' | 'mysql')[];
  for (const db of dbs) {
    const server = await startBenchServer(
      benchEnv(db, {
        NOTES_PER_USER: '10000000',
        GRAPHQL_MAX_COST: '100000',
        // 20 clients of one user measure the search itself, not the per-user limit (bench/starvation.ts does).
        EXPENSIVE_PER_USER: '1000',
      }),
    );
    try {
      const login = await postJson(`${server.url}/api/v1/auth/login`, {
        username: 'bench',
        password: 'bench password',
      });
      const token: string = login.body.access_token;
      // The access token's subject is the user's id.
      const userId = (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as { sub: string })
        .sub;
      const owners: { id: string; count: number }[] = [];
      owners.push({ id: userId, count: BIG });
      for (let u = 0; u < OTHERS; u++) {
        const made = await postJson(
          `${server.url}/graphql`,
          {
            query: 'mutation ($u: String!) { createUser(username: $u, password: "bench other password 1") { id } }',
            variables: { u: `notes-bench-${u}` },
          },
          token,
        );
        owners.push({ id: made.body.data.createUser.id, count: SMALL });
      }
      const seedStart = performance.now();
      for (const [k, owner] of owners.entries())
        for (let start = 0; start < owner.count; start += 10_000) {
          const res = await postJson(`${server.url}/bench/notes/seed`, {
            owner: owner.id,
            start,
            count: Math.min(10_000, owner.count - start),
            seed: k + 1,
          });
          if (res.status !== 200) throw new Error(`seeding failed: ${JSON.stringify(res.body)}`);
        }
      const seedSeconds = (performance.now() - seedStart) / 1000;
      const sizes = (await (await fetch(`${server.url}/bench/notes/sizes`)).json()) as {
        index_bytes: number | null;
        other_bytes: number | null;
      };

      const headers = { authorization: `Bearer ${token}` };
      const get = (path: string) => () => fetch(`${server.url}${path}`, { headers });
      const body = (i: number) =>
        JSON.stringify({
          body: `# Bench note ${i}\n\nA ${COMMON_TERM} with café and #bench/create tags. ${'Lorem ipsum dolor sit amet. '.repeat(30)}\n- [[Bench note ${i - 1}]]`,
        });
      const post = (path: string) => (i: number) =>
        fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: body(i),
        });
      const scenarios: {
        name: string;
        target?: number;
        status: number;
        facade: (i: number) => Promise<Response>;
        baseline: (i: number) => Promise<Response>;
        sql?: string;
      }[] = [
        {
          name: 'search, a term in 1,000 of the notes',
          target: 50,
          status: 200,
          facade: (i) => get(`/api/v1/notes?q=${rareTerm(i % 100)}`)(),
          baseline: (i) => get(`/bench/notes?q=${rareTerm(i % 100)}`)(),
          sql: 'q=RARE',
        },
        {
          name: `search, a term in 20 % of the notes ("${COMMON_TERM}")`,
          status: 200,
          facade: get(`/api/v1/notes?q=${COMMON_TERM}`),
          baseline: get(`/bench/notes?q=${COMMON_TERM}`),
          sql: `q=${COMMON_TERM}`,
        },
        {
          name: 'listing by tag (2 % of the notes)',
          target: 20,
          status: 200,
          facade: (i) => get(`/api/v1/notes?tag=proj${i % 50}`)(),
          baseline: (i) => get(`/bench/notes?tag=proj${i % 50}`)(),
          sql: 'tag=proj7',
        },
        {
          name: 'listing by a parent tag (10 %, nested)',
          status: 200,
          facade: (i) => get(`/api/v1/notes?tag=area${i % 10}`)(),
          baseline: (i) => get(`/bench/notes?tag=area${i % 10}`)(),
          sql: 'tag=area3',
        },
        {
          name: 'create (~1 KB of Markdown)',
          target: 20,
          status: 202,
          facade: post('/api/v1/notes'),
          baseline: post('/bench/notes'),
        },
      ];
      const rows: Record<string, string | number>[] = [];
      for (const s of scenarios) {
        // Warm both paths, then alternate.
        for (const side of [s.facade, s.baseline]) await side(0).then((r) => r.arrayBuffer());
        const facade: Run[] = [];
        const baseline: Run[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          facade.push(await closedLoop(server.pid, s.facade, s.status));
          baseline.push(await closedLoop(server.pid, s.baseline, s.status));
        }
        let sqlP95 = '';
        if (s.sql) {
          const timing = (await (
            await fetch(`${server.url}/bench/notes/sql?owner=${userId}&n=50&${s.sql}`)
          ).json()) as { p50: number; p95: number };
          sqlP95 = `${timing.p50.toFixed(1)} / ${timing.p95.toFixed(1)}`;
        }
        const med = (runs: Run[], key: keyof Run) => median(runs.map((r) => r[key]));
        rows.push({
          operation: s.name,
          'facade p50 / p95 ms': `${med(facade, 'p50').toFixed(1)} / ${med(facade, 'p95').toFixed(1)}`,
          'target p95': s.target ? `≤ ${s.target}` : '',
          'facade req/s': med(facade, 'rps'),
          'facade CPU ms/req': med(facade, 'cpuPerRequest').toFixed(2),
          'no GraphQL p50 / p95 ms': `${med(baseline, 'p50').toFixed(1)} / ${med(baseline, 'p95').toFixed(1)}`,
          'no GraphQL req/s': med(baseline, 'rps'),
          'no GraphQL CPU ms/req': med(baseline, 'cpuPerRequest').toFixed(2),
          'SQL alone p50 / p95 ms (1 client)': sqlP95,
          failed: facade.concat(baseline).reduce((n, r) => n + r.failed, 0),
        });
      }
      printTable(
        `Notes, ${db}: ${BIG.toLocaleString('en')} notes of one user + ${OTHERS} × ${SMALL.toLocaleString('en')} (seeded in ${seedSeconds.toFixed(0)} s), ${CLIENTS} clients, ${ROUNDS} × ${DURATION} s alternating, medians`,
        rows,
      );
      const mib = (b: number | null) => (b === null ? 'n/a' : `${(b / 1024 / 1024).toFixed(1)} MiB`);
      console.log(
        `\nsearch index on disk (${db}): ${mib(sizes.index_bytes)}; everything else in the notes database: ${mib(sizes.other_bytes)}`,
      );
    } finally {
      await server.stop();
    }
  }
}
