// The bounds on one request's cost and on one user's share (issue 41 finding 2): at most
// SEARCH_MAX_TERMS terms per search (400 beyond), at most EXPENSIVE_PER_USER expensive operations
// of a user at once (429 with Retry-After beyond, others unaffected), at most
// GRAPHQL_MAX_EXPENSIVE_FIELDS of them in one GraphQL operation, and neighbours that read at most
// HUB_NEIGHBORS_MAX_EDGES edges; refusals held EXPENSIVE_REFUSAL_HOLD_MS before they are sent. On both databases.
import { sharedExpensiveGate } from '../../lib/kit/expensive';
import { api, createUserAndLogin, login, request } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

let server: TestServer;
let adminToken: string;
let users = 0;

beforeAll(async () => {
  server = await startTestServer({
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
    HUB_NEIGHBORS_MAX_EDGES: '10',
    EXPENSIVE_PER_USER: '2',
    SEARCH_MAX_TERMS: '8',
    GRAPHQL_MAX_EXPENSIVE_FIELDS: '2',
  });
  adminToken = (await login(server.url, ADMIN)).access_token;
}, 60_000);
afterAll(() => server?.close());

const newUser = (name: string) => createUserAndLogin(server.url, adminToken, `${name}-${++users}`);
const get = (path: string, token: string) => request(server.url, 'GET', path, { token });
const q = (text: string) => encodeURIComponent(text);

async function note(token: string, body: string) {
  expect((await request(server.url, 'POST', '/api/v1/notes', { token, body: { body } })).status).toBe(202);
}

/** A hub of a centre linked to `n` nodes; the centre's id. */
async function star(token: string, n: number): Promise<{ hubId: string; centre: string }> {
  const nodes = [{ id: 'c', type: 'text', text: 'centre', x: 0, y: 0, width: 10, height: 10 }];
  const edges = [];
  for (let i = 0; i < n; i++) {
    nodes.push({ id: `n${i}`, type: 'text', text: `leaf ${i}`, x: i * 20, y: 40, width: 10, height: 10 });
    edges.push({ id: `e${i}`, fromNode: 'c', toNode: `n${i}` });
  }
  const res = await request(server.url, 'POST', '/api/v1/hubs/import', {
    token,
    body: { name: 'star', canvas: { nodes, edges } },
  });
  expect(res.status).toBe(202);
  const hubId = String(res.headers.get('location')).split('/').pop()!;
  const hub = await get(`/api/v1/hubs/${hubId}`, token);
  return { hubId, centre: (hub.body.nodes as { id: string; text: string }[]).find((x) => x.text === 'centre')!.id };
}

it('refuses a search of more than SEARCH_MAX_TERMS words and phrases with 400, in notes and the Vault', async () => {
  const user = await newUser('terms');
  await note(user.token, 'alpha beta gamma');
  const eight = 'a b c d e f g "h i"';
  const nine = `${eight} j`;
  expect((await get(`/api/v1/notes?q=${q(eight)}`, user.token)).status).toBe(200);
  for (const path of ['/api/v1/notes', '/api/v1/vault/items']) {
    const res = await get(`${path}?q=${q(nine)}`, user.token);
    expect([path, res.status, res.body.error]).toEqual([path, 400, 'validation_error']);
    expect(res.body.details.q[0]).toMatch(/at most 8 words and phrases/);
  }
  expect((await get(`/api/v1/vault/items?q=${q(eight)}`, user.token)).status).toBe(200);
  const gql = await api(server.url).graphql(
    'query ($q: String) { notes(q: $q) { items { id } } }',
    { q: nine },
    user.token,
  );
  expect(gql.body.errors[0].extensions.code).toBe('validation_error');
});

