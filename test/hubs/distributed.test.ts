// The hubs module in the distributed layout, each subgraph in its own process (dist/bin, built
// first), on SQLite and on MySQL: a voice node's content through the gateway from the tts
// process, a typed selection of a hub's nodes and edges sent on from the hubs process's kept
// texts, and quick-add's saga with the hubs process killed (SIGKILL) while the vault's answer
// waits in the log: a new hubs process takes it, and the node changes exactly once.
import crypto from 'node:crypto';
import { loadConfig } from '../../lib/config';
import { openDatabase } from '../../lib/database/open';
import { EventLog, LoggedEvent } from '../../lib/event-log';
import { KEPT_JSON_HEADER } from '../../lib/json-text';
import type { OutboxEvent } from '../../lib/outbox';
import { HOP_SECRET_HEADER } from '../../lib/request-context';
import { hubsSubgraph } from '../../subgraphs/hubs';
import { HubNode } from '../../subgraphs/hubs/entities/hub-node';
import { HubRef } from '../../subgraphs/hubs/entities/hub-ref';
import { loggedFor, openLog } from '../helpers/event-log';
import { login, request } from '../helpers/http';
import { DistributedLayout, ServiceProcess, startDistributed, startProcess } from '../helpers/processes';
import { ADMIN, cleanupDatabases, isolatedEnv } from '../helpers/server';
import { until } from '../helpers/wait';

const env: Record<string, string> = {
  ...isolatedEnv(),
  LOG_LEVEL: 'warn',
  AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
  AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
  SYNTHESIS_CONCURRENCY: '0',
  // The hop secret, known here to ask the hubs process as the gateway does.
  SUBGRAPH_SECRET: crypto.randomBytes(24).toString('hex'),
};
let layout: DistributedLayout;
let facade: string;
let token: string;
let log: EventLog;
const extra: ServiceProcess[] = [];

beforeAll(async () => {
  layout = await startDistributed(env);
  facade = layout.facades[0].url;
  token = (await login(facade, ADMIN)).access_token;
  log = await openLog(loadConfig(env));
}, 120_000);
afterAll(async () => {
  await Promise.all(extra.map((p) => p.kill('SIGKILL')));
  await layout?.stop();
  await log?.close();
  await cleanupDatabases(loadConfig(env));
});

const send = (method: string, path: string, body?: unknown) => request(facade, method, path, { token, body });

it("reads a voice node's content from the tts process through the gateway", async () => {
  const bases = (await send('GET', '/api/v1/tts/base-voices')).body;
  const baseVoice = (bases.items ?? bases)[0].name;
  const voice = await send('POST', '/api/v1/tts/voices', { name: 'Far away', base_voice: baseVoice });
  expect(voice.status).toBe(202);
  const hub = (await send('POST', '/api/v1/hubs', { name: 'distributed' })).body.id;
  // Between processes: the tts relay and the hubs consumer each poll (docs/hubs.md, "Referable within 2 s").
  const node = await until(async () => {
    const r = await send('POST', `/api/v1/hubs/${hub}/nodes`, {
      type: 'voice',
      ref_id: voice.body.id,
      x: 0,
      y: 0,
      width: 10,
      height: 10,
    });
    return r.status === 202 && r.body.id;
  }, 'the voice to become referable');
  const content = await send('GET', `/api/v1/hubs/${hub}/nodes/${node}/content`);
  expect(content.status).toBe(200);
  expect(content.body).toMatchObject({ type: 'voice', voice: { id: voice.body.id, name: 'Far away' } });
});

it('takes a hub import over BODY_LIMIT_BYTES through every hop (the hop secret lifts the limit inside)', async () => {
  const text = 'x'.repeat(4000);
  const nodes = Array.from({ length: 100 }, (_, i) => ({
    id: `n${i}`,
    type: 'text',
    text,
    x: i,
    y: 0,
    width: 10,
    height: 10,
  }));
  const res = await send('POST', '/api/v1/hubs/import', { name: 'big', canvas: { nodes, edges: [] } }); // ~400 KiB
  expect(res.status).toBe(202);
  expect((await send('GET', `/api/v1/hubs/${res.body.id}`)).body.node_count).toBe(100);
  // Without the secret, a subgraph keeps BODY_LIMIT_BYTES (in production it answers nobody without it at all).
  const hubs = layout.subgraphs.find((p) => p.name === 'subgraph hubs')!;
  const direct = await request(hubs.url, 'POST', '/graphql', {
    body: { query: '{ __typename }', padding: 'p'.repeat(300 * 1024) },
  });
  expect([413, 401]).toContain(direct.status);
});

