// Issue 2's figures: session reads through facade → gateway → subgraph beside a baseline
// without GraphQL; logins per second with argon2id off the event loop; idle RSS and start time.
import { benchEnv, load, postJson, printTable, startBenchServer } from './harness';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);

export async function run(): Promise<void> {
  const db = (process.env.BENCH_DB as 'sqlite' | 'mysql') ?? 'sqlite';
  const server = await startBenchServer(benchEnv(db));
  try {
    await new Promise((r) => setTimeout(r, 2000));
    const idleRss = server.rssMiB();
    const login = await postJson(`${server.url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' });
    const headers = { authorization: `Bearer ${login.body.access_token}` };

    // Warm both paths (JIT, query plans) before measuring.
    await load('warm-up', { url: `${server.url}/api/v1/auth/session`, headers, duration: 2 });
    await load('warm-up', { url: `${server.url}/bench/baseline/session`, headers, duration: 2 });
    const facade = await load('GET /api/v1/auth/session (facade → gateway → subgraph)', {
      url: `${server.url}/api/v1/auth/session`,
      headers,
      duration: DURATION,
    });
    const baseline = await load('GET /bench/baseline/session (JWT + row, no GraphQL)', {
      url: `${server.url}/bench/baseline/session`,
      headers,
      duration: DURATION,
    });
    printTable(`Session reads, 50 connections, ${DURATION} s, ${db}`, [facade, baseline].map(row));
    console.log(`\nratio facade / baseline (requests/s): ${(facade.rps / baseline.rps).toFixed(2)}`);

    const loginBody = JSON.stringify({ username: 'bench', password: 'bench password' });
    const loginHeaders = { 'content-type': 'application/json' };
    const [logins, readsDuringLogins] = await Promise.all([
      load('POST /api/v1/auth/login', {
        url: `${server.url}/api/v1/auth/login`,
        method: 'POST',
        body: loginBody,
        headers: loginHeaders,
        connections: 8,
        duration: DURATION,
      }),
      load('GET /api/v1/auth/session while logins run', {
        url: `${server.url}/api/v1/auth/session`,
        headers,
        connections: 10,
        duration: DURATION,
      }),
    ]);
    printTable(
      `Logins (8 connections) with session reads (10 connections) at the same time, ${db}`,
      [logins, readsDuringLogins].map(row),
    );

    printTable('Process', [
      {
        'start to ready (ms)': Math.round(server.startMs),
        'idle RSS (MiB)': idleRss.toFixed(1),
        'RSS after load (MiB)': server.rssMiB().toFixed(1),
      },
    ]);
  } finally {
    await server.stop();
  }
}

const row = (r: Awaited<ReturnType<typeof load>>) => ({
  route: r.name,
  'req/s': r.rps,
  'p50 ms': r.p50,
  'p99 ms': r.p99,
  requests: r.requests,
  'non-2xx': r.non2xx,
  errors: r.errors,
});
