// The hubs subgraph and the other modules, on SQLite and on MySQL: the projection of refs fed by
// events (voices for real through the tts subgraph; notes and vault items by events written into
// the log here, as those modules will), `missing: true` exactly once, node content read through
// the gateway, a voice's reference resolver refusing another user's voice through `_entities`,
// quick-add's saga (the vault's answer injected), `user.deleted`, and the 2 s "referable" bound.
import crypto from 'node:crypto';
import { startSubgraphServer } from '../../bin/subgraph';
import { EventLog, LoggedEvent } from '../../lib/event-log';
import type { OutboxEvent } from '../../lib/outbox';
import { openDatabase } from '../../lib/database/open';
import { hubsSubgraph } from '../../subgraphs/hubs';
import { Hub } from '../../subgraphs/hubs/entities/hub';
import { HubEdge } from '../../subgraphs/hubs/entities/hub-edge';
import { HubNode } from '../../subgraphs/hubs/entities/hub-node';
import { KitJob } from '../../lib/kit/jobs';
import { HUB_ROWS } from '../../subgraphs/hubs/hub-jobs';
import { api, createUserAndLogin, login, request } from '../helpers/http';
import { loggedFor, openLog } from '../helpers/event-log';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

let server: TestServer;
let http: ReturnType<typeof api>;
let admin: string;
let log: EventLog;
let baseVoice: string;

beforeAll(async () => {
  server = await startTestServer({ SYNTHESIS_CONCURRENCY: '0' });
  http = api(server.url);
  admin = (await login(server.url, ADMIN)).access_token;
  log = await openLog(server.config);
  baseVoice =
    (await http.get('/api/v1/tts/base-voices', { token: admin })).body.items?.[0]?.name ??
    (await http.get('/api/v1/tts/base-voices', { token: admin })).body[0].name;
});
afterAll(async () => {
  await log.close();
  await server.close();
});

const H = '/api/v1/hubs';
const uuid7 = () => {
  // A UUIDv7-shaped id for things other modules would own.
  const hex = crypto.randomBytes(16).toString('hex');
  return `${Date.now().toString(16).padStart(12, '0').slice(0, 8)}-${Date.now().toString(16).slice(-4)}-7${hex.slice(0, 3)}-8${hex.slice(3, 6)}-${hex.slice(6, 18)}`;
};

/** Writes an event into the log as another module's relay would. */
async function inject(
  type: string,
  userId: string,
  resourceId: string,
  data: Record<string, unknown> = {},
  eventId = crypto.randomUUID(),
) {
  const event = { eventId, type, userId, resourceId, payload: JSON.stringify(data), occurredAt: new Date() };
  await log.append(type.split('.')[0], [event as OutboxEvent]);
  return event;
}

async function user(name: string) {
  return createUserAndLogin(server.url, admin, `${name}-${Math.random().toString(36).slice(2, 8)}`);
}
async function createHub(token: string): Promise<string> {
  const res = await request(server.url, 'POST', H, { token, body: { name: 'refs' } });
  expect(res.status).toBe(202);
  return res.body.id;
}
const addNode = (token: string, hubId: string, node: Record<string, unknown>) =>
  request(server.url, 'POST', `${H}/${hubId}/nodes`, { token, body: { x: 0, y: 0, width: 100, height: 50, ...node } });
const getNode = async (token: string, hubId: string, nodeId: string) =>
  (await request(server.url, 'GET', `${H}/${hubId}/nodes/${nodeId}`, { token })).body;
async function createVoice(token: string, name: string): Promise<string> {
  const res = await request(server.url, 'POST', '/api/v1/tts/voices', { token, body: { name, base_voice: baseVoice } });
  expect(res.status).toBe(202);
  return res.body.id;
}
/** Waits until the refs projection has handled every event appended so far: a sentinel note becomes referable. */
async function settled(token: string, userId: string, hubId: string) {
  const sentinel = uuid7();
  await inject('note.created', userId, sentinel);
  const res = await until(async () => {
    const r = await addNode(token, hubId, { type: 'note', ref_id: sentinel });
    return r.status === 202 && r;
  }, 'the refs projection to catch up');
  await request(server.url, 'DELETE', `${H}/${hubId}/nodes/${res.body.id}?version=1`, { token });
}

