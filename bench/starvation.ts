// Issue 41 finding 2's figures: one user (the attacker, with BENCH_STARVE_NOTES notes and a hub of
// BENCH_STARVE_HUB_NODES nodes) sends searches of 8 one-letter prefixes and depth-3 neighbour
// queries from BENCH_STARVE_CLIENTS clients at full rate (a refused one sends the next at once);
// another user (the victim, one note) lists her notes and /health/live is polled. Reported: the
// victim's and /health/live's p50/p95 idle and under attack, the attacker's answers by status,
// and the server's CPU. Target: the victim within 2× her idle p95, /health/live within 100 ms.
// BENCH_DB=sqlite|mysql picks one database (default: both); BENCH_SECONDS per phase (default 8).
import { benchEnv, cpuMs, loopDelay, mainThreadCpuMs, postJson, printTable, startBenchServer } from './harness';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const NOTES = Number(process.env.BENCH_STARVE_NOTES ?? 3000);
const HUB_NODES = Number(process.env.BENCH_STARVE_HUB_NODES ?? 4999);
const CLIENTS = Number(process.env.BENCH_STARVE_CLIENTS ?? 20);

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor(s.length * q))] * 10) / 10 : NaN;
};

async function timed(url: string, token?: string): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - t0 };
}

/** The victim's loop and /health/live's, one request at a time each, until `deadline`. */
async function observe(base: string, token: string, deadline: number) {
  const victim: number[] = [];
  const health: number[] = [];
  let failed = 0;
  await Promise.all([
    (async () => {
      while (performance.now() < deadline) {
        const r = await timed(`${base}/api/v1/notes`, token);
        victim.push(r.ms);
        if (r.status !== 200) failed++;
      }
    })(),
    (async () => {
      while (performance.now() < deadline) {
        const r = await timed(`${base}/health/live`);
        health.push(r.ms);
        if (r.status !== 200) failed++;
      }
    })(),
  ]);
  return { victim, health, failed };
}

