// One operation pipeline (lib/operation-pipeline) behind every GraphQL entry point: the same
// offending operations get the same refusal from /graphql, the facade's direct path
// (gateway.execute), /graphql/stream and a subgraph process's /graphql. Then the subgraph
// endpoint's own attacks (issue 29): alias floods without a token, and the hop secret.
// Run once, on SQLite (DATABASE_INCIDENTAL in jest.config.js): every refusal here happens in the
// pipeline, before any resolver reads a database.
import type { Request } from 'express';
import { startServer } from '../../bin/all-in-one';
import { startSubgraphServer } from '../../bin/subgraph';
import type { Gateway } from '../../gateway';
import { loadConfig } from '../../lib/config';
import { hopClientAddress, HopSecret } from '../../lib/hop';
import { login, request } from '../helpers/http';
import { ADMIN, cleanupDatabases, isolatedEnv } from '../helpers/server';

const SECRET = 'a-hop-secret-of-at-least-thirty-two-characters';
const base = {
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'silent',
  AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
  AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
};
// The smallest answer cap, so that an introspection answer passes it.
const config = (extra: Record<string, string> = {}) =>
  loadConfig({ ...base, ...isolatedEnv(), GRAPHQL_MAX_RESPONSE_BYTES: String(16 * 1024), ...extra });

const nested = (depth: number): string => (depth === 0 ? 'x' : `a { ${nested(depth - 1)} }`);
const aliases = (n: number, field: string) =>
  Array.from({ length: n }, (_, i) => `a${i.toString(36)}:${field}`).join(' ');
/** Fragments that spread the next one 25 times: 25^3 fields once expanded, in a few hundred characters. */
const fragmentBomb = () =>
  `query { ...F0 } ${Array.from({ length: 3 }, (_, i) => `fragment F${i} on Query { ${`...F${i + 1} `.repeat(25)}}`).join(' ')} fragment F3 on Query { __typename }`;
const INTROSPECTION = '__schema { types { name description fields { name description args { name description } } } }';

/** The offending operations and what each entry point must answer: validation_error, naming the limit. */
const OFFENDING: { name: string; body: { query: string; operationName?: string }; message: RegExp }[] = [
  { name: 'too deep', body: { query: `{ ${nested(13)} }` }, message: /GRAPHQL_MAX_DEPTH/ },
  { name: 'too many aliases', body: { query: `{ ${aliases(31, 'x')} }` }, message: /GRAPHQL_MAX_ALIASES/ },
  { name: 'too costly', body: { query: fragmentBomb() }, message: /GRAPHQL_MAX_COST/ },
  {
    name: 'over the answer-size cap',
    body: { query: `{ ${aliases(20, INTROSPECTION)} }` },
    message: /GRAPHQL_MAX_RESPONSE_BYTES/,
  },
  {
    name: 'an unknown operation name',
    body: { query: 'query A { __typename }', operationName: 'B' },
    message: /no operation named "B"/,
  },
];

type Answer = {
  status?: number;
  body: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };
};

let gateway: Gateway;
let token: string;
let server: Awaited<ReturnType<typeof startServer>>;
let subgraph: Awaited<ReturnType<typeof startSubgraphServer>>;
let production: Awaited<ReturnType<typeof startSubgraphServer>>;
const configs = {
  server: config(),
  subgraph: config(),
  production: config({ NODE_ENV: 'production', SUBGRAPH_SECRET: SECRET }),
};

beforeAll(async () => {
  server = await startServer(configs.server, { mount: (_app, internals) => (gateway = internals.gateway) });
  token = (await login(server.url, ADMIN)).access_token;
  subgraph = await startSubgraphServer(configs.subgraph, 'auth');
  production = await startSubgraphServer(configs.production, 'auth');
});
afterAll(async () => {
  await server?.close();
  await subgraph?.close();
  await production?.close();
  for (const c of Object.values(configs)) await cleanupDatabases(c);
});

const ENTRY_POINTS: Record<string, (body: { query: string; operationName?: string }) => Promise<Answer>> = {
  '/graphql': (body) => request(server.url, 'POST', '/graphql', { body }),
  'the direct path (gateway.execute)': async (body) => ({
    body: (await gateway.execute({ ...body, headers: {}, clientIp: '127.0.0.1' })) as Answer['body'],
  }),
  // Every operation there needs a caller.
  '/graphql/stream': (body) =>
    request(server.url, 'POST', '/graphql/stream', { body, token, headers: { accept: 'text/event-stream' } }),
  "a subgraph process's /graphql": (body) => request(subgraph.url, 'POST', '/graphql', { body }),
};

describe.each(Object.entries(ENTRY_POINTS))('%s', (_entry, send) => {
  it.each(OFFENDING)('refuses an operation $name: validation_error naming the limit', async ({ body, message }) => {
    const answer = await send(body);
    if (answer.status !== undefined) expect(answer.status).toBe(400);
    expect(answer.body.data ?? undefined).toBeUndefined();
    expect(answer.body.errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(message),
        extensions: expect.objectContaining({ code: 'validation_error' }),
      }),
    ]);
  });
});

