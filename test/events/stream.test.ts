// The event stream: REST SSE at /api/v1/events and GraphQL over SSE at /graphql/stream.
import { startServer } from '../../bin/all-in-one';
import { EventLog } from '../../lib/event-log';
import { api, createUserAndLogin, ISO_DATE, login, UUID } from '../helpers/http';
import { ADMIN, startTestServer, TEST_DB, TestServer } from '../helpers/server';
import { Frame, openStream, OpenStream } from '../helpers/sse';
import { until } from '../helpers/wait';

let server: TestServer;
let http: ReturnType<typeof api>;
let admin: Awaited<ReturnType<typeof login>>;
const streams: OpenStream[] = [];

beforeAll(async () => {
  server = await startTestServer({ EVENT_HEARTBEAT_SECONDS: '1' });
  http = api(server.url);
  admin = await login(server.url, ADMIN);
});
afterEach(() => streams.splice(0).forEach((s) => s.close()));
afterAll(() => server.close());

async function stream(token: string, query = '', lastEventId?: string, base = server.url) {
  const s = await openStream(`${base}/api/v1/events${query}`, { token, lastEventId });
  streams.push(s);
  return s;
}
const ofType = (type: string) => (f: Frame) => f.event === type;

describe('GET /api/v1/events', () => {
  it("delivers each command's event with id, type and the resource's fields, and only the caller's", async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'streamer');
    const other = await createUserAndLogin(server.url, admin.access_token, 'bystander');
    const s = await stream(user.token);
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);

    const tokens = await login(server.url, { username: user.username, password: user.password });
    const refreshed = await http.post('/api/v1/auth/refresh', { refresh_token: tokens.refresh_token });
    const created = await http.post(
      '/api/v1/tts/voices',
      { name: 'Streamed', base_voice: 'f1' },
      { token: user.token },
    );
    await http.post('/api/v1/tts/voices', { name: 'Not yours', base_voice: 'f1' }, { token: other.token });
    await http.delete(`/api/v1/tts/voices/${created.body.id}?version=1`, { token: user.token });
    await http.post('/api/v1/auth/logout', undefined, { token: refreshed.body.access_token });

    const [sessionCreated] = await s.waitFor(ofType('session.created'));
    expect(sessionCreated.data).toMatchObject({
      type: 'session.created',
      id: tokens.session_id,
      occurred_at: expect.stringMatching(ISO_DATE),
      user_id: user.id,
    });
    await s.waitFor(ofType('session.refreshed'));
    const [voiceCreated] = await s.waitFor(ofType('voice.created'));
    expect(voiceCreated.data).toMatchObject({
      id: created.body.id,
      name: 'Streamed',
      base_voice: 'f1',
      version: 1,
      event_id: expect.stringMatching(UUID),
    });
    const [voiceDeleted] = await s.waitFor(ofType('voice.deleted'));
    expect(voiceDeleted.data).toMatchObject({ id: created.body.id, version: 1 });
    const [revoked] = await s.waitFor(ofType('session.revoked'));
    expect(revoked.data).toMatchObject({ id: tokens.session_id, reason: 'logout' });

    // Positions grow; nobody else's events are in the stream.
    const ids = s.frames.map((f) => Number(f.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(s.frames.every((f) => f.data.user_id === user.id)).toBe(true);
    expect(s.frames.map((f) => f.data.name)).not.toContain('Not yours');
  });

  it('keeps an idle stream open with comment lines', async () => {
    const s = await stream(admin.access_token);
    // Waits for the comment itself (EVENT_HEARTBEAT_SECONDS=1 here), not for a time.
    await until(() => /^: keep-alive$/m.test(s.text()), 'a keep-alive comment', 10_000);
    expect(s.frames).toEqual([]);
  });

  it('replays exactly the missed events after Last-Event-ID, then goes on live', async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'resumer');
    const first = await stream(user.token);
    await http.post('/api/v1/tts/voices', { name: 'before', base_voice: 'f2' }, { token: user.token });
    const [seen] = await first.waitFor(ofType('voice.created'));
    first.close();

    const missed = [];
    for (const name of ['missed 1', 'missed 2', 'missed 3'])
      missed.push((await http.post('/api/v1/tts/voices', { name, base_voice: 'f2' }, { token: user.token })).body.id);
    // More voices are written while the stream resumes: the hand-off from the replay to live
    // events happens under concurrent writes.
    const create = (name: string) => http.post('/api/v1/tts/voices', { name, base_voice: 'f2' }, { token: user.token });
    // Written one after another from before the resume until three after it has opened.
    const during: string[] = [];
    let opened = false;
    const writing = (async () => {
      for (let i = 1, after = 0; after < 3; i++, after += opened ? 1 : 0) {
        during.push(`during ${i}`);
        await create(`during ${i}`);
      }
    })();
    const resumed = await stream(user.token, '', seen.id);
    opened = true;
    await writing;
    // The last one written: once it is here, anything doubled or missing would be too.
    await create('sentinel');
    const names = async (s: OpenStream) => {
      await s.waitFor((f) => f.data.name === 'sentinel');
      const frames = s.frames.filter(ofType('voice.created'));
      const positions = frames.map((f) => Number(f.id));
      expect(positions).toEqual([...new Set(positions)].sort((a, b) => a - b)); // rising, no duplicate
      expect(positions[0]).toBeGreaterThan(Number(seen.id));
      return frames.map((f) => f.data.name);
    };
    const got = await names(resumed);
    expect(got.slice(0, 3)).toEqual(['missed 1', 'missed 2', 'missed 3']);
    expect(got.slice(3, -1)).toEqual(during); // one writer: in order
    expect(got.slice(-1)).toEqual(['sentinel']);
    expect(
      resumed.frames
        .filter(ofType('voice.created'))
        .slice(0, 3)
        .map((f) => f.data.id),
    ).toEqual(missed);

    // The query parameter does the same as the header.
    const byQuery = await stream(user.token, `?last_event_id=${seen.id}&types=voice.created`);
    expect(await names(byQuery)).toEqual(got);
    expect(byQuery.frames.every(ofType('voice.created'))).toBe(true);
  });

  it('refuses a missing or bad token, a bad position, and scope=all to a non-admin', async () => {
    const none = await openStream(`${server.url}/api/v1/events`);
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('unauthorized');
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect((await openStream(`${server.url}/api/v1/events`, { token: 'garbage' })).status).toBe(401);
    expect(
      (await openStream(`${server.url}/api/v1/events?last_event_id=abc`, { token: admin.access_token })).body.error,
    ).toBe('validation_error');
    expect(
      (await openStream(`${server.url}/api/v1/events`, { token: admin.access_token, lastEventId: 'x' })).status,
    ).toBe(400);
    const user = await createUserAndLogin(server.url, admin.access_token, 'curious');
    const forbidden = await openStream(`${server.url}/api/v1/events?scope=all`, { token: user.token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe('forbidden');
  });

  it("lets an admin follow every user's events with scope=all", async () => {
    const s = await stream(admin.access_token, '?scope=all&types=voice.created');
    const user = await createUserAndLogin(server.url, admin.access_token, 'watched');
    await http.post('/api/v1/tts/voices', { name: 'watched voice', base_voice: 'm1' }, { token: user.token });
    const [frame] = await s.waitFor((f) => f.data.name === 'watched voice');
    expect(frame.data.user_id).toBe(user.id);
    expect(s.frames.every((f) => f.event === 'voice.created')).toBe(true);
  });

  it('ends when the session is revoked, and its token no longer opens one', async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'leaver');
    const s = await stream(user.token);
    await http.post('/api/v1/auth/logout', undefined, { token: user.token });
    await s.ended;
    expect(s.frames.map((f) => f.event)).toContain('session.revoked');
    const refused = await openStream(`${server.url}/api/v1/events`, { token: user.token });
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('unauthorized');
  });

  it('answers 410 resync_required to a resume from before what is kept', async () => {
    const log = await EventLog.open(server.config);
    try {
      await log.prune(new Date(Date.now() + 60_000)); // as if the retention had passed for everything so far
    } finally {
      await log.close();
    }
    const res = await openStream(`${server.url}/api/v1/events`, { token: admin.access_token, lastEventId: '1' });
    expect(res.status).toBe(410);
    expect(res.body.error).toBe('resync_required');
    // Without a position the stream opens as usual.
    expect((await stream(admin.access_token)).status).toBe(200);
  });
});

