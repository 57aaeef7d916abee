// Issue 33's figures, on SQLite and on MySQL, one server each: a hub of 5,000 nodes and 20,000
// edges imported as a canvas; then, one request at a time (latency, not throughput), GET of the
// whole hub (p95 and the server's RSS before and after), neighbours at depth 3, the canvas export,
// and a voice node's content (one federation hop to tts) beside GET of the voice itself.
import { benchEnv, postJson, printTable, startBenchServer } from './harness';

const NODES = 5000;
const EDGES = 20_000;
const ROUNDS = Number(process.env.BENCH_HUB_ROUNDS ?? 30);

const p = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
};

/** A canvas of `NODES` text nodes on a grid and `EDGES` edges, seeded, so both databases get the same graph. */
function bigCanvas() {
  let seed = 42;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  const nodes = Array.from({ length: NODES }, (_, i) => ({
    id: `n${i}`,
    type: 'text',
    text: `Node ${i}: a short thought, as a canvas card holds one.`,
    x: (i % 100) * 300,
    y: Math.floor(i / 100) * 200,
    width: 250,
    height: 60,
  }));
  const edges = Array.from({ length: EDGES }, (_, i) => {
    const from = i < NODES - 1 ? i : rand(NODES);
    const to = i < NODES - 1 ? i + 1 : rand(NODES);
    return { id: `e${i}`, fromNode: `n${from}`, toNode: `n${to}`, toEnd: 'arrow' };
  });
  return { nodes, edges };
}

async function timed(url: string, token: string, times: number): Promise<{ ms: number[]; bytes: number }> {
  const ms: number[] = [];
  let bytes = 0;
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const body = await res.arrayBuffer();
    ms.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${Buffer.from(body).toString().slice(0, 300)}`);
    bytes = body.byteLength;
  }
  return { ms, bytes };
}

export async function run(): Promise<void> {
  const dbs = (process.env.BENCH_DB ? [process.env.BENCH_DB] : ['sqlite', 'mysql']) as ('sqlite' | 'mysql')[];
  const canvas = bigCanvas();
  const rows: Record<string, string | number>[] = [];
  for (const db of dbs) {
    const server = await startBenchServer(benchEnv(db, { SYNTHESIS_CONCURRENCY: '0', EXPENSIVE_PER_USER: '1000' }));
    try {
      const login = await postJson(`${server.url}/api/v1/auth/login`, {
        username: 'bench',
        password: 'bench password',
      });
      const token = login.body.access_token as string;
      const headers = { authorization: `Bearer ${token}` };
      const importStarted = performance.now();
      const imported = await postJson(`${server.url}/api/v1/hubs/import`, { name: 'big', canvas }, token);
      const importMs = performance.now() - importStarted;
      if (imported.status !== 202) throw new Error(`import: ${imported.status} ${JSON.stringify(imported.body)}`);
      const hub = imported.body.id as string;
      const base = `${server.url}/api/v1/hubs/${hub}`;
      rows.push({
        db,
        what: `import (${NODES} nodes, ${EDGES} edges, one request)`,
        p50: Math.round(importMs),
        p95: '',
        note: '',
      });

      // The REST GET (Hub.graph, one JSON value) and the typed GraphQL selection of every node's
      // and edge's fields, alternately, so that both see the same machine.
      const typed = JSON.stringify({
        query: `query ($id: ID!) { hub(id: $id) { id name nodes { id hubId type x y width height color label text url refId missing version createdAt updatedAt } edges { id fromNode toNode fromSide toSide fromEnd toEnd label color } } }`,
        variables: { id: hub },
      });
      const rssBefore = server.rssMiB();
      const get: number[] = [];
      const gql: number[] = [];
      let bytes = 0;
      for (let i = 0; i < ROUNDS; i++) {
        const rest = await timed(base, token, 1);
        get.push(...rest.ms);
        bytes = rest.bytes;
        const started = performance.now();
        const res = await fetch(`${server.url}/graphql`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: typed,
        });
        await res.arrayBuffer();
        gql.push(performance.now() - started);
      }
      const rssAfter = server.rssMiB();
      rows.push({
        db,
        what: 'GET /hubs/{id} (Hub.graph)',
        p50: Math.round(p(get, 0.5)),
        p95: Math.round(p(get, 0.95)),
        note: `${(bytes / 1024 ** 2).toFixed(1)} MiB; RSS ${rssBefore.toFixed(0)} → ${rssAfter.toFixed(0)} MiB over both`,
      });
      rows.push({
        db,
        what: 'POST /graphql hub { nodes {…} edges {…} }',
        p50: Math.round(p(gql, 0.5)),
        p95: Math.round(p(gql, 0.95)),
        note: `${(p(gql, 0.5) / p(get, 0.5)).toFixed(2)}× the REST GET (p50)`,
      });

      const whole = (await (await fetch(base, { headers })).json()) as { nodes: { id: string }[] };
      const starts = whole.nodes.map((n) => n.id);
      const bfs: number[] = [];
      for (let i = 0; i < ROUNDS * 2; i++) {
        const start = starts[(i * 997) % starts.length];
        bfs.push(...(await timed(`${base}/nodes/${start}/neighbors?depth=3&direction=both`, token, 1)).ms);
      }
      rows.push({
        db,
        what: 'neighbours depth 3, both',
        p50: Math.round(p(bfs, 0.5)),
        p95: Math.round(p(bfs, 0.95)),
        note: '≤ 500 nodes',
      });

      const exported = await timed(`${base}/canvas`, token, Math.ceil(ROUNDS / 2));
      rows.push({
        db,
        what: 'GET /hubs/{id}/canvas',
        p50: Math.round(p(exported.ms, 0.5)),
        p95: Math.round(p(exported.ms, 0.95)),
        note: `${(exported.bytes / 1024 ** 2).toFixed(1)} MiB`,
      });

      // A node's content through federation against the owner's own GET: the cost of the hop.
      const voice = await postJson(`${server.url}/api/v1/tts/voices`, { name: 'bench', base_voice: 'f3' }, token);
      const voiceId = voice.body.id as string;
      // In a hub of its own: the big one is full (HUB_MAX_NODES).
      const small = await postJson(`${server.url}/api/v1/hubs`, { name: 'small' }, token);
      let node: { status: number; body: { id: string } } | undefined;
      for (let i = 0; i < 100 && node?.status !== 202; i++) {
        node = await postJson(
          `${server.url}/api/v1/hubs/${small.body.id}/nodes`,
          { type: 'voice', ref_id: voiceId, x: 0, y: -500, width: 100, height: 50 },
          token,
        );
        if (node.status !== 202) await new Promise((r) => setTimeout(r, 20));
      }
      const own = await timed(`${server.url}/api/v1/tts/voices/${voiceId}`, token, ROUNDS * 2);
      const content = await timed(
        `${server.url}/api/v1/hubs/${small.body.id}/nodes/${node!.body.id}/content`,
        token,
        ROUNDS * 2,
      );
      rows.push({
        db,
        what: 'GET /tts/voices/{id}',
        p50: p(own.ms, 0.5).toFixed(1),
        p95: p(own.ms, 0.95).toFixed(1),
        note: '',
      });
      rows.push({
        db,
        what: 'GET …/nodes/{voice node}/content',
        p50: p(content.ms, 0.5).toFixed(1),
        p95: p(content.ms, 0.95).toFixed(1),
        note: `${(p(content.ms, 0.95) / p(own.ms, 0.95)).toFixed(2)}× the voice's GET (p95)`,
      });
    } finally {
      await server.stop();
    }
  }
  printTable('hubs: one request at a time, milliseconds', rows);
}