describe('refs projection', () => {
  it('makes a new voice referable within 2 s, refuses another user’s, and reads the voice through the gateway', async () => {
    const owner = await user('refs-voice');
    const other = await user('refs-voice-other');
    const hub = await createHub(owner.token);
    const started = Date.now();
    const voiceId = await createVoice(owner.token, 'Narrator');
    const node = await until(
      async () => {
        const r = await addNode(owner.token, hub, { type: 'voice', ref_id: voiceId, label: 'narrator' });
        if (r.status !== 202) expect([r.status, Object.keys(r.body.details)]).toEqual([400, ['ref_id']]);
        return r.status === 202 && r.body.id;
      },
      'the voice to become referable',
      5000,
      20,
    );
    expect(Date.now() - started).toBeLessThan(2000); // docs/hubs.md: referable within 2 s

    // Another user's voice is unknown to the caller: 400, as an id that never existed.
    const theirs = await createVoice(other.token, 'Theirs');
    await settled(owner.token, owner.id, hub);
    const refused = await addNode(owner.token, hub, { type: 'voice', ref_id: theirs });
    expect([refused.status, refused.body.details]).toEqual([400, { ref_id: ['names none of your voices'] }]);
    // A voice id given for a note node is no note.
    expect((await addNode(owner.token, hub, { type: 'note', ref_id: voiceId })).status).toBe(400);

    const content = await request(server.url, 'GET', `${H}/${hub}/nodes/${node}/content`, { token: owner.token });
    expect(content.status).toBe(200);
    expect(content.body).toMatchObject({
      id: node,
      type: 'voice',
      missing: false,
      ref_id: voiceId,
      voice: { id: voiceId, name: 'Narrator', base_voice: baseVoice, speed: 1 },
    });
    const text = await addNode(owner.token, hub, { type: 'text', text: 'plain' });
    const textContent = await request(server.url, 'GET', `${H}/${hub}/nodes/${text.body.id}/content`, {
      token: owner.token,
    });
    expect(textContent.body).toMatchObject({ type: 'text', text: 'plain', voice: null });
    // GraphQL: the node's voice field is an entity reference the tts subgraph resolves.
    const gql = await http.graphql(
      'query ($h: ID!, $n: ID!) { hubNode(hubId: $h, nodeId: $n) { type voice { id name } note { id } vaultItem { id } } }',
      { h: hub, n: node },
      owner.token,
    );
    expect(gql.body).toEqual({
      data: { hubNode: { type: 'voice', voice: { id: voiceId, name: 'Narrator' }, note: null, vaultItem: null } },
    });
  });

  it("reads a note node's and a vault item node's content from the notes and vault subgraphs through the gateway", async () => {
    const owner = await user('content-owner');
    const hub = await createHub(owner.token);
    const note = await request(server.url, 'POST', '/api/v1/notes', {
      token: owner.token,
      body: { title: 'Plan', body: 'Ship it #launch' },
    });
    expect(note.status).toBe(202);
    const item = await request(server.url, 'POST', '/api/v1/vault/items', {
      token: owner.token,
      body: { text: 'A saved paragraph about canvases.', title: 'Saved' },
    });
    expect(item.status).toBe(202);
    const referable = (type: string, ref_id: string) =>
      until(
        async () => {
          const r = await addNode(owner.token, hub, { type, ref_id });
          return r.status === 202 && (r.body.id as string);
        },
        `the ${type} to become referable`,
        5000,
        20,
      );
    const noteNode = await referable('note', note.body.id);
    const itemNode = await referable('vault_item', item.body.id);

    const noteContent = await request(server.url, 'GET', `${H}/${hub}/nodes/${noteNode}/content`, {
      token: owner.token,
    });
    expect(noteContent.status).toBe(200);
    expect(noteContent.body).toMatchObject({
      type: 'note',
      missing: false,
      note: { id: note.body.id, title: 'Plan', body: 'Ship it #launch', tags: ['launch'] },
      vault_item: null,
      voice: null,
    });
    const itemContent = await request(server.url, 'GET', `${H}/${hub}/nodes/${itemNode}/content`, {
      token: owner.token,
    });
    expect(itemContent.status).toBe(200);
    expect(itemContent.body).toMatchObject({
      type: 'vault_item',
      vault_item: { id: item.body.id, title: 'Saved', url: null },
      note: null,
    });
    expect(['pending', 'ready', 'failed']).toContain(itemContent.body.vault_item.state);

    // The canvas export names them by their titles, read through federation; a voice by its name;
    // one whose target is gone by its kind and id.
    const voiceId = await createVoice(owner.token, 'Narrator *one*');
    const voiceNode = await referable('voice', voiceId);
    const gone = uuid7();
    await inject('note.created', owner.id, gone);
    const goneNode = await referable('note', gone);
    await inject('note.deleted', owner.id, gone);
    await until(
      async () =>
        (await request(server.url, 'GET', `${H}/${hub}/nodes/${goneNode}/content`, { token: owner.token })).body
          .missing === true,
      'the deleted note to show missing',
    );
    const exported = await request(server.url, 'GET', `${H}/${hub}/canvas`, { token: owner.token });
    expect(exported.status).toBe(200);
    const textOf = (nodeId: string) => exported.body.nodes.find((n: { id: string }) => n.id === nodeId).text;
    expect(textOf(noteNode)).toBe(`**Plan**\n\n[Note](/api/v1/notes/${note.body.id})`);
    expect(textOf(itemNode)).toBe(`**Saved**\n\n[Vault item](/api/v1/vault/items/${item.body.id})`);
    expect(textOf(voiceNode)).toBe(`**Narrator \\*one\\***\n\n[Voice](/api/v1/tts/voices/${voiceId})`);
    expect(textOf(goneNode)).toBe(`**Note ${gone}**\n\n[Note](/api/v1/notes/${gone})\n\n(deleted)`);
  });

  it("tts's Voice reference resolver answers null for another user's voice through _entities", async () => {
    const owner = await user('refs-entities');
    const other = await user('refs-entities-other');
    const voiceId = await createVoice(owner.token, 'Mine');
    const tts = await startSubgraphServer({ ...server.config, PORT: 0, SYNTHESIS_CONCURRENCY: 0 }, 'tts');
    try {
      const ask = (token?: string) =>
        request(tts.url, 'POST', '/graphql', {
          token,
          body: {
            query: 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Voice { id name } } }',
            variables: { r: [{ __typename: 'Voice', id: voiceId }] },
          },
        });
      expect((await ask(owner.token)).body.data).toEqual({ _entities: [{ id: voiceId, name: 'Mine' }] });
      expect((await ask(other.token)).body.data).toEqual({ _entities: [null] });
      // Without a token Voice's fields are refused before any resolver runs (the scope step: Voice needs tts:read).
      const anonymous = (await ask()).body;
      expect(anonymous.data).toBeNull();
      expect(anonymous.errors[0].extensions.code).toBe('unauthorized');
    } finally {
      await tts.close();
    }
  });

  it('marks nodes missing exactly once when what they point at is deleted, for voices, notes and vault items', async () => {
    const owner = await user('refs-missing');
    const hub = await createHub(owner.token);
    const voiceId = await createVoice(owner.token, 'Gone soon');
    const noteId = uuid7();
    const itemId = uuid7();
    await inject('note.created', owner.id, noteId, { note_id: noteId, title: 'n' });
    await inject('vault.item.captured', owner.id, itemId, { item_id: itemId });
    const strangersNote = uuid7();
    await inject('note.created', crypto.randomUUID(), strangersNote);
    await settled(owner.token, owner.id, hub);
    await until(async () => (await addNode(owner.token, hub, { type: 'voice', ref_id: voiceId, x: 1 })).status === 202);
    const nodes = new Map<string, string>();
    for (const [type, ref] of [
      ['note', noteId],
      ['vault_item', itemId],
    ]) {
      const r = await addNode(owner.token, hub, { type, ref_id: ref });
      expect(r.status).toBe(202);
      nodes.set(type, r.body.id);
    }
    expect((await addNode(owner.token, hub, { type: 'note', ref_id: strangersNote })).status).toBe(400);
    const all = (await request(server.url, 'GET', `${H}/${hub}`, { token: owner.token })).body.nodes;
    nodes.set('voice', all.find((n: any) => n.type === 'voice').id);

    const voice = await request(server.url, 'DELETE', `/api/v1/tts/voices/${voiceId}?version=1`, {
      token: owner.token,
    });
    expect(voice.status).toBe(202);
    await inject('note.deleted', owner.id, noteId);
    const itemDeleted = await inject('vault.item.deleted', owner.id, itemId);
    // Offered again: the same event (the log keeps one), and the same deletion as a new event.
    await log.append('vault', [itemDeleted as OutboxEvent]);
    await inject('note.deleted', owner.id, noteId);
    await settled(owner.token, owner.id, hub);
    // The whole hub as well, which was read (and kept in memory) before the deletions.
    await until(async () => {
      const whole = (await request(server.url, 'GET', `${H}/${hub}`, { token: owner.token })).body.nodes;
      return whole.every((n: any) => n.missing && n.version === 2);
    }, 'the whole hub to show the nodes missing');
    for (const [type, id] of nodes) {
      const node = await until(async () => {
        const n = await getNode(owner.token, hub, id);
        return n.missing && n;
      }, `the ${type} node to show missing`);
      expect(node).toMatchObject({ type, missing: true, version: 2 });
      const content = await request(server.url, 'GET', `${H}/${hub}/nodes/${id}/content`, { token: owner.token });
      expect(content.body).toMatchObject({ missing: true, voice: null });
      const changes = await until(async () => {
        const logged = await loggedFor(log, id, 'hub.node.updated');
        return logged.length ? logged : undefined;
      });
      expect(changes.map((e) => JSON.parse(e.payload).fields)).toEqual([['missing']]);
    }
    // Pointing it at something that exists again clears missing.
    const fresh = uuid7();
    await inject('note.created', owner.id, fresh);
    await settled(owner.token, owner.id, hub);
    const repointed = await request(server.url, 'PATCH', `${H}/${hub}/nodes/${nodes.get('note')}?version=2`, {
      token: owner.token,
      body: { ref_id: fresh },
    });
    expect(repointed.status).toBe(202);
    expect(await getNode(owner.token, hub, nodes.get('note')!)).toMatchObject({
      missing: false,
      ref_id: fresh,
      version: 3,
    });
  });
});