it("answers a typed selection of a hub's nodes and edges through the gateway as Hub.graph, from the hubs process's kept texts", async () => {
  const nodes = Array.from({ length: 600 }, (_, i) => ({
    id: `n${i}`,
    type: 'text',
    text: `é ${i}`,
    x: i,
    y: 0,
    width: 9,
    height: 9,
  }));
  const edges = Array.from({ length: 700 }, (_, i) => ({
    id: `e${i}`,
    fromNode: `n${i % 600}`,
    toNode: `n${(i * 7) % 600}`,
  }));
  const imported = await send('POST', '/api/v1/hubs/import', { name: 'typed', canvas: { nodes, edges } });
  expect(imported.status).toBe(202);
  const query = `query ($id: ID!) { hub(id: $id) { graph nodes { id hubId type x y width height color label text url refId missing version createdAt updatedAt } edges { id hubId fromNode toNode fromSide toSide fromEnd toEnd label color createdAt } } }`;
  const body = { query, variables: { id: imported.body.id } };
  const gateway = layout.gateways[0].url;
  for (let i = 0; i < 2; i++) {
    const res = await request(gateway, 'POST', '/graphql', { token, body });
    expect(res.body.errors).toBeUndefined();
    const hub = res.body.data.hub;
    expect([hub.nodes.length, hub.edges.length]).toEqual([600, 700]);
    expect(hub.nodes).toEqual(hub.graph.nodes);
    expect(hub.edges).toEqual(hub.graph.edges);
  }
  // The hubs process tells the gateway (the hop secret) where the kept arrays' texts lie in its answer.
  const hubs = layout.subgraphs.find((p) => p.name === 'subgraph hubs')!;
  const asGateway = await fetch(`${hubs.url}/graphql`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      [HOP_SECRET_HEADER]: env.SUBGRAPH_SECRET,
    },
    body: JSON.stringify(body),
  });
  const text = await asGateway.text();
  const ranges = JSON.parse(asGateway.headers.get(KEPT_JSON_HEADER)!) as {
    path: string[];
    start: number;
    end: number;
  }[];
  expect(ranges.map((r) => r.path)).toEqual([
    ['data', 'hub', 'nodes'],
    ['data', 'hub', 'edges'],
  ]);
  const answer = JSON.parse(text);
  for (const { path, start, end } of ranges)
    expect(JSON.parse(text.slice(start, end))).toEqual(answer.data.hub[path[2]]);
});

it('finishes quick-add exactly once when the hubs process is killed while the vault answer waits', async () => {
  const hub = (await send('POST', '/api/v1/hubs', { name: 'saga' })).body.id;
  const quick = await send('POST', `/api/v1/hubs/${hub}/quick-add`, { url: 'https://example.org/saga', capture: true });
  expect(quick.status).toBe(202);
  const nodeId = quick.body.id;
  const [requested] = await until(async () => {
    const e = await loggedFor(log, nodeId, 'hub.capture_requested');
    return e.length ? e : undefined;
  });
  const payload = JSON.parse(requested.payload);
  expect(payload).toEqual({ hub_id: hub, node_id: nodeId, url: 'https://example.org/saga' });

  const hubs = layout.subgraphs.find((p) => p.name === 'subgraph hubs')!;
  await hubs.kill('SIGKILL');
  // The vault subgraph's answer (it captured the URL for the node), and the same answer again (a
  // redelivery), while no hubs process runs.
  const answer = await until(async () => {
    const e = await log.dataSource.manager.find(LoggedEvent, {
      where: { type: 'vault.item.captured', userId: requested.userId },
    });
    return e.find((x) => (JSON.parse(x.payload) as { source?: { node_id?: string } }).source?.node_id === nodeId);
  }, 'the vault answer');
  const itemId = answer.resourceId;
  const captured = {
    eventId: crypto.randomUUID(),
    type: 'vault.item.captured',
    userId: requested.userId,
    resourceId: itemId,
    payload: answer.payload,
    occurredAt: new Date(),
  };
  await log.append('vault', [captured as OutboxEvent]);
  await log.append('vault', [{ ...captured, eventId: crypto.randomUUID() } as OutboxEvent]);
  // Written last: once the projection has it, it has handled both answers.
  const sentinel = { ...captured, eventId: crypto.randomUUID(), type: 'note.created', resourceId: crypto.randomUUID() };
  await log.append('notes', [{ ...sentinel, payload: '{}' } as OutboxEvent]);

  // A new hubs process (as a process manager would start) catches up from the stored position.
  extra.push(
    await startProcess('subgraph hubs (again)', 'subgraph.js', ['hubs'], { ...env, SUBGRAPH_SECRET: 'x'.repeat(32) }),
  );
  const db = await openDatabase(loadConfig(env), hubsSubgraph);
  try {
    await until(() => db.manager.existsBy(HubRef, { id: sentinel.resourceId }), 'the new process to catch up');
    const node = await db.manager.findOneBy(HubNode, { id: nodeId });
    expect(node).toMatchObject({ refId: itemId, url: null, version: 2 });
    const updates = await until(async () => {
      const e = await loggedFor(log, nodeId, 'hub.node.updated');
      return e.length ? e : undefined;
    });
    expect(updates.map((e) => JSON.parse(e.payload).reason)).toEqual(['captured']);
  } finally {
    await db.destroy();
  }
});
