// Hostile and careless GraphQL clients against a real one-process server (deployed settings:
// NODE_ENV=production). Each attack must be refused with a 4xx, quickly, while /health/live
// keeps answering. Before the limits, 4,000 aliases held the event loop for 28 s or more.
import { Writable } from 'node:stream';
import zlib from 'node:zlib';
import pino from 'pino';
import { startSubgraphServer } from '../../bin/subgraph';
import { loadConfig } from '../../lib/config';
import { EventLog } from '../../lib/event-log';
import { createBaseApp } from '../../lib/http-app';
import { listen } from '../../lib/http-server';
import { loadKeys, TokenSigner } from '../../lib/tokens';
import { api, createUserAndLogin, login, request } from '../helpers/http';
import { ADMIN, cleanupDatabases, isolatedEnv, startTestServer, TestServer } from '../helpers/server';
import { openStream, OpenStream } from '../helpers/sse';
import { decode } from '../helpers/tokens';

let server: TestServer;
let http: ReturnType<typeof api>;
let admin: Awaited<ReturnType<typeof login>>;
const streams: OpenStream[] = [];

// Generous bounds for a busy 2-core machine: the unprotected server took 28–160 s.
const QUICK_MS = 5000;

beforeAll(async () => {
  server = await startTestServer({
    NODE_ENV: 'production',
    EVENT_HEARTBEAT_SECONDS: '1',
    EVENT_STREAMS_PER_USER: '3',
    GRAPHQL_MAX_RESPONSE_BYTES: String(1024 * 1024),
    GRAPHQL_MAX_AUDIO_BYTES: String(512 * 1024),
  });
  http = api(server.url);
  admin = await login(server.url, ADMIN);
});
afterEach(() => streams.splice(0).forEach((s) => s.close()));
afterAll(() => server.close());

/** Sends the attack and, while it runs, asks /health/live; both must answer quickly. */
async function refusedQuickly(attack: () => Promise<{ status: number; body: any }>) {
  const started = Date.now();
  const answer = attack().then((res) => ({ ...res, ms: Date.now() - started }));
  const liveStarted = Date.now();
  const live = await fetch(`${server.url}/health/live`);
  const liveMs = Date.now() - liveStarted;
  expect(live.status).toBe(200);
  expect(liveMs).toBeLessThan(QUICK_MS);
  const res = await answer;
  expect(res.ms).toBeLessThan(QUICK_MS);
  return res;
}

const graphql = (
  query: string,
  options: { token?: string; variables?: Record<string, unknown>; operationName?: string } = {},
) =>
  request(server.url, 'POST', '/graphql', {
    body: { query, variables: options.variables, operationName: options.operationName },
    token: options.token,
  });

const aliases = (n: number, field: string) => Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ');

function expectLimit(res: { status: number; body: any }, variable: string, max: number) {
  expect(res.status).toBe(400);
  const [error] = res.body.errors;
  expect(error.extensions).toMatchObject({ code: 'validation_error', details: { limit: variable, max } });
  expect(error.message).toContain(`${variable}`);
  expect(error.message).toContain(`${max}`);
}