describe('quick-add', () => {
  it('adds a node beside another with an edge, and with capture asks the vault; the captured item turns it into a vault_item node exactly once', async () => {
    const owner = await user('quick-add');
    const hub = await createHub(owner.token);
    const near = await addNode(owner.token, hub, { type: 'text', text: 'start', x: 100, y: 200, width: 300 });
    const quick = await request(server.url, 'POST', `${H}/${hub}/quick-add`, {
      token: owner.token,
      body: { text: 'remember this', near_node_id: near.body.id, capture: true },
    });
    expect(quick.status).toBe(202);
    const nodeId = quick.body.id;
    expect(quick.headers.get('location')).toBe(`${H}/${hub}/nodes/${nodeId}`);
    const graph = (await request(server.url, 'GET', `${H}/${hub}`, { token: owner.token })).body;
    const added = graph.nodes.find((n: any) => n.id === nodeId);
    expect(added).toMatchObject({ x: 480, y: 200 });
    // In one process the saga is woken by the commits themselves: it may have turned the node into
    // the vault item before this GET (the capture's text is checked in the event below).
    expect([
      ['text', 'remember this'],
      ['vault_item', null],
    ]).toContainEqual([added.type, added.text]);
    expect(graph.edges).toEqual([expect.objectContaining({ from_node: near.body.id, to_node: nodeId })]);

    const [requested] = await until(async () => {
      const e = await loggedFor(log, nodeId, 'hub.capture_requested');
      return e.length ? e : undefined;
    });
    expect(requested.userId).toBe(owner.id);
    expect(JSON.parse(requested.payload)).toEqual({ hub_id: hub, node_id: nodeId, text: 'remember this' });

    // The vault's side: the vault subgraph captures the text, naming the node as its source.
    const answer = await until(async () => {
      const e = await log.dataSource.manager.find(LoggedEvent, {
        where: { type: 'vault.item.captured', userId: owner.id },
      });
      return e.find((x) => (JSON.parse(x.payload) as { source?: { node_id?: string } }).source?.node_id === nodeId);
    }, 'the vault to capture');
    const itemId = answer.resourceId;
    await log.append('vault', [answer]); // the same event relayed twice: one row
    await inject('vault.item.captured', owner.id, itemId, {
      item_id: itemId,
      source: { hub_id: hub, node_id: nodeId },
    });
    // Another user's item naming this node changes nothing.
    await inject('vault.item.captured', crypto.randomUUID(), uuid7(), { source: { hub_id: hub, node_id: nodeId } });
    await settled(owner.token, owner.id, hub);
    const node = await getNode(owner.token, hub, nodeId);
    expect(node).toMatchObject({ type: 'vault_item', ref_id: itemId, text: null, missing: false, version: 2 });
    const changes = await loggedFor(log, nodeId, 'hub.node.updated');
    expect(changes.map((e) => JSON.parse(e.payload).reason)).toEqual(['captured']);
    // Its text no longer counts against the hub's text bytes; the node shows the item through federation.
    const gql = await http.graphql(
      'query ($h: ID!, $n: ID!) { hubNode(hubId: $h, nodeId: $n) { vaultItem { id } } }',
      { h: hub, n: nodeId },
      owner.token,
    );
    expect(gql.body.data.hubNode.vaultItem).toEqual({ id: itemId });

    // Without near_node_id: right of everything, no edge; a link with url; exactly one of text and url.
    const link = await request(server.url, 'POST', `${H}/${hub}/quick-add`, {
      token: owner.token,
      body: { url: 'https://example.org/a' },
    });
    expect(link.status).toBe(202);
    expect(await getNode(owner.token, hub, link.body.id)).toMatchObject({ type: 'link', x: 480 + 250 + 80, y: 200 });
    expect((await loggedFor(log, link.body.id, 'hub.capture_requested')).length).toBe(0);
    for (const body of [
      {},
      { text: 'a', url: 'https://b.example' },
      { url: 'ftp://x' },
      { text: 'x', near_node_id: crypto.randomUUID() },
    ])
      expect((await request(server.url, 'POST', `${H}/${hub}/quick-add`, { token: owner.token, body })).status).toBe(
        400,
      );
  });
});