describe('a subgraph endpoint (issue 29)', () => {
  it('refuses 12,000 aliases of _service { sdl } without a token, as a JSON error', async () => {
    const res = await request(subgraph.url, 'POST', '/graphql', {
      body: { query: `{ ${aliases(12_000, '_service{sdl}')} }` },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body.errors[0].extensions.code).toBe('validation_error');
    expect(res.body.errors[0].message).toMatch(/GRAPHQL_MAX_(TOKENS|ALIASES)/);
  });

  it('refuses 5,000 aliases through a fragment with a token: a JSON error, not an HTML page', async () => {
    const query = `query { ...Many } fragment Many on Query { ${aliases(5000, '_service { sdl }')} }`;
    const res = await request(subgraph.url, 'POST', '/graphql', { body: { query }, token: 'not.a.token' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.text).not.toMatch(/<html|<pre>/i);
    expect(res.body.errors[0].extensions.code).toBe('validation_error');
  });

  // `__typename` only: User's own fields need a caller (the scope step would refuse them first).
  it('answers an _entities representation without its key with validation_error', async () => {
    const res = await request(subgraph.url, 'POST', '/graphql', {
      body: {
        query: 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on User { __typename } } }',
        variables: { r: [{ __typename: 'User' }] },
      },
    });
    expect(res.body.errors[0].extensions.code).toBe('validation_error');
    expect(res.body.errors[0].message).toMatch(/needs its key \(id\)/);
  });

  it('refuses more _entities representations than the cost budget (GRAPHQL_MAX_COST) before resolving any', async () => {
    const max = configs.subgraph.GRAPHQL_MAX_COST;
    const representations = Array.from({ length: max + 1 }, (_, i) => ({ __typename: 'User', id: String(i) }));
    const res = await request(subgraph.url, 'POST', '/graphql', {
      body: {
        query: 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on User { __typename } } }',
        variables: { r: representations },
      },
    });
    expect(res.body.errors[0].extensions.code).toBe('validation_error');
    expect(res.body.errors[0].message).toMatch(/representations exceed the limit of \d+ \(GRAPHQL_MAX_COST\)/);
  });

  it('in production answers nothing without the hop secret, _service included', async () => {
    const without = await request(production.url, 'POST', '/graphql', { body: { query: '{ _service { sdl } }' } });
    expect(without.status).toBe(401);
    expect(without.body.errors[0].extensions.code).toBe('unauthorized');
    const wrong = await request(production.url, 'POST', '/graphql', {
      body: { query: '{ _service { sdl } }' },
      headers: { 'x-hop-secret': `${SECRET}x` },
    });
    expect(wrong.status).toBe(401);
    const withSecret = await request(production.url, 'POST', '/graphql', {
      body: { query: '{ _service { sdl } }' },
      headers: { 'x-hop-secret': SECRET },
    });
    expect(withSecret.status).toBe(200);
    expect(withSecret.body.data._service.sdl).toContain('currentSession');
  });

  it("in production applies the limits to the secret's holders too", async () => {
    const res = await request(production.url, 'POST', '/graphql', {
      body: { query: `{ ${aliases(31, 'x')} }` },
      headers: { 'x-hop-secret': SECRET },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/GRAPHQL_MAX_ALIASES/);
  });
});

describe('/graphql/stream serves distinct connections only (issue 29 item 11)', () => {
  it('a POST without Accept: text/event-stream is told what to send', async () => {
    const res = await request(server.url, 'POST', '/graphql/stream', {
      body: { query: 'subscription { events { type } }' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('validation_error');
    expect(res.body.errors[0].message).toMatch(/Accept: text\/event-stream/);
  });

  it("graphql-sse's single-connection mode (PUT) is refused with what to do", async () => {
    const res = await request(server.url, 'PUT', '/graphql/stream', { headers: { accept: 'text/plain' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, POST');
    expect(res.body.errors[0].extensions.code).toBe('method_not_allowed');
    expect(res.body.errors[0].message).toMatch(/single-connection mode is not served/);
  });
});

describe('the client address between processes (contract: "Client addresses")', () => {
  const hop = new HopSecret(SECRET);
  const req = (headers: Record<string, string>) => ({ headers, ip: '127.0.0.1' }) as unknown as Request;

  it('is believed with the hop secret, when it is an address', () => {
    expect(hopClientAddress(req({ 'x-client-address': '203.0.113.7', 'x-hop-secret': SECRET }), hop)).toBe(
      '203.0.113.7',
    );
    expect(
      hopClientAddress(req({ 'x-client-address': '<script>alert(1)</script>', 'x-hop-secret': SECRET }), hop),
    ).toBe('127.0.0.1');
  });

  it('is not believed without the secret, with a wrong one, or when no secret is configured', () => {
    expect(hopClientAddress(req({ 'x-client-address': '203.0.113.7' }), hop)).toBe('127.0.0.1');
    expect(hopClientAddress(req({ 'x-client-address': '203.0.113.7', 'x-hop-secret': 'guess' }), hop)).toBe(
      '127.0.0.1',
    );
    expect(
      hopClientAddress(req({ 'x-client-address': '203.0.113.7', 'x-hop-secret': SECRET }), new HopSecret(undefined)),
    ).toBe('127.0.0.1');
  });
});