it('answers 429 with Retry-After beyond EXPENSIVE_PER_USER of one user at once, and serves other users', async () => {
  const busy = await newUser('busy');
  const other = await newUser('other');
  await note(busy.token, 'orchard apples');
  await note(other.token, 'orchard pears');
  const { hubId, centre } = await star(busy.token, 3);
  const neighbours = `/api/v1/hubs/${hubId}/nodes/${centre}/neighbors?depth=2`;

  // Two of busy's expensive operations running (the process's one gate, as a module uses it).
  const gate = sharedExpensiveGate(server.config);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const running = [gate.run(busy.id, 'search', () => held), gate.run(busy.id, 'neighbors', () => held)];
  try {
    for (const path of [`/api/v1/notes?q=orchard`, `/api/v1/vault/items?q=orchard`, neighbours]) {
      const res = await get(path, busy.token);
      expect([path, res.status, res.body.error]).toEqual([path, 429, 'rate_limit_exceeded']);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.body.details).toEqual(expect.objectContaining({ limit: 'EXPENSIVE_PER_USER', max: 2 }));
    }
    const gql = await api(server.url).graphql('{ notes(q: "orchard") { items { id } } }', {}, busy.token);
    expect(gql.body.errors[0].extensions).toEqual(
      expect.objectContaining({ code: 'rate_limit_exceeded', retryAfter: 1 }),
    );
    // A listing without q is no search; another user is not held back.
    expect((await get('/api/v1/notes', busy.token)).status).toBe(200);
    const theirs = await get('/api/v1/notes?q=orchard', other.token);
    expect([theirs.status, theirs.body.items.length]).toEqual([200, 1]);
  } finally {
    release();
    await Promise.all(running);
  }
  expect(gate.held(busy.id)).toBe(0);
  expect((await get('/api/v1/notes?q=orchard', busy.token)).status).toBe(200);
  expect((await get(neighbours, busy.token)).status).toBe(200);
});

it('refuses a caller whose slots are taken before looking at the request (REST, one process); a token it has not verified is 401, not 429', async () => {
  const busy = await newUser('early');
  const { hubId, centre } = await star(busy.token, 3);
  expect((await get(`/api/v1/notes?q=x`, busy.token)).status).toBe(200); // the token is verified once
  const gate = sharedExpensiveGate(server.config);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const running = [gate.run(busy.id, 'search', () => held), gate.run(busy.id, 'search', () => held)];
  try {
    // Invalid input, an unknown hub, a search of too many terms: refused for the slots before any of it is checked.
    for (const path of [
      `/api/v1/hubs/${hubId}/nodes/${centre}/neighbors?depth=9`,
      `/api/v1/hubs/${crypto.randomUUID()}/nodes/${centre}/neighbors`,
      `/api/v1/notes?q=${q('a b c d e f g h i j')}`,
      `/api/v1/vault/items?q=x&limit=-1`,
    ]) {
      const sent = performance.now();
      const res = await get(path, busy.token);
      expect([path, res.status, res.body.error, res.headers.get('retry-after')]).toEqual([
        path,
        429,
        'rate_limit_exceeded',
        '1',
      ]);
      // Held EXPENSIVE_REFUSAL_HOLD_MS (250) before it was sent: asked again at once, it cannot flood the process.
      expect(performance.now() - sent).toBeGreaterThanOrEqual(240);
      expect(res.body.details).toEqual({ limit: 'EXPENSIVE_PER_USER', max: 2, kind: expect.any(String) });
    }
    // The same user's id in a token whose signature fails: refused as any bad token, never told about the slots.
    const [head, payload] = busy.token.split('.');
    const forged = await get(`/api/v1/notes?q=x`, `${head}.${payload}.${'A'.repeat(43)}`);
    expect(forged.status).toBe(401);
    // Not an expensive request: served.
    expect((await get('/api/v1/notes', busy.token)).status).toBe(200);
    expect((await get(`/api/v1/hubs/${hubId}`, busy.token)).status).toBe(200);
  } finally {
    release();
    await Promise.all(running);
  }
});

