// The hubs subgraph through the REST facade and the gateway, on SQLite and on MySQL: hubs,
// nodes and edges with their rules and caps (small caps configured here), neighbours, and the
// JSON Canvas export (checked against the spec's schema) and import (a canvas saved by Obsidian).
// Every answer is checked against the OpenAPI document.
import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { JSON_CANVAS_SCHEMA } from '../../subgraphs/hubs/canvas-schema';
import { plainListCounts } from '../../lib/plain-lists';
import { restTextCounts } from '../../subgraphs/hubs/rest-form';
import { api, createUserAndLogin, login, request, UUID } from '../helpers/http';
import { OpenApiDocument, undocumented } from '../helpers/openapi';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { openStream } from '../helpers/sse';

const CAPS = {
  HUBS_PER_USER: '3',
  HUB_MAX_NODES: '12',
  HUB_MAX_EDGES: '6',
  HUB_MAX_TEXT_BYTES: '1024',
  HUB_NODE_TEXT_MAX_CHARS: '600',
  HUB_NEIGHBORS_MAX_NODES: '5',
};

let server: TestServer;
let http: ReturnType<typeof api>;
let admin: string;
let doc: OpenApiDocument;

beforeAll(async () => {
  server = await startTestServer(CAPS);
  http = api(server.url);
  admin = (await login(server.url, ADMIN)).access_token;
  doc = (await http.get('/api/v1/openapi.json')).body;
});
afterAll(() => server.close());

const H = '/api/v1/hubs';
/** Sends a request and checks that the document promises its answer (`template` with `{param}`s). */
async function call(method: string, template: string, path: string, token: string | undefined, body?: unknown) {
  const res = await request(server.url, method, path, { token, body });
  expect(undocumented(doc, method, template, res)).toEqual([]);
  return res;
}
const HUB = `${H}/{hubId}`;
const NODES = `${HUB}/nodes`;
const NODE = `${NODES}/{nodeId}`;

async function newUser(name: string) {
  return (await createUserAndLogin(server.url, admin, `${name}-${Math.random().toString(36).slice(2, 8)}`)).token;
}
async function createHub(token: string, name = 'hub'): Promise<string> {
  const res = await call('POST', H, H, token, { name });
  expect(res.status).toBe(202);
  return res.body.id;
}
async function addNode(token: string, hubId: string, node: Record<string, unknown>): Promise<string> {
  const res = await call('POST', NODES, `${H}/${hubId}/nodes`, token, { x: 0, y: 0, width: 100, height: 50, ...node });
  expect([res.status, res.body]).toEqual([202, expect.objectContaining({ id: expect.stringMatching(UUID) })]);
  expect(res.headers.get('location')).toBe(`${H}/${hubId}/nodes/${res.body.id}`);
  return res.body.id;
}
async function addEdge(token: string, hubId: string, from: string, to: string, extra = {}) {
  return call('POST', `${HUB}/edges`, `${H}/${hubId}/edges`, token, { from_node: from, to_node: to, ...extra });
}