describe('user.deleted', () => {
  it("removes the user's hubs, their nodes and edges", async () => {
    const doomed = await user('refs-doomed');
    const hub = await createHub(doomed.token);
    const a = await addNode(doomed.token, hub, { type: 'text', text: 'a' });
    const b = await addNode(doomed.token, hub, { type: 'text', text: 'b' });
    await request(server.url, 'POST', `${H}/${hub}/edges`, {
      token: doomed.token,
      body: { from_node: a.body.id, to_node: b.body.id },
    });
    const version = (await http.graphql('query ($id: ID!) { user(id: $id) { version } }', { id: doomed.id }, admin))
      .body.data.user.version;
    const deleted = await http.graphql(
      'mutation ($id: ID!, $v: Int!) { deleteUser(id: $id, version: $v) { id } }',
      { id: doomed.id, v: version },
      admin,
    );
    expect(deleted.body.errors).toBeUndefined();
    await until(async () => (await loggedFor(log, hub, 'hub.deleted')).length > 0, 'hub.deleted of the deleted user');
    const [event] = await loggedFor(log, hub, 'hub.deleted');
    expect(JSON.parse(event.payload)).toMatchObject({ hub_id: hub, reason: 'user_deleted' });
    // Its rows go in the background (hub-jobs.ts): read the hubs database itself.
    const db = await openDatabase(server.config, hubsSubgraph);
    try {
      await until(
        async () =>
          !(await db.manager.countBy(HubNode, { hubId: hub })) && !(await db.manager.countBy(HubEdge, { hubId: hub })),
        'the nodes and edges to go',
      );
      await until(async () => !(await db.manager.countBy(KitJob, { ownerId: doomed.id })), 'the jobs to end');
      expect(await db.manager.countBy(Hub, { ownerId: doomed.id })).toBe(0);
    } finally {
      await db.destroy();
    }
  });

  it('deleting a big hub answers at once; its rows go in batches of at most 1,000', async () => {
    const owner = await user('refs-big');
    const nodes = Array.from({ length: 1200 }, (_, i) => ({
      id: `n${i}`,
      type: 'group',
      x: i,
      y: 0,
      width: 10,
      height: 10,
    }));
    const edges = Array.from({ length: 1500 }, (_, i) => ({
      id: `e${i}`,
      fromNode: `n${i % 1200}`,
      toNode: `n${(i * 7) % 1200}`,
    }));
    const imported = await request(server.url, 'POST', `${H}/import`, {
      token: owner.token,
      body: { name: 'big', canvas: { nodes, edges } },
    });
    expect(imported.status).toBe(202);
    const hub = imported.body.id;
    // Deleted for good (a trashed hub keeps its rows until purged: test/trash).
    expect(
      (await request(server.url, 'DELETE', `${H}/${hub}?version=1&permanent=true`, { token: owner.token })).status,
    ).toBe(202);
    expect((await request(server.url, 'GET', `${H}/${hub}`, { token: owner.token })).status).toBe(404);
    const db = await openDatabase(server.config, hubsSubgraph);
    try {
      await until(
        async () =>
          !(await db.manager.countBy(HubNode, { hubId: hub })) &&
          !(await db.manager.countBy(HubEdge, { hubId: hub })) &&
          !(await db.manager.countBy(KitJob, { kind: HUB_ROWS, ownerId: owner.id })),
        'the rows of the deleted hub to go',
      );
    } finally {
      await db.destroy();
    }
    expect(server.config.JOBS_BATCH_ROWS).toBeLessThanOrEqual(1000);
  });
});