describe('streams end when the caller loses events:read or its account (issue 41 finding 6)', () => {
  const QUERY = 'subscription { events { type data } }';
  /** A /graphql/stream subscription: its raw text, and when it ends. */
  async function graphqlStream(token: string) {
    const abort = new AbortController();
    const res = await fetch(`${server.url}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: QUERY }),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    let text = '';
    const decoder = new TextDecoder();
    const ended = (async () => {
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
          text += decoder.decode(chunk, { stream: true });
      } catch {
        /* aborted */
      }
    })();
    streams.push({ close: () => abort.abort() } as OpenStream);
    return { text: () => text, ended };
  }
  const within = async <T>(promise: Promise<T>, what: string, ms = 5000) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        promise,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  };
  const setRoles = async (id: string, roles: string[]) => {
    const version = (await http.get(`/api/v1/admin/users/${id}`, { token: admin.access_token })).body.version;
    const res = await fetch(`${server.url}/api/v1/admin/users/${id}/roles?version=${version}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin.access_token}` },
      body: JSON.stringify({ roles }),
    });
    expect(res.status).toBeLessThan(300);
  };
  const keyOf = async (token: string) =>
    (await http.post('/api/v1/auth/api-keys', { name: 'streams', scopes: ['events:read', 'tts:write'] }, { token }))
      .body.key as string;

  it('a role change that takes events:read away ends REST (token and key) and GraphQL streams, with forbidden', async () => {
    const role = 'voices-without-events';
    const made = await http.post(
      '/api/v1/admin/roles',
      { name: role, scopes: ['tts:read', 'tts:write', 'account:write'] },
      { token: admin.access_token },
    );
    expect(made.status).toBeLessThan(300);
    const user = await createUserAndLogin(server.url, admin.access_token, 'loses-events');
    const key = await keyOf(user.token);
    const [byToken, byKey] = [await stream(user.token), await stream(key)];
    const graphql = await graphqlStream(user.token);
    await http.post('/api/v1/tts/voices', { name: 'before', base_voice: 'f1' }, { token: user.token });
    for (const s of [byToken, byKey]) await s.waitFor((f) => f.data.name === 'before');

    await setRoles(user.id, [role]);
    for (const [s, name] of [
      [byToken, 'the token stream'],
      [byKey, 'the key stream'],
    ] as const) {
      await within(s.ended, name);
      expect(s.frames.at(-1)).toMatchObject({ event: 'error', data: { error: 'forbidden' } });
    }
    await within(graphql.ended, 'the GraphQL stream');
    expect(graphql.text()).toMatch(/"code":"forbidden"/);
    // Nothing after the change reached any of them.
    await http.post('/api/v1/tts/voices', { name: 'after', base_voice: 'f1' }, { token: user.token });
    expect([...byToken.frames, ...byKey.frames].some((f) => f.data?.name === 'after')).toBe(false);
    expect(graphql.text()).not.toContain('"after"');
    // And it cannot open one again.
    expect((await openStream(`${server.url}/api/v1/events`, { token: user.token })).status).toBe(403);
  });

  it("disabling the owner ends a key's stream, whose session is the key", async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'disabled-key-holder');
    const key = await keyOf(user.token);
    const s = await stream(key);
    expect(s.status).toBe(200);
    const disabled = await http.post(`/api/v1/admin/users/${user.id}/disable`, undefined, {
      token: admin.access_token,
    });
    expect(disabled.status).toBe(202);
    await within(s.ended, 'the key stream');
    expect(s.frames.at(-1)).toMatchObject({ event: 'error', data: { error: 'unauthorized' } });
  });
});

describe('subscription over GraphQL-over-SSE at /graphql/stream', () => {
  it('streams events(after, types) results and refuses a request without a token', async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'gqlstreamer');
    const abort = new AbortController();
    const query =
      'subscription ($types: [String!]) { events(types: $types) { seq type resourceId userId occurredAt data } }';
    const res = await fetch(`${server.url}/graphql/stream`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${user.token}`,
      },
      body: JSON.stringify({ query, variables: { types: ['voice.created'] } }),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const created = await http.post(
      '/api/v1/tts/voices',
      { name: 'over graphql', base_voice: 'm2' },
      { token: user.token },
    );
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      if (text.includes('over graphql')) break;
    }
    abort.abort();
    const next = JSON.parse(/event: next\ndata: (.*)/.exec(text)![1]);
    expect(next.data.events).toMatchObject({
      type: 'voice.created',
      resourceId: created.body.id,
      userId: user.id,
      data: { name: 'over graphql' },
    });

    const refused = await fetch(`${server.url}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query }),
    });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as any).errors[0].extensions.code).toBe('unauthorized');
  });
});

// Several processes share one database only on MySQL; SQLite is the one-process default.
(TEST_DB === 'mysql' ? describe : describe.skip)('two instances on one database', () => {
  it('both deliver an event written through either', async () => {
    const second = await startServer(server.config);
    try {
      const user = await createUserAndLogin(server.url, admin.access_token, 'twice');
      const viaFirst = await stream(user.token);
      const viaSecond = await stream(user.token, '', undefined, second.url);
      await http.post('/api/v1/tts/voices', { name: 'written on one', base_voice: 'f1' }, { token: user.token });
      await api(second.url).post(
        '/api/v1/tts/voices',
        { name: 'written on two', base_voice: 'f1' },
        { token: user.token },
      );
      for (const s of [viaFirst, viaSecond]) {
        const frames = await s.waitFor(ofType('voice.created'), 2);
        expect(frames.map((f) => f.data.name).sort()).toEqual(['written on one', 'written on two']);
      }
      // The same positions on both: one log, whichever instance serves it.
      const positions = (s: OpenStream) => s.frames.filter(ofType('voice.created')).map((f) => f.id);
      expect(positions(viaFirst)).toEqual(positions(viaSecond));
    } finally {
      streams.splice(0).forEach((s) => s.close());
      await second.close();
    }
  });
});