describe('hubs', () => {
  it('creates, gets with nodes and edges, lists with excerpts, patches at the version, deletes', async () => {
    const token = await newUser('hubs-crud');
    const stream = await openStream(
      `${server.url}/api/v1/events?types=hub.created,hub.updated,hub.node.added,hub.edge.added`,
      {
        token,
      },
    );
    try {
      const created = await call('POST', H, H, token, { name: ' Ideas ', description: 'd'.repeat(400) });
      expect(created.status).toBe(202);
      const id = created.body.id;
      expect(created.headers.get('location')).toBe(`${H}/${id}`);
      const a = await addNode(token, id, { type: 'text', text: 'alpha', color: '3' });
      const b = await addNode(token, id, { type: 'link', url: 'https://jsoncanvas.org/', color: '#A0b0C0' });
      const g = await addNode(token, id, {
        type: 'group',
        label: 'Group',
        x: -2147483648,
        y: 2147483647,
        width: 100000,
      });
      const edge = await addEdge(token, id, a, b, { from_side: 'right', to_end: 'arrow', label: 'see' });
      expect(edge.status).toBe(202);

      const got = await call('GET', HUB, `${H}/${id}`, token);
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({ id, name: 'Ideas', node_count: 3, edge_count: 1, version: 1 });
      expect(got.body.nodes.map((n: any) => [n.id, n.type, n.version, n.missing])).toEqual([
        [a, 'text', 1, false],
        [b, 'link', 1, false],
        [g, 'group', 1, false],
      ]);
      expect(got.body.nodes[2]).toMatchObject({ x: -2147483648, y: 2147483647, width: 100000, label: 'Group' });
      expect(got.body.edges).toEqual([
        {
          id: edge.body.id,
          from_node: a,
          to_node: b,
          from_side: 'right',
          to_side: null,
          from_end: null,
          to_end: 'arrow',
          label: 'see',
          color: null,
        },
      ]);

      // GraphQL: the typed lists, and the same graph as one JSON value (what the REST GET reads).
      const gql = await http.graphql(
        'query ($id: ID!) { hub(id: $id) { nodes { id type x } edges { id fromNode toNode } graph } }',
        { id },
        token,
      );
      const { nodes, edges, graph } = gql.body.data.hub;
      expect(graph.nodes.map((x: any) => ({ id: x.id, type: x.type, x: x.x }))).toEqual(nodes);
      expect(graph.edges.map((x: any) => ({ id: x.id, fromNode: x.fromNode, toNode: x.toNode }))).toEqual(edges);

      const page = await call('GET', H, `${H}?limit=10`, token);
      expect(page.body.items).toEqual([expect.objectContaining({ id, excerpt: 'd'.repeat(300) })]);
      expect(page.body.items[0]).not.toHaveProperty('description');

      const patched = await call('PATCH', HUB, `${H}/${id}?version=1`, token, { name: 'Renamed' });
      expect([patched.status, patched.headers.get('etag')]).toEqual([202, '"2"']);
      const stale = await call('PATCH', HUB, `${H}/${id}?version=1`, token, { name: 'x' });
      expect([stale.status, stale.body.details]).toEqual([409, { current_version: 2 }]);

      // A node's own version; the hub's version moves on a hub PATCH only.
      const moved = await call('PATCH', NODE, `${H}/${id}/nodes/${a}`, token, { x: 40, text: 'beta', color: null });
      expect(moved.status).toBe(400); // no version
      const moved2 = await request(server.url, 'PATCH', `${H}/${id}/nodes/${a}`, {
        token,
        body: { x: 40, text: 'beta', color: null },
        headers: { 'if-match': '"1"' },
      });
      expect([moved2.status, moved2.headers.get('etag')]).toEqual([202, '"2"']);
      const node = await call('GET', NODE, `${H}/${id}/nodes/${a}`, token);
      expect(node.body).toMatchObject({ id: a, hub_id: id, x: 40, text: 'beta', color: null, version: 2 });
      expect((await call('GET', HUB, `${H}/${id}`, token)).body.version).toBe(2);

      const frames = await stream.waitFor((f) => f.data.id === id || f.data.hub_id === id, 6, 20_000);
      expect(frames.map((f) => f.event)).toEqual([
        'hub.created',
        'hub.node.added',
        'hub.node.added',
        'hub.node.added',
        'hub.edge.added',
        'hub.updated',
      ]);
      // Ids and names only, never texts.
      expect(JSON.stringify(frames.map((f) => f.data))).not.toContain('alpha');

      // Removing a node removes its edges.
      expect((await call('DELETE', NODE, `${H}/${id}/nodes/${a}?version=1`, token)).status).toBe(409);
      expect((await call('DELETE', NODE, `${H}/${id}/nodes/${a}?version=2`, token)).status).toBe(202);
      const after = (await call('GET', HUB, `${H}/${id}`, token)).body;
      expect([after.node_count, after.edge_count, after.edges]).toEqual([2, 0, []]);

      expect((await call('DELETE', HUB, `${H}/${id}?version=1`, token)).status).toBe(409);
      expect((await call('DELETE', HUB, `${H}/${id}?version=2`, token)).status).toBe(202);
      expect((await call('GET', HUB, `${H}/${id}`, token)).status).toBe(404);
    } finally {
      stream.close();
    }
  });

  it('refuses bad nodes and edges with 400 and details, and hides one user’s hub from another', async () => {
    const token = await newUser('hubs-rules');
    const id = await createHub(token);
    const other = await createHub(token, 'other');
    const a = await addNode(token, id, { type: 'text', text: 'a' });
    const foreign = await addNode(token, other, { type: 'text', text: 'f' });
    const bad = async (node: Record<string, unknown>, field: string) => {
      const res = await call('POST', NODES, `${H}/${id}/nodes`, token, { x: 0, y: 0, width: 10, height: 10, ...node });
      expect([res.status, res.body.error, Object.keys(res.body.details ?? {})]).toEqual([
        400,
        'validation_error',
        [field],
      ]);
    };
    await bad({ type: 'text' }, 'text');
    await bad({ type: 'text', text: 'x'.repeat(601) }, 'text');
    await bad({ type: 'link', url: 'javascript:alert(1)' }, 'url');
    await bad({ type: 'link', url: 'https://a.example', text: 'both' }, 'text');
    await bad({ type: 'note', ref_id: '0190d5a4-8a5e-7000-8000-000000000000' }, 'ref_id');
    await bad({ type: 'text', text: 'x', x: 2147483648 }, 'x');
    await bad({ type: 'text', text: 'x', width: 0 }, 'width');
    await bad({ type: 'text', text: 'x', height: 100001 }, 'height');
    await bad({ type: 'text', text: 'x', color: '7' }, 'color');
    await bad({ type: 'text', text: 'x', color: '#12345' }, 'color');
    await bad({ type: 'file', text: 'x' }, 'type');

    const dangling = await addEdge(token, id, a, foreign);
    expect([dangling.status, Object.keys(dangling.body.details)]).toEqual([400, ['to_node']]);
    const side = await addEdge(token, id, a, a, { from_side: 'middle' });
    expect([side.status, Object.keys(side.body.details)]).toEqual([400, ['from_side']]);

    const stranger = await newUser('hubs-stranger');
    expect((await call('GET', HUB, `${H}/${id}`, stranger)).status).toBe(404);
    expect((await call('GET', NODE, `${H}/${id}/nodes/${a}`, stranger)).status).toBe(404);
    expect(
      (
        await call('POST', NODES, `${H}/${id}/nodes`, stranger, {
          type: 'text',
          text: 'x',
          x: 0,
          y: 0,
          width: 1,
          height: 1,
        })
      ).status,
    ).toBe(404);
    expect((await addEdge(stranger, id, a, a)).status).toBe(404);
    // A change of another user's node is 404 whatever the body: checking the body first answered
    // 400 naming the node's type (issue 41, finding 11). Over GraphQL too, and with the
    // stranger's own hub id, as for an id that does not exist.
    const strangersHub = await createHub(stranger, 'mine');
    for (const body of [{ url: 'https://a.example' }, { text: 'x' }, { ref_id: a }, { label: 'x' }]) {
      for (const hub of [id, strangersHub]) {
        const res = await call('PATCH', NODE, `${H}/${hub}/nodes/${a}?version=1`, stranger, body);
        expect({ body, hub, status: res.status, error: res.body.error }).toEqual({
          body,
          hub,
          status: 404,
          error: 'not_found',
        });
      }
    }
    const gql = await http.graphql(
      'mutation ($h: ID!, $n: ID!) { updateHubNode(hubId: $h, nodeId: $n, version: 1, url: "https://a.example") { id } }',
      { h: id, n: a },
      stranger,
    );
    expect(gql.body.errors[0].extensions.code).toBe('not_found');
    expect((await call('GET', NODE, `${H}/${id}/nodes/${a}`, token)).body.version).toBe(1);
    expect((await call('GET', HUB, `${H}/${id}`, undefined)).status).toBe(401);
    expect((await call('GET', HUB, `${H}/not-a-uuid`, token)).status).toBe(400);
  });

  it('caps hubs per user, nodes, edges and text per hub: 409 with details.limit', async () => {
    const token = await newUser('hubs-caps');
    const ids = [await createHub(token), await createHub(token), await createHub(token)];
    const fourth = await call('POST', H, H, token, { name: 'one too many' });
    expect([fourth.status, fourth.body.error, fourth.body.details]).toEqual([
      409,
      'conflict',
      { limit: 'HUBS_PER_USER', max: 3, count: 3 },
    ]);
    // A hub deleted for good frees its place (a trashed one counts until purged: test/trash).
    expect((await call('DELETE', HUB, `${H}/${ids[2]}?version=1&permanent=true`, token)).status).toBe(202);
    ids[2] = await createHub(token);

    const hub = ids[0];
    const nodes: string[] = [];
    for (let i = 0; i < 12; i++) nodes.push(await addNode(token, hub, { type: 'group', x: i * 10 }));
    const node13 = await call('POST', NODES, `${H}/${hub}/nodes`, token, {
      type: 'group',
      x: 0,
      y: 0,
      width: 1,
      height: 1,
    });
    expect([node13.status, node13.body.details]).toEqual([409, { limit: 'HUB_MAX_NODES', max: 12, count: 12 }]);
    for (let i = 0; i < 6; i++) expect((await addEdge(token, hub, nodes[i], nodes[i + 1])).status).toBe(202);
    const edge7 = await addEdge(token, hub, nodes[0], nodes[2]);
    expect([edge7.status, edge7.body.details]).toEqual([409, { limit: 'HUB_MAX_EDGES', max: 6, count: 6 }]);

    // 1024 bytes of text per hub: 500 + 500 fit, 100 more do not; a shorter text makes room.
    const texts = ids[1];
    const t1 = await addNode(token, texts, { type: 'text', text: 'é'.repeat(250) }); // 500 bytes
    await addNode(token, texts, { type: 'text', text: 'x'.repeat(500) });
    const over = await call('POST', NODES, `${H}/${texts}/nodes`, token, {
      type: 'text',
      text: 'y'.repeat(100),
      x: 0,
      y: 0,
      width: 1,
      height: 1,
    });
    expect([over.status, over.body.details]).toEqual([409, { limit: 'HUB_MAX_TEXT_BYTES', max: 1024, count: 1000 }]);
    const shorter = await request(server.url, 'PATCH', `${H}/${texts}/nodes/${t1}?version=1`, {
      token,
      body: { text: 'short' },
    });
    expect(shorter.status).toBe(202);
    await addNode(token, texts, { type: 'text', text: 'y'.repeat(100) });
  });

  it('GET /hubs/{id}, its canvas and GraphQL Hub.graph show every change at once: the graph kept in memory follows graph_version', async () => {
    const token = await newUser('hubs-kept');
    const id = await createHub(token);
    let gets = 0;
    const sentBefore = restTextCounts.sent;
    const whole = async () => (gets++, (await call('GET', HUB, `${H}/${id}`, token)).body);
    const canvas = async () => (await request(server.url, 'GET', `${H}/${id}/canvas`, { token })).body;
    const graphql = async () =>
      (
        await request(server.url, 'POST', '/graphql', {
          token,
          body: { query: `{ hub(id: "${id}") { graph nodes { id text } edges { id } } }` },
        })
      ).body.data.hub;
    const a = await addNode(token, id, { type: 'text', text: 'one' });
    expect((await whole()).nodes.map((n: any) => n.text)).toEqual(['one']); // read, and kept
    const b = await addNode(token, id, { type: 'text', text: 'two' });
    expect((await whole()).nodes.map((n: any) => n.text)).toEqual(['one', 'two']);
    const edge = await addEdge(token, id, a, b);
    expect((await whole()).edges.map((e: any) => e.id)).toEqual([edge.body.id]);
    expect((await canvas()).edges.map((e: any) => e.id)).toEqual([edge.body.id]);
    const patched = await call('PATCH', NODE, `${H}/${id}/nodes/${a}?version=1`, token, { text: 'uno', x: 7 });
    expect(patched.status).toBe(202);
    expect((await whole()).nodes[0]).toMatchObject({ text: 'uno', x: 7, version: 2 });
    expect((await graphql()).graph.nodes[0]).toMatchObject({ text: 'uno', x: 7, version: 2 });
    expect((await request(server.url, 'DELETE', `${H}/${id}/edges/${edge.body.id}`, { token })).status).toBe(202);
    expect((await whole()).edges).toEqual([]);
    expect((await graphql()).edges).toEqual([]);
    expect((await request(server.url, 'DELETE', `${H}/${id}/nodes/${b}?version=1`, { token })).status).toBe(202);
    expect((await whole()).nodes.map((n: any) => n.id)).toEqual([a]);
    const quick = await request(server.url, 'POST', `${H}/${id}/quick-add`, {
      token,
      body: { text: 'three', near_node_id: a },
    });
    expect(quick.status).toBe(202);
    const after = await whole();
    expect([after.nodes.length, after.edges.length]).toEqual([2, 1]);
    expect((await graphql()).nodes.map((n: any) => n.text)).toEqual(['uno', 'three']);
    expect((await canvas()).nodes.map((n: any) => n.text)).toEqual(['uno', 'three']);
    // Every whole GET sent the kept graph's REST JSON as it was built, not serialised again.
    expect(restTextCounts.sent - sentBefore).toBe(gets);
    // Another user still gets 404, kept graph or not.
    expect((await call('GET', HUB, `${H}/${id}`, await newUser('hubs-kept-other'))).status).toBe(404);
  });

  it('answers a typed selection of every node and edge field as Hub.graph, from answers kept with the graph: built once per graph version and selection', async () => {
    const token = await newUser('hubs-typed');
    const id = await createHub(token);
    const a = await addNode(token, id, { type: 'text', text: 'one', color: '#A0B1C2', label: 'first' });
    const b = await addNode(token, id, { type: 'link', url: 'https://example.com/x', x: -5, y: 9 });
    expect((await addEdge(token, id, a, b, { to_end: 'arrow', label: 'goes', from_side: 'right' })).status).toBe(202);
    expect((await addEdge(token, id, b, a)).status).toBe(202);
    const NODE_FIELDS = 'id hubId type x y width height color label text url refId missing version createdAt updatedAt';
    const EDGE_FIELDS = 'id hubId fromNode toNode fromSide toSide fromEnd toEnd label color createdAt';
    const typed = async (selection = `nodes { ${NODE_FIELDS} } edges { ${EDGE_FIELDS} }`) => {
      const res = await request(server.url, 'POST', '/graphql', {
        token,
        body: { query: `query ($id: ID!) { hub(id: $id) { graph ${selection} } }`, variables: { id } },
      });
      expect(res.body.errors).toBeUndefined();
      return res.body.data.hub;
    };
    const before = { ...plainListCounts };
    const first = await typed();
    // The same values as the graph's JSON (dates as ISO text), in the selection's names.
    expect(first.nodes).toEqual(first.graph.nodes);
    expect(first.edges).toEqual(first.graph.edges);
    expect(first.nodes.map((n: any) => [n.color, n.label, n.url, n.x])).toEqual([
      ['#A0B1C2', 'first', null, 0],
      [null, null, 'https://example.com/x', -5],
    ]);
    // Nodes and edges built once, then answered from what was kept, not completed object by object.
    expect(plainListCounts.built - before.built).toBe(2);
    for (let i = 0; i < 3; i++) expect(await typed()).toEqual(first);
    expect(plainListCounts.built - before.built).toBe(2);
    expect(plainListCounts.answered - before.answered).toBe(8);
    // Aliases and __typename: another selection, kept beside.
    const aliased = await typed('nodes { key: id __typename t: text } edges { id }');
    expect(aliased.nodes[0]).toEqual({ key: a, __typename: 'HubNode', t: 'one' });
    expect(plainListCounts.built - before.built).toBe(4);
    // A change moves the graph's version: the next answer is built again, with the change.
    expect((await call('PATCH', NODE, `${H}/${id}/nodes/${a}?version=1`, token, { text: 'uno' })).status).toBe(202);
    const changed = await typed();
    expect(changed.nodes[0]).toMatchObject({ text: 'uno', version: 2 });
    expect(changed.nodes).toEqual(changed.graph.nodes);
    expect(plainListCounts.built - before.built).toBe(6);
  });

  it('finds neighbours breadth-first, by direction and depth, at most HUB_NEIGHBORS_MAX_NODES', async () => {
    const token = await newUser('hubs-bfs');
    const id = await createHub(token);
    // a → b → c → d → e, and f → a
    const n: string[] = [];
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) n.push(await addNode(token, id, { type: 'text', text: name }));
    for (const [from, to] of [
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 4],
      [5, 0],
    ])
      expect((await addEdge(token, id, n[from], n[to])).status).toBe(202);
    const T = `${NODE}/neighbors`;
    const reach = async (query: string) => {
      const res = await call('GET', T, `${H}/${id}/nodes/${n[0]}/neighbors?${query}`, token);
      expect(res.status).toBe(200);
      return {
        ids: res.body.nodes.map((x: any) => n.indexOf(x.id)),
        edges: res.body.edges.length,
        truncated: res.body.truncated,
      };
    };
    expect(await reach('depth=1&direction=out')).toEqual({ ids: [0, 1], edges: 1, truncated: false });
    expect(await reach('depth=3&direction=out')).toEqual({ ids: [0, 1, 2, 3], edges: 3, truncated: false });
    expect(await reach('depth=2&direction=in')).toEqual({ ids: [0, 5], edges: 1, truncated: false });
    expect(await reach('depth=2')).toEqual({ ids: [0, 1, 5, 2], edges: 3, truncated: false });
    // Five nodes at most (configured): a, b, f, c, d at depth 3; e is left out.
    expect(await reach('depth=3&direction=both')).toEqual({ ids: [0, 1, 5, 2, 3], edges: 4, truncated: false });
    await addEdge(token, id, n[5], n[4]); // f → e: now six are within depth 2 of a, both ways
    expect((await reach('depth=3&direction=both')).truncated).toBe(true);
    for (const q of ['depth=0', 'depth=4', 'direction=up'])
      expect((await call('GET', T, `${H}/${id}/nodes/${n[0]}/neighbors?${q}`, token)).status).toBe(400);
  });
});