export async function run(): Promise<void> {
  const dbs = (process.env.BENCH_DB ? [process.env.BENCH_DB] : ['sqlite', 'mysql']) as ('sqlite' | 'mysql')[];
  const rows: Record<string, string | number>[] = [];
  const perOperation: Record<string, string | number>[] = [];
  for (const db of dbs) {
    const server = await startBenchServer(benchEnv(db, { NOTES_PER_USER: '10000000', HUB_MAX_EDGES: '20000' }));
    try {
      const base = server.url;
      const admin: string = (
        await postJson(`${base}/api/v1/auth/login`, { username: 'bench', password: 'bench password' })
      ).body.access_token;
      const attackerId = (JSON.parse(Buffer.from(admin.split('.')[1], 'base64url').toString('utf8')) as { sub: string })
        .sub;
      const made = await postJson(
        `${base}/graphql`,
        { query: 'mutation { createUser(username: "victim", password: "victim bench password") { id } }' },
        admin,
      );
      if (made.body.errors) throw new Error(`createUser: ${JSON.stringify(made.body.errors)}`);
      const victim: string = (
        await postJson(`${base}/api/v1/auth/login`, { username: 'victim', password: 'victim bench password' })
      ).body.access_token;

      // The attacker's notes, straight into the database (bench/baselines/notes.ts), and hub.
      for (let start = 0; start < NOTES; start += 10_000) {
        const res = await postJson(`${base}/bench/notes/seed`, {
          owner: attackerId,
          start,
          count: Math.min(10_000, NOTES - start),
          seed: 1,
        });
        if (res.status !== 200) throw new Error(`seeding failed: ${JSON.stringify(res.body)}`);
      }
      const nodes = [{ id: 'c', type: 'text', text: 'centre', x: 0, y: 0, width: 10, height: 10 }];
      const edges: { id: string; fromNode: string; toNode: string }[] = [];
      for (let i = 0; i < HUB_NODES; i++) {
        nodes.push({
          id: `n${i}`,
          type: 'text',
          text: `node ${i}`,
          x: (i % 100) * 20,
          y: 40 + Math.floor(i / 100) * 20,
          width: 10,
          height: 10,
        });
        edges.push({ id: `c${i}`, fromNode: 'c', toNode: `n${i}` });
        if (i > 0) edges.push({ id: `e${i}`, fromNode: `n${i - 1}`, toNode: `n${i}` });
      }
      const hub = await postJson(`${base}/api/v1/hubs/import`, { name: 'big', canvas: { nodes, edges } }, admin);
      if (hub.status !== 202) throw new Error(`hub import: ${hub.status} ${JSON.stringify(hub.body)}`);
      const hubId = String(hub.location).split('/').pop()!;
      const graph = (await (
        await fetch(`${base}/api/v1/hubs/${hubId}`, { headers: { authorization: `Bearer ${admin}` } })
      ).json()) as {
        nodes: { id: string; text: string }[];
      };
      const centre = graph.nodes.find((n) => n.text === 'centre')!.id;
      const mine = await postJson(`${base}/api/v1/notes`, { title: 'mine', body: 'my only note' }, victim);
      if (mine.status !== 202) throw new Error(`victim's note: ${mine.status}`);

      const idle = await observe(base, victim, performance.now() + SECONDS * 1000);

      const attackPaths = [
        `/api/v1/notes?q=${encodeURIComponent('a b c d e f g h')}`,
        `/api/v1/hubs/${hubId}/nodes/${centre}/neighbors?depth=3&direction=both`,
      ];
      // Each expensive operation alone, one at a time: the server's CPU per request and the
      // longest it held the event loop (figures that hold on a loaded machine).
      for (const [name, p] of [
        ['search', attackPaths[0]],
        ['neighbours', attackPaths[1]],
      ]) {
        const n = 40;
        await loopDelay(server);
        const c0 = cpuMs(server.pid);
        const m0 = mainThreadCpuMs(server.pid);
        for (let i = 0; i < n; i++) await timed(`${base}${p}`, admin);
        perOperation.push({
          database: db,
          operation: name,
          'CPU ms / request': Math.round(((cpuMs(server.pid) - c0) / n) * 10) / 10,
          // The event loop's share: the rest ran in other threads (SQLite's read threads).
          'main-thread CPU ms / request': Math.round(((mainThreadCpuMs(server.pid) - m0) / n) * 10) / 10,
          'loop held max ms': (await loopDelay(server)).max,
        });
      }
      await loopDelay(server);
      const statuses = new Map<number, number>();
      const cpu0 = cpuMs(server.pid);
      const deadline = performance.now() + SECONDS * 1000;
      const [attacked] = await Promise.all([
        observe(base, victim, deadline),
        ...Array.from({ length: CLIENTS }, async (_, k) => {
          for (let i = k; performance.now() < deadline; i++) {
            const r = await timed(`${base}${attackPaths[i % 2]}`, admin);
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          }
        }),
      ]);
      const cpuSeconds = (cpuMs(server.pid) - cpu0) / 1000;
      const attackLoop = await loopDelay(server);
      const answers = [...statuses.values()].reduce((a, b) => a + b, 0);
      rows.push({
        database: db,
        'victim p50 / p95 idle ms': `${quantile(idle.victim, 0.5)} / ${quantile(idle.victim, 0.95)}`,
        'victim p50 / p95 attacked ms': `${quantile(attacked.victim, 0.5)} / ${quantile(attacked.victim, 0.95)}`,
        'victim p95 ratio': Math.round((quantile(attacked.victim, 0.95) / quantile(idle.victim, 0.95)) * 10) / 10,
        '/health/live p50 / p95 / max idle ms': `${quantile(idle.health, 0.5)} / ${quantile(idle.health, 0.95)} / ${quantile(idle.health, 1)}`,
        '/health/live p50 / p95 / max attacked ms': `${quantile(attacked.health, 0.5)} / ${quantile(attacked.health, 0.95)} / ${quantile(attacked.health, 1)}`,
        'victim failures': idle.failed + attacked.failed,
        'attacker answers': [...statuses].map(([s, n]) => `${n}× ${s}`).join(', '),
        'server CPU s (attack)': Math.round(cpuSeconds * 10) / 10,
        'CPU ms / attacker answer': Math.round(((cpuSeconds * 1000) / Math.max(1, answers)) * 100) / 100,
        'loop held max / p99 ms (attack)': `${attackLoop.max} / ${attackLoop.p99}`,
      });
    } finally {
      await server.stop();
    }
  }
  printTable(
    `Starvation: one user searches and walks neighbours at full rate (${CLIENTS} clients, ${NOTES} notes, hub of ${HUB_NODES + 1} nodes), another lists hers`,
    rows,
  );
  printTable(
    'Each expensive operation alone, one at a time (server CPU from /proc, loop stall from perf_hooks)',
    perOperation,
  );
}