describe('operation limits, checked before validation and planning', () => {
  it('refuses 4,000 aliased anonymous refreshSession mutations in well under a second of work', async () => {
    const query = `mutation { ${aliases(4000, 'refreshSession(refreshToken: "x") { accessToken }')} }`;
    expect(query.length).toBeGreaterThan(190_000);
    const res = await refusedQuickly(() => graphql(query));
    expectLimit(res, 'GRAPHQL_MAX_TOKENS', 10_000);
  });

  it('limits tokens, aliases, depth, root fields and directives, each named with its value', async () => {
    // 10,001 tokens and nothing else wrong with it: no aliases, depth 1, no counted root field.
    expectLimit(
      await refusedQuickly(() => graphql(`{ ${'__typename '.repeat(10_000)}}`)),
      'GRAPHQL_MAX_TOKENS',
      10_000,
    );
    expectLimit(
      await refusedQuickly(() =>
        graphql(`query { currentSession { ${aliases(31, 'id')} } }`, { token: admin.access_token }),
      ),
      'GRAPHQL_MAX_ALIASES',
      30,
    );
    const deep = Array.from({ length: 13 }, (_, i) => `f${i} {`).join(' ') + ' id' + ' }'.repeat(13);
    expectLimit(await refusedQuickly(() => graphql(`{ ${deep} }`)), 'GRAPHQL_MAX_DEPTH', 12);
    const roots = Array.from({ length: 21 }, (_, i) => `f${i}`).join(' ');
    expectLimit(await refusedQuickly(() => graphql(`{ ${roots} }`)), 'GRAPHQL_MAX_ROOT_FIELDS', 20);
    // Root fields are counted through fragments too.
    expectLimit(await graphql(`{ ...A } fragment A on Query { ${roots} }`), 'GRAPHQL_MAX_ROOT_FIELDS', 20);
    expectLimit(
      await refusedQuickly(() => graphql(`{ __typename ${'@skip(if: false) '.repeat(51)}}`)),
      'GRAPHQL_MAX_DIRECTIVES',
      50,
    );

    // At the limits the operation runs.
    const atAliases = await graphql(`query { currentSession { ${aliases(30, 'id')} } }`, { token: admin.access_token });
    expect(atAliases.status).toBe(200);
    expect(Object.keys(atAliases.body.data.currentSession)).toHaveLength(30);
    const atRoots = await graphql(`query { ${aliases(20, 'currentSession { id }')} }`, { token: admin.access_token });
    expect(atRoots.status).toBe(200);
    expect(Object.keys(atRoots.body.data)).toHaveLength(20);
  });

  it('counts page sizes in the cost, from literals and variables, with a smaller budget without a token', async () => {
    const page = (first: string) =>
      `voices(first: ${first}) { items { id name description baseVoice voiceBlend language speed version createdAt updatedAt } nextCursor }`;
    // One page of 100 is fine with a token (the REST facade asks for that much) …
    expect((await graphql(`{ ${page('100')} }`, { token: admin.access_token })).status).toBe(200);
    expect((await http.get('/api/v1/tts/voices?limit=100', { token: admin.access_token })).status).toBe(200);
    // … five (cost 5 × 1,201) are too many, whether the size is written in or passed as a variable.
    expectLimit(
      await graphql(`{ ${aliases(5, page('100'))} }`, { token: admin.access_token }),
      'GRAPHQL_MAX_COST',
      5000,
    );
    expectLimit(
      await graphql(`query ($n: Int!) { ${aliases(5, page('$n'))} }`, {
        token: admin.access_token,
        variables: { n: 100 },
      }),
      'GRAPHQL_MAX_COST',
      5000,
    );
    expect(
      (
        await graphql(`query ($n: Int!) { ${aliases(5, page('$n'))} }`, {
          token: admin.access_token,
          variables: { n: 5 },
        })
      ).status,
    ).toBe(200);
    // Without a token the same single page is over the anonymous budget (before any auth check).
    expectLimit(await graphql(`{ ${page('100')} }`), 'GRAPHQL_MAX_COST_ANONYMOUS', 200);
    // Logging in and refreshing stay well within it.
    expect((await http.post('/api/v1/auth/refresh', { refresh_token: admin.refresh_token })).status).toBe(202);
  });

  it('counts the cost of a remembered document again for other page sizes, skips and callers', async () => {
    const page = (first: string) =>
      `voices(first: ${first}) { items { id name description baseVoice voiceBlend language speed version createdAt updatedAt } nextCursor }`;
    const query = `query ($n: Int!, $skip: Boolean!, $after: String) { ${aliases(5, page('$n'))} more: voices(first: $n, after: $after) @skip(if: $skip) { nextCursor } }`;
    const token = admin.access_token;
    // Small first (the document is remembered), then large: the large one is refused all the same.
    expect((await graphql(query, { token, variables: { n: 3, skip: false } })).status).toBe(200);
    expectLimit(await graphql(query, { token, variables: { n: 100, skip: false } }), 'GRAPHQL_MAX_COST', 5000);
    expect((await graphql(query, { token, variables: { n: 3, skip: false, after: null } })).status).toBe(200);
    // A variable of the wrong type (refused by execution) leaves nothing behind that lets a large page through.
    expect((await graphql(query, { token, variables: { n: 90, skip: false, after: 5 } })).status).toBe(400);
    expectLimit(await graphql(query, { token, variables: { n: 90, skip: false } }), 'GRAPHQL_MAX_COST', 5000);
    // The same page sizes without a token meet the smaller budget.
    expectLimit(await graphql(query, { variables: { n: 5, skip: false } }), 'GRAPHQL_MAX_COST_ANONYMOUS', 200);
    expect((await graphql(query, { token, variables: { n: 5, skip: false } })).status).toBe(200);
    // A directive's variable changes the cost: 21 with the large page skipped, 222 with it (anonymous budget 200).
    const small = `query ($skip: Boolean!) { a: voices(first: 10) { items { id } } b: voices(first: 100) @skip(if: $skip) { items { id } } }`;
    expect((await graphql(small, { token, variables: { skip: true } })).status).toBe(200);
    expect((await graphql(small, { variables: { skip: true } })).body.errors?.[0]?.extensions?.details?.limit).not.toBe(
      'GRAPHQL_MAX_COST_ANONYMOUS',
    );
    expectLimit(await graphql(small, { variables: { skip: false } }), 'GRAPHQL_MAX_COST_ANONYMOUS', 200);
  });

  it('applies the same limits on /graphql/stream', async () => {
    const res = await fetch(`${server.url}/graphql/stream`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${admin.access_token}`,
      },
      body: JSON.stringify({ query: `subscription { ${aliases(31, 'events { seq }')} }` }),
    });
    expectLimit({ status: res.status, body: await res.json() }, 'GRAPHQL_MAX_ALIASES', 30);
  });
});

describe('client mistakes answer 4xx, never 5xx', () => {
  it('two operations without operationName, an unknown operationName, a subscription on /graphql', async () => {
    const two = await graphql('query A { __typename } query B { __typename }');
    expect(two.status).toBe(400);
    expect(two.body.errors[0]).toMatchObject({
      extensions: { code: 'validation_error' },
      message: expect.stringContaining('operationName'),
    });
    const unknown = await graphql('query A { __typename }', { operationName: 'B' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].message).toContain('"B"');
    const named = await graphql('query A { __typename } query B { __typename }', { operationName: 'B' });
    expect(named.status).toBe(200);
    const subscription = await graphql('subscription { events { seq } }', { token: admin.access_token });
    expect(subscription.status).toBe(400);
    expect(subscription.body.errors[0]).toMatchObject({
      extensions: { code: 'validation_error' },
      message: expect.stringContaining('/graphql/stream'),
    });
  });

  it('a mutation sent to /graphql/stream (queries of the stream schema are answered there)', async () => {
    const post = (query: string) =>
      fetch(`${server.url}/graphql/stream`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          authorization: `Bearer ${admin.access_token}`,
        },
        body: JSON.stringify({ query }),
      });
    const mutation = await post('mutation { logout { id } }');
    expect(mutation.status).toBe(400);
    expect(((await mutation.json()) as any).errors[0]).toMatchObject({
      extensions: { code: 'validation_error' },
      message: expect.stringContaining('/graphql'),
    });
    const query = await post('{ eventStreamPosition }');
    expect(query.status).toBeLessThan(500);
  });

  it('a Content-Encoding the body is not encoded with, or one that is not supported', async () => {
    const body = JSON.stringify({ query: '{ __typename }' });
    for (const encoding of ['gzip', 'br', 'deflate']) {
      const res = await request(server.url, 'POST', '/graphql', {
        raw: body,
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      });
      expect([400, 415]).toContain(res.status);
      expect(res.body.errors[0].extensions.code).toMatch(/^(validation_error|unsupported_media_type)$/);
    }
    const unknown = await request(server.url, 'POST', '/graphql', {
      raw: body,
      headers: { 'content-type': 'application/json', 'content-encoding': 'xz' },
    });
    expect(unknown.status).toBe(415);
    // A body really compressed is read.
    const gzipped = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: zlib.gzipSync(body),
    });
    expect(gzipped.status).toBe(200);
  });

  it('_entities with an unknown __typename on a subgraph is a plain validation error', async () => {
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...isolatedEnv() });
    const subgraph = await startSubgraphServer(config, 'auth');
    try {
      const res = await request(subgraph.url, 'POST', '/graphql', {
        body: {
          query: 'query ($r: [_Any!]!) { _entities(representations: $r) { __typename } }',
          variables: { r: [{ __typename: 'Nope', id: '1' }] },
        },
      });
      expect(res.body.errors[0]).toMatchObject({
        extensions: { code: 'validation_error' },
        message: expect.stringContaining('"Nope"'),
      });
      // A type it has still resolves.
      const known = await request(subgraph.url, 'POST', '/graphql', {
        body: {
          query: 'query ($r: [_Any!]!) { _entities(representations: $r) { __typename } }',
          variables: { r: [{ __typename: 'User', id: '00000000-0000-7000-8000-000000000000' }] },
        },
      });
      expect(known.body.errors?.[0]?.extensions?.code).not.toBe('internal_error');
      expect(known.status).toBeLessThan(500);
    } finally {
      await subgraph.close();
      await cleanupDatabases(config);
    }
  });
});

describe('introspection and suggestions in production', () => {
  it('refuses introspection and hides "Did you mean"', async () => {
    const schema = await graphql('{ __schema { types { name } } }');
    expect(schema.status).toBe(400);
    expect(schema.body.data).toBeUndefined();
    const typo = await graphql('{ currentSesion { id } }', { token: admin.access_token });
    expect(typo.status).toBe(400);
    expect(typo.body.errors[0].message).not.toMatch(/Did you mean/);
    expect(typo.body.errors[0].message).toContain('currentSesion');
  });

  it('is on outside production, and in production only with GRAPHQL_INTROSPECTION=true', () => {
    expect(loadConfig({}).introspection).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production' }).introspection).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' }).introspection).toBe(true);
    expect(loadConfig({ GRAPHQL_INTROSPECTION: 'false' }).introspection).toBe(false);
  });
});

describe('answers and audio are capped', () => {
  it('an answer over GRAPHQL_MAX_RESPONSE_BYTES becomes an error', async () => {
    const one = await graphql('{ baseVoices { languages } }', { token: admin.access_token });
    expect(one.status).toBe(200);
    expect(one.text.length * 30).toBeGreaterThan(1024 * 1024); // so that 30 aliases are over the cap
    const many = await graphql(`{ baseVoices { ${aliases(30, 'languages')} } }`, { token: admin.access_token });
    expect(many.status).toBe(400);
    expect(many.body.data).toBeUndefined();
    expect(many.body.errors[0]).toMatchObject({
      extensions: { code: 'validation_error', details: { limit: 'GRAPHQL_MAX_RESPONSE_BYTES', max: 1024 * 1024 } },
    });
  });

  it('audio chunks: at most GRAPHQL_MAX_AUDIO_BYTES per operation; the 200-alias attack is refused before any read', async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'chunky');
    const created = await http.post(
      '/api/v1/tts/syntheses',
      { text: 'Hello there, this is a test.', base_voice: 'f3' },
      { token: user.token },
    );
    expect(created.status).toBe(202);
    const id = created.body.id;
    for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 50))) {
      const state = (await http.get(`/api/v1/tts/syntheses/${id}`, { token: user.token })).body.state;
      if (state === 'succeeded') break;
      if (state === 'failed' || Date.now() > deadline) throw new Error(`synthesis ${state}`);
    }
    const attack = await refusedQuickly(() =>
      graphql(`query ($id: ID!) { synthesisAudio(id: $id) { ${aliases(200, 'chunk(offset: 0, length: 1048576)')} } }`, {
        token: user.token,
        variables: { id },
      }),
    );
    expectLimit(attack, 'GRAPHQL_MAX_ALIASES', 30);

    const { bytes } = (
      await graphql('query ($id: ID!) { synthesisAudio(id: $id) { bytes } }', { token: user.token, variables: { id } })
    ).body.data.synthesisAudio;
    expect(bytes).toBeGreaterThan(44); // the WAV (the default format): its header and samples
    const fit = Math.floor((512 * 1024) / bytes); // whole copies of the file within the cap
    expect(fit).toBeGreaterThanOrEqual(1);
    expect(fit).toBeLessThan(30);
    const whole = (n: number) =>
      graphql(`query ($id: ID!) { synthesisAudio(id: $id) { ${aliases(n, 'chunk(offset: 0, length: 1048576)')} } }`, {
        token: user.token,
        variables: { id },
      });
    const within = await whole(fit);
    expect(within.status).toBe(200);
    expect(Buffer.from(within.body.data.synthesisAudio.a0, 'base64')).toHaveLength(bytes);
    const over = await whole(fit + 1);
    expect(over.body.data).toBeNull();
    expect(over.body.errors[0]).toMatchObject({
      extensions: { code: 'validation_error' },
      message: expect.stringContaining('GRAPHQL_MAX_AUDIO_BYTES'),
    });
    // synthesisStream (what the speech endpoint reads) counts against the same cap, by the length asked.
    const streamed = (n: number) =>
      graphql(
        `query ($id: ID!) { ${aliases(n, 'synthesisStream(id: $id, offset: 0, length: 524288) { chunk end }')} }`,
        { token: user.token, variables: { id } },
      );
    const one = await streamed(1);
    expect(one.body.data.a0.end).toBe(true);
    expect(Buffer.from(one.body.data.a0.chunk, 'base64')).toHaveLength(bytes);
    const two = await streamed(2);
    expect(two.body.errors[0]).toMatchObject({
      extensions: { code: 'validation_error' },
      message: expect.stringContaining('GRAPHQL_MAX_AUDIO_BYTES'),
    });
    // The REST download (pieces of 512 KiB, one operation each) stays within it.
    const download = await fetch(`${server.url}/api/v1/tts/syntheses/${id}/audio`, {
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(download.status).toBe(200);
    expect((await download.arrayBuffer()).byteLength).toBe(bytes);
  });
});

describe('event streams', () => {
  const gqlStream = (token: string, query: string, variables?: Record<string, unknown>) =>
    fetch(`${server.url}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });

  it('at most EVENT_STREAMS_PER_USER per user, REST and GraphQL together: 429 with Retry-After', async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'streamy');
    for (let i = 0; i < 2; i++) {
      const s = await openStream(`${server.url}/api/v1/events`, { token: user.token });
      streams.push(s);
      expect(s.status).toBe(200);
    }
    const abort = new AbortController();
    const third = await fetch(`${server.url}/graphql/stream`, {
      method: 'POST',
      signal: abort.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${user.token}`,
      },
      body: JSON.stringify({ query: 'subscription { events { seq } }' }),
    });
    expect(third.status).toBe(200);
    const rest = await openStream(`${server.url}/api/v1/events`, { token: user.token });
    expect(rest.status).toBe(429);
    expect(rest.body.error).toBe('rate_limit_exceeded');
    expect(Number(rest.headers.get('retry-after'))).toBeGreaterThan(0);
    const gql = await gqlStream(user.token, 'subscription { events { seq } }');
    expect(gql.status).toBe(429);
    expect(Number(gql.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await gql.json()) as any).errors[0].extensions.code).toBe('rate_limit_exceeded');
    // Another user is not affected.
    const other = await openStream(`${server.url}/api/v1/events`, { token: admin.access_token });
    streams.push(other);
    expect(other.status).toBe(200);
    // Closing one makes room again (once the server has seen it close).
    abort.abort();
    for (const deadline = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 50))) {
      const again = await openStream(`${server.url}/api/v1/events`, { token: user.token });
      streams.push(again);
      if (again.status === 200) break;
      expect(again.status).toBe(429);
      if (Date.now() > deadline) throw new Error('a closed stream was never released');
    }
  });

  it('a resume position past the end of the log: 400 on REST (header and query) and GraphQL', async () => {
    const header = await openStream(`${server.url}/api/v1/events`, {
      token: admin.access_token,
      lastEventId: '999999999',
    });
    expect(header.status).toBe(400);
    expect(header.body.error).toBe('validation_error');
    const query = await openStream(`${server.url}/api/v1/events?last_event_id=999999999`, {
      token: admin.access_token,
    });
    expect(query.status).toBe(400);
    const gql = await gqlStream(admin.access_token, 'subscription ($after: ID) { events(after: $after) { seq } }', {
      after: '999999999',
    });
    expect(gql.status).toBe(400);
    expect(((await gql.json()) as any).errors[0].extensions.code).toBe('validation_error');
    // The newest position itself is a valid place to resume from.
    const log = await EventLog.open(server.config);
    const { lastSeq } = await log.position().finally(() => log.close());
    const atHead = await openStream(`${server.url}/api/v1/events`, {
      token: admin.access_token,
      lastEventId: String(lastSeq),
    });
    streams.push(atHead);
    expect(atHead.status).toBe(200);
  });

  it('ends when the access token expires, telling the client to reconnect with a fresh token (REST and GraphQL)', async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'expiring');
    const claims = decode(user.token);
    const signer = new TokenSigner(loadKeys(server.config), server.config.JWT_ISSUER);
    const shortLived = () =>
      signer.sign(
        { userId: claims.sub, sessionId: claims.sid, roles: claims.roles, scopes: claims.scopes },
        'access',
        2,
      ).token;

    const rest = await openStream(`${server.url}/api/v1/events`, { token: shortLived() });
    streams.push(rest);
    expect(rest.status).toBe(200);
    const [last] = await rest.waitFor((f) => f.event === 'error', 1, 15_000);
    expect(last.data).toMatchObject({ error: 'unauthorized', message: expect.stringContaining('fresh token') });
    await rest.ended;

    const gql = await gqlStream(shortLived(), 'subscription { events { seq } }');
    expect(gql.status).toBe(200);
    const text = await gql.text(); // the server ends the stream
    const next = JSON.parse(/event: next\ndata: (.*)/.exec(text)![1]);
    expect(next.errors[0]).toMatchObject({
      extensions: { code: 'unauthorized' },
      message: expect.stringContaining('fresh token'),
    });
    expect(text).toContain('event: complete');
  });
});

describe('the access log', () => {
  it('keeps the query string of GraphQL GET requests out (it carries operations and their variables)', async () => {
    const lines: any[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(chunk.toString())), done()) });
    const app = createBaseApp({
      config: loadConfig({ LOG_LEVEL: 'debug' }),
      logger: pino({ level: 'debug' }, sink),
      checks: async () => ({}),
    });
    app.get(['/graphql', '/other'], (_req, res) => void res.json({}));
    const http = await listen(app, 0, '127.0.0.1');
    try {
      const secret = encodeURIComponent(
        'mutation { login(username: "a", password: "hunter2 secret") { accessToken } }',
      );
      await fetch(`${http.url}/graphql?query=${secret}&variables=%7B%22p%22%3A%22hunter3%22%7D`);
      await fetch(`${http.url}/other?kept=1`);
      const logged = (path: string) => lines.find((l) => l.req?.url?.startsWith(path));
      for (let i = 0; i < 100 && !(logged('/graphql') && logged('/other')); i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(logged('/graphql').req.url).toBe('/graphql');
      expect(JSON.stringify(lines)).not.toMatch(/hunter/);
      expect(logged('/other').req.url).toBe('/other?kept=1');
    } finally {
      await http.close(1000);
    }
  });
});