describe('canvas', () => {
  const validCanvas = new Ajv({ strict: false, allErrors: true }).compile(JSON_CANVAS_SCHEMA);
  const fixture = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures/obsidian-welcome.canvas'), 'utf8'));

  it('imports a canvas saved by Obsidian (file nodes become text nodes, layout and colours kept) and exports valid JSON Canvas 1.0', async () => {
    const token = await newUser('hubs-canvas');
    // Unknown fields anywhere are ignored.
    const canvas = {
      ...fixture,
      metadata: { v: 1 },
      nodes: fixture.nodes.map((x: any) => ({ ...x, pluginData: { k: 1 } })),
    };
    const imported = await call('POST', H + '/import', H + '/import', token, { name: 'Welcome', canvas });
    expect(imported.status).toBe(202);
    const id = imported.body.id;
    expect(imported.headers.get('location')).toBe(`${H}/${id}`);
    const hub = (await call('GET', HUB, `${H}/${id}`, token)).body;
    expect([hub.node_count, hub.edge_count]).toEqual([5, 4]);
    const byText = new Map(hub.nodes.map((x: any) => [x.text, x]));
    expect(byText.get('Blog/Blog.md')).toMatchObject({
      type: 'text',
      x: -1960,
      y: -1280,
      width: 400,
      height: 240,
      color: '5',
    });
    expect(byText.get('Documentation/Documentation.md')).toMatchObject({ color: '#656161' });
    const root = byText.get('Divengine Open Source') as any;
    expect(hub.edges.every((e: any) => e.from_node === root.id && e.from_side === 'bottom')).toBe(true);
    expect(hub.nodes.every((x: any) => UUID.test(x.id))).toBe(true);

    await addNode(token, id, { type: 'link', url: 'https://example.org/x', x: 5, y: 6 });
    await addNode(token, id, { type: 'group', label: 'box', x: -5000, y: -5000, width: 9000, height: 9000 });
    const exported = await call('GET', `${HUB}/canvas`, `${H}/${id}/canvas`, token);
    expect(exported.status).toBe(200);
    expect(validCanvas(exported.body)).toBe(true);
    expect(validCanvas.errors).toBeNull();
    expect(exported.body.nodes[0]).toMatchObject({ type: 'group', label: 'box' }); // groups lie beneath
    expect(exported.body.nodes).toHaveLength(7);
    expect(exported.body.edges).toHaveLength(4);

    // A round trip keeps the graph.
    const again = await call('POST', H + '/import', H + '/import', token, { name: 'Again', canvas: exported.body });
    expect(again.status).toBe(202);
    const copy = (await call('GET', HUB, `${H}/${again.body.id}`, token)).body;
    expect([copy.node_count, copy.edge_count]).toEqual([7, 4]);
  });

  it('keeps an empty group or edge label ("") through an import and an export', async () => {
    const token = await newUser('hubs-canvas-labels');
    const canvas = {
      nodes: [
        { id: 'g', type: 'group', label: '', x: 0, y: 0, width: 400, height: 400 },
        { id: 'a', type: 'text', text: 'a', x: 10, y: 10, width: 50, height: 50 },
        { id: 'b', type: 'text', text: 'b', x: 100, y: 10, width: 50, height: 50 },
      ],
      edges: [
        { id: 'e1', fromNode: 'a', toNode: 'b', label: '' },
        { id: 'e2', fromNode: 'b', toNode: 'a' },
      ],
    };
    const imported = await call('POST', H + '/import', H + '/import', token, { name: 'Labels', canvas });
    expect(imported.status).toBe(202);
    const exported = await call('GET', `${HUB}/canvas`, `${H}/${imported.body.id}/canvas`, token);
    expect(exported.status).toBe(200);
    expect(validCanvas(exported.body)).toBe(true);
    const group = exported.body.nodes.find((n: any) => n.type === 'group');
    expect(group).toHaveProperty('label', '');
    const byText = new Map(exported.body.nodes.map((n: any) => [n.id, n.text]));
    const labelled = exported.body.edges.find((e: any) => byText.get(e.fromNode) === 'a');
    const unlabelled = exported.body.edges.find((e: any) => byText.get(e.fromNode) === 'b');
    expect(labelled).toHaveProperty('label', '');
    expect(unlabelled).not.toHaveProperty('label');
  });

  it('states the one JSON Canvas schema: the document has every field and rule the import checks, colours as JSON Canvas 1.0 writes them; another colour is dropped on import', async () => {
    const checked = JSON_CANVAS_SCHEMA.properties as any;
    const checkedNode = [
      checked.nodes.items.properties,
      ...checked.nodes.items.allOf.map((t: any) => t.then.properties),
    ];
    const stated = [
      (doc.paths[`${H}/import`] as any).post.requestBody.content['application/json'].schema.properties.canvas,
      (doc.paths[`${HUB}/canvas`] as any).get.responses['200'].content['application/json'].schema,
    ];
    const rule = ({ description: _, ...r }: Record<string, unknown>) => r;
    for (const canvas of stated) {
      const node = canvas.properties.nodes.items.properties;
      const edge = canvas.properties.edges.items.properties;
      for (const fields of checkedNode)
        for (const [name, schema] of Object.entries(fields))
          expect([name, node[name]]).toEqual([name, expect.objectContaining(rule(schema as any))]);
      for (const [name, schema] of Object.entries(checked.edges.items.properties))
        expect([name, edge[name]]).toEqual([name, expect.objectContaining(rule(schema as any))]);
      // A preset "1"–"6" or #RRGGBB, as JSON Canvas 1.0 has it (the spec's schema types a colour as a string).
      for (const color of [node.color, edge.color]) expect(color.description).toMatch(/"1"–"6".*"#RRGGBB"/);
    }
    const token = await newUser('hubs-canvas-colours');
    const at = (id: string, color: string) => ({
      id,
      type: 'text',
      text: id,
      color,
      x: 0,
      y: 0,
      width: 10,
      height: 10,
    });
    const colours = ['3', '#a0B0c0', 'red', '#FFF', '#a0b0c0ff', '7'];
    const canvas = {
      nodes: colours.map((c, i) => at(`n${i}`, c)),
      edges: [
        { id: 'e0', fromNode: 'n0', toNode: 'n1', color: 'blue' },
        { id: 'e1', fromNode: 'n1', toNode: 'n0', color: '6' },
      ],
    };
    const imported = await call('POST', H + '/import', H + '/import', token, { name: 'Colours', canvas });
    expect(imported.status).toBe(202);
    const hub = (await call('GET', HUB, `${H}/${imported.body.id}`, token)).body;
    const colourOf = new Map(hub.nodes.map((n: any) => [n.text, n.color]));
    expect(colours.map((_, i) => colourOf.get(`n${i}`))).toEqual(['3', '#a0B0c0', null, null, null, null]);
    const textOf = new Map(hub.nodes.map((n: any) => [n.id, n.text]));
    const edgeColour = new Map(hub.edges.map((e: any) => [textOf.get(e.from_node), e.color]));
    expect([edgeColour.get('n0'), edgeColour.get('n1')]).toEqual([null, '6']);
  });

  it('refuses what is not JSON Canvas 1.0, or breaks a rule of hubs, with 400 and details; a canvas over a cap with 409', async () => {
    const token = await newUser('hubs-canvas-bad');
    const node = { id: 'a', type: 'text', text: 't', x: 0, y: 0, width: 10, height: 10 };
    const refuse = async (canvas: unknown) => {
      const res = await call('POST', H + '/import', H + '/import', token, { name: 'bad', canvas });
      expect([res.status, res.body.error]).toEqual([400, 'validation_error']);
      return Object.keys(res.body.details);
    };
    expect(await refuse({ nodes: [{ ...node, x: 1.5 }] })).toEqual(['canvas.nodes.0.x']);
    expect(await refuse({ nodes: [{ ...node, type: 'circle' }] })).toEqual(['canvas.nodes.0.type']);
    expect(await refuse({ nodes: [{ ...node, text: undefined }] })).toEqual(['canvas.nodes.0.text']);
    expect(await refuse({ nodes: [{ ...node, type: 'file', file: 'a.md', subpath: 'heading' }] })).toEqual([
      'canvas.nodes.0.subpath', // a subpath starts with "#"
    ]);
    // A missing field is named by its index path, at the facade's check and at the subgraph's alike.
    const fourth = [node, { ...node, id: 'b' }, { ...node, id: 'c' }, { ...node, id: undefined }];
    expect(await refuse({ nodes: fourth })).toEqual(['canvas.nodes.3.id']);
    expect(await refuse({ nodes: [node], edges: [{ id: 'e', toNode: 'a' }] })).toEqual(['canvas.edges.0.fromNode']);
    expect(await refuse({ nodes: [node, node] })).toEqual(['canvas.nodes.1.id']);
    expect(await refuse({ nodes: [{ ...node, width: 0 }] })).toEqual(['canvas.nodes.0.width']);
    expect(await refuse({ nodes: [node], edges: [{ id: 'e', fromNode: 'a', toNode: 'zz' }] })).toEqual([
      'canvas.edges.0.toNode', // the canvas's own names, as every other path into it
    ]);
    expect(await refuse({ nodes: [node], edges: [{ id: 'e', fromNode: 'a', toNode: 'a', toEnd: 'both' }] })).toEqual([
      'canvas.edges.0.toEnd',
    ]);
    const many = { nodes: Array.from({ length: 13 }, (_, i) => ({ ...node, id: `n${i}` })) };
    const capped = await call('POST', H + '/import', H + '/import', token, { name: 'big', canvas: many });
    expect([capped.status, capped.body.details]).toEqual([409, { limit: 'HUB_MAX_NODES', max: 12, count: 0 }]);
  });

  it('takes an import body up to HUB_IMPORT_BODY_LIMIT_BYTES while other routes keep BODY_LIMIT_BYTES', async () => {
    const token = await newUser('hubs-canvas-big');
    const padding = 'p'.repeat(600 * 1024); // over BODY_LIMIT_BYTES (256 KiB), ignored by the import
    const res = await call('POST', H + '/import', H + '/import', token, {
      name: 'padded',
      canvas: { nodes: [], padding },
    });
    expect(res.status).toBe(202);
    const other = await call('POST', H, H, token, { name: 'x', padding });
    expect(other.status).toBe(413);
  });

  it('imports a canvas over LARGE_BODY_BYTES: admitted, parsed in its thread, stored whole (issue 41 finding 8)', async () => {
    const token = await newUser('hubs-canvas-large');
    const canvas = {
      ...fixture,
      padding: 'p'.repeat(3 * 1024 * 1024), // 3 MiB: a large body (LARGE_BODY_BYTES is 1 MiB)
    };
    const res = await call('POST', H + '/import', H + '/import', token, { name: 'large', canvas });
    expect(res.status).toBe(202);
    const hub = (await call('GET', HUB, `${H}/${res.body.id}`, token)).body;
    expect([hub.name, hub.node_count, hub.edge_count]).toEqual(['large', 5, 4]);
  });
});