it('refuses a GraphQL operation naming an expensive field from a user whose slots are taken, with 429, before validating it; other operations are served', async () => {
  const busy = await newUser('early-graphql');
  const { hubId, centre } = await star(busy.token, 3);
  const run = (query: string, variables: Record<string, unknown> = {}, token = busy.token) =>
    api(server.url).graphql(query, variables, token);
  expect((await run('{ notes(q: "x") { nextCursor } }')).body.errors).toBeUndefined(); // the token is verified once
  const gate = sharedExpensiveGate(server.config);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const running = [gate.run(busy.id, 'search', () => held), gate.run(busy.id, 'search', () => held)];
  try {
    for (const [query, kind] of [
      // Not valid (an unknown field), and over GRAPHQL_MAX_EXPENSIVE_FIELDS: refused for the slots before either is checked.
      ['{ notes(q: "x") { nope } }', 'search'],
      [
        '{ a: notes(q: "x") { nextCursor } b: notes(q: "y") { nextCursor } c: vaultItems(q: "z") { nextCursor } }',
        'search',
      ],
      [
        `query N { ...F } fragment F on Query { hubNeighbors(hubId: "${hubId}", nodeId: "${centre}") { truncated } }`,
        'neighbors',
      ],
    ]) {
      const sent = performance.now();
      const res = await run(query);
      expect([query, res.status, res.headers.get('retry-after')]).toEqual([query, 429, '1']);
      expect(performance.now() - sent).toBeGreaterThanOrEqual(240); // held, as the REST refusal
      expect(res.body.data).toBeUndefined();
      expect(res.body.errors[0].extensions).toMatchObject({
        code: 'rate_limit_exceeded',
        details: { limit: 'EXPENSIVE_PER_USER', max: 2, kind },
      });
    }
    // A listing (q null or left out) is no search, and other fields are served.
    expect((await run('query ($q: String) { notes(q: $q) { nextCursor } }', { q: null })).body.errors).toBeUndefined();
    expect((await run('{ notes { nextCursor } }')).body.errors).toBeUndefined();
    // The same user's id in a token whose signature fails: 401, never told about the slots.
    const [head, payload] = busy.token.split('.');
    expect((await run('{ notes(q: "x") { nextCursor } }', {}, `${head}.${payload}.${'A'.repeat(43)}`)).status).toBe(
      401,
    );
  } finally {
    release();
    await Promise.all(running);
  }
  expect((await run('{ notes(q: "x") { nextCursor } }')).body.errors).toBeUndefined();
});

it('refuses more than GRAPHQL_MAX_EXPENSIVE_FIELDS searches or neighbours in one operation, aliases and fragments included', async () => {
  const user = await newUser('aliases');
  const run = (query: string) => api(server.url).graphql(query, {}, user.token);
  const three = await run(
    '{ a: notes(q: "x") { nextCursor } b: notes(q: "y") { nextCursor } ...F } fragment F on Query { c: vaultItems(q: "z") { nextCursor } }',
  );
  expect(three.status).toBe(400);
  expect(three.body.errors[0].extensions.code).toBe('validation_error');
  expect(three.body.errors[0].message).toMatch(/GRAPHQL_MAX_EXPENSIVE_FIELDS/);
  // Two are allowed; listings without q are no searches.
  const two = await run('{ a: notes(q: "x") { nextCursor } b: vaultItems(q: "y") { nextCursor } }');
  expect(two.body.errors).toBeUndefined();
  const lists = await run('{ a: notes { nextCursor } b: notes { nextCursor } c: notes { nextCursor } }');
  expect(lists.body.errors).toBeUndefined();
});

it('reads at most HUB_NEIGHBORS_MAX_EDGES edges per neighbours query, then says truncated', async () => {
  const user = await newUser('fanout');
  const small = await star(user.token, 4);
  const whole = await get(`/api/v1/hubs/${small.hubId}/nodes/${small.centre}/neighbors?depth=3`, user.token);
  expect([whole.status, whole.body.nodes.length, whole.body.edges.length, whole.body.truncated]).toEqual([
    200,
    5,
    4,
    false,
  ]);
  const big = await star(user.token, 30);
  const cut = await get(`/api/v1/hubs/${big.hubId}/nodes/${big.centre}/neighbors?depth=3`, user.token);
  expect(cut.status).toBe(200);
  expect(cut.body.truncated).toBe(true);
  expect(cut.body.edges.length).toBeLessThanOrEqual(10);
  expect(cut.body.nodes.length).toBeLessThanOrEqual(11);
});
