// The TTS voices through the REST facade and GraphQL, on SQLite and on MySQL.
import { api, createUserAndLogin, ISO_DATE, login, UUID } from '../helpers/http';
import { EventLog, loggedFor, openLog, untilLogged } from '../helpers/event-log';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

let server: TestServer;
let http: ReturnType<typeof api>;
let token: string;
let userId: string;
let log: EventLog;

beforeAll(async () => {
  server = await startTestServer();
  log = await openLog(server.config);
  http = api(server.url);
  token = (await login(server.url, ADMIN)).access_token;
  userId = (await http.get('/api/v1/auth/session', { token })).body.user_id;
});
afterAll(async () => {
  await log?.close();
  await server.close();
});

let counter = 0;
const uniqueName = (prefix = 'voice') => `${prefix} ${++counter}`;

async function createVoice(body: Record<string, unknown>, as = token) {
  const res = await http.post('/api/v1/tts/voices', body, { token: as });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

describe('GET /api/v1/tts/base-voices', () => {
  it("lists the engine's voice variants with languages, gender and a description", async () => {
    const res = await http.get('/api/v1/tts/base-voices', { token });
    expect(res.status).toBe(200);
    const byName = new Map((res.body.items as any[]).map((v) => [v.name, v]));
    for (const name of ['f1', 'f5', 'm1', 'm7', 'Annie']) expect(byName.has(name)).toBe(true);
    expect(byName.get('f3')).toEqual({
      name: 'f3',
      display_name: 'female3',
      gender: 'female',
      languages: expect.arrayContaining(['en-us', 'de', 'fr']),
      description: expect.stringContaining('female3'),
    });
    expect(byName.get('m3').gender).toBe('male');
  });

  it('is public: the catalogue needs no token (public in the tts module definition)', async () => {
    const res = await http.get('/api/v1/tts/base-voices');
    expect(res.status).toBe(200);
    expect(res.body.items.map((v: { name: string }) => v.name)).toContain('f3');
  });
});

describe('POST /api/v1/tts/voices', () => {
  it('answers 202 with the id and Location; the voice reads back with every field and version 1', async () => {
    const name = uniqueName();
    const res = await http.post(
      '/api/v1/tts/voices',
      { name, base_voice: 'f3', description: 'calm', voice_blend: 'f3(2)+m3(1)', language: 'en-GB', speed: 1.25 },
      { token },
    );
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: expect.stringMatching(UUID), message: expect.any(String) });
    expect(res.headers.get('location')).toBe(`/api/v1/tts/voices/${res.body.id}`);

    const read = await http.get(res.headers.get('location')!, { token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      id: res.body.id,
      name,
      description: 'calm',
      base_voice: 'f3',
      voice_blend: 'f3(2)+m3',
      language: 'en-gb',
      speed: 1.25,
      version: 1,
      owner_id: userId,
      created_at: expect.stringMatching(ISO_DATE),
      updated_at: expect.stringMatching(ISO_DATE),
    });
  });

  it('fills the defaults: language en-us, speed 1.0, no description or blend', async () => {
    const id = await createVoice({ name: uniqueName(), base_voice: 'm1' });
    const read = await http.get(`/api/v1/tts/voices/${id}`, { token });
    expect(read.body).toMatchObject({ description: null, voice_blend: null, language: 'en-us', speed: 1 });
  });

  it.each([
    [{ base_voice: 'f3' }, ['name']],
    [{ name: '   ', base_voice: 'f3' }, ['name']],
    [{ name: 'x'.repeat(101), base_voice: 'f3' }, ['name']],
    [{ name: 'ok' }, ['base_voice']],
    [{ name: 'ok', base_voice: 'not-a-voice' }, ['base_voice']],
    [{ name: 'ok', base_voice: 'f3', voice_blend: 'f3++m3' }, ['voice_blend']],
    [{ name: 'ok', base_voice: 'f3', voice_blend: 'f3(0)+m3' }, ['voice_blend']],
    [{ name: 'ok', base_voice: 'f3', voice_blend: 'f3(-1)' }, ['voice_blend']],
    [{ name: 'ok', base_voice: 'f3', voice_blend: 'f3+nobody' }, ['voice_blend']],
    [{ name: 'ok', base_voice: 'f3', language: 'xx-nowhere' }, ['language']],
    [{ name: 'ok', base_voice: 'f3', speed: 0.2 }, ['speed']],
    [{ name: 'ok', base_voice: 'f3', speed: 4.5 }, ['speed']],
    [{ name: 'ok', base_voice: 'f3', speed: 'fast' }, ['speed']],
    [{ name: 'ok', base_voice: 'f3', description: 'd'.repeat(1001) }, ['description']],
    // The shape is checked first; the catalog only once the shape is right.
    [{ name: 42, base_voice: 'nope', speed: 9 }, ['name', 'speed']],
    // The catalog checks (after the shape is right) name every field they refuse.
    [
      { name: 'ok', base_voice: 'nope', voice_blend: 'nope(2)+f1', language: 'xx' },
      ['base_voice', 'language', 'voice_blend'],
    ],
    // A blend that is not name(weight)+… is a shape error, found before the catalog is asked.
    [{ name: 'ok', base_voice: 'f1', voice_blend: '+' }, ['voice_blend']],
    [{ name: 'ok', base_voice: 'f1', voice_blend: 'f1(0)+m1(101)' }, ['voice_blend']],
  ])('%j is a validation_error naming %j', async (body, fields) => {
    const res = await http.post('/api/v1/tts/voices', body, { token });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(Object.keys(res.body.details).sort()).toEqual(fields);
  });

  it('a name you already use, in any case, is a conflict', async () => {
    const name = uniqueName('Twice');
    await createVoice({ name, base_voice: 'f1' });
    const again = await http.post(
      '/api/v1/tts/voices',
      { name: `  ${name.toUpperCase()} `, base_voice: 'f2' },
      { token },
    );
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      error: 'conflict',
      message: 'You have a voice with this name already.',
      details: { name: ['is taken by another of your voices'] },
    });
  });

  it('stores SQL metacharacters and a long unicode description exactly', async () => {
    const name = `Robert'); DROP TABLE voices;-- "%_\\ ${counter++}`;
    const description = 'Zürich 東京 🎙️ — ñ '.repeat(50).slice(0, 1000);
    const id = await createVoice({ name, base_voice: 'f4', description });
    const read = await http.get(`/api/v1/tts/voices/${id}`, { token });
    expect(read.body.name).toBe(name);
    expect(read.body.description).toBe(description);
  });

  it('30 concurrent creates get 30 distinct ids, all readable', async () => {
    const ids = await Promise.all(
      Array.from({ length: 30 }, (_, i) => createVoice({ name: `burst ${i}`, base_voice: 'm2' })),
    );
    expect(new Set(ids).size).toBe(30);
    const reads = await Promise.all(ids.map((id) => http.get(`/api/v1/tts/voices/${id}`, { token })));
    expect(reads.map((r) => r.status)).toEqual(ids.map(() => 200));
  });
});

describe('GET /api/v1/tts/voices', () => {
  it('pages through exactly your voices, oldest first', async () => {
    const other = await createUserAndLogin(server.url, token, 'pager');
    const mine = [];
    for (let i = 0; i < 5; i++) mine.push(await createVoice({ name: `page ${i}`, base_voice: 'f1' }, other.token));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await http.get(`/api/v1/tts/voices?limit=2${cursor ? `&cursor=${cursor}` : ''}`, {
        token: other.token,
      });
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.items.map((v: any) => v.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(mine);
    // A page that ends exactly at the last voice has no next page (not a cursor to an empty one).
    const whole = await http.get('/api/v1/tts/voices?limit=5', { token: other.token });
    expect(whole.body.items.map((v: any) => v.id)).toEqual(mine);
    expect(whole.body.next_cursor).toBeNull();
  });

  it('rejects a bad limit or cursor', async () => {
    expect((await http.get('/api/v1/tts/voices?limit=0', { token })).body.details).toHaveProperty('limit');
    expect((await http.get('/api/v1/tts/voices?limit=101', { token })).status).toBe(400);
    const bad = await http.get('/api/v1/tts/voices?cursor=not-a-cursor', { token });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toHaveProperty('cursor');
  });
});

describe('DELETE /api/v1/tts/voices/{id}', () => {
  it('deletes at the right version: 202 with Location, then the voice is gone', async () => {
    const id = await createVoice({ name: uniqueName(), base_voice: 'f2' });
    const res = await http.delete(`/api/v1/tts/voices/${id}?version=1`, { token });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id, message: expect.any(String) });
    expect(res.headers.get('location')).toBe(`/api/v1/tts/voices/${id}`);
    expect((await http.get(`/api/v1/tts/voices/${id}`, { token })).status).toBe(404);
    const again = await http.delete(`/api/v1/tts/voices/${id}?version=1`, { token });
    expect(again.status).toBe(404);
    expect(again.body.error).toBe('not_found');
  });

  it('a stale version is a conflict with current_version, and the voice stays', async () => {
    const id = await createVoice({ name: uniqueName(), base_voice: 'f2' });
    const res = await http.delete(`/api/v1/tts/voices/${id}?version=2`, { token });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'conflict', details: { current_version: 1 } });
    expect((await http.get(`/api/v1/tts/voices/${id}`, { token })).body.version).toBe(1);
  });

  it.each([
    ['not-a-uuid?version=1', ['voiceId']],
    ['01a2076b-0000-7000-8000-000000000000', ['version']],
    ['01a2076b-0000-7000-8000-000000000000?version=0', ['version']],
    ['01a2076b-0000-7000-8000-000000000000?version=1.5', ['version']],
    ['01a2076b-0000-7000-8000-000000000000?version=abc', ['version']],
  ])('%s is a validation_error naming %j', async (path, fields) => {
    const res = await http.delete(`/api/v1/tts/voices/${path}`, { token });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.details)).toEqual(fields);
  });

  it('an unknown id is not_found', async () => {
    const res = await http.delete('/api/v1/tts/voices/01a2076b-0000-7000-8000-000000000000?version=1', { token });
    expect(res.status).toBe(404);
  });

  it('of 20 concurrent deletes with the right version exactly one wins', async () => {
    const id = await createVoice({ name: uniqueName('contended'), base_voice: 'm4' });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => http.delete(`/api/v1/tts/voices/${id}?version=1`, { token })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 202 && s !== 404 && s !== 409)).toEqual([]);
    expect((await http.get(`/api/v1/tts/voices/${id}`, { token })).status).toBe(404);
    // A voice written after the deletes is relayed after their events: then count them.
    const sentinel = await createVoice({ name: uniqueName('sentinel'), base_voice: 'm4' });
    await untilLogged(log, sentinel, 'voice.created');
    const deleted = await loggedFor(log, id, 'voice.deleted');
    expect(deleted).toHaveLength(1);
    expect(JSON.parse(deleted[0].payload)).toMatchObject({ voice_id: id, version: 1 });
  });
});

describe('ownership', () => {
  it('another user cannot see, list or delete your voice', async () => {
    const id = await createVoice({ name: uniqueName('private'), base_voice: 'f5' });
    const other = await createUserAndLogin(server.url, token, 'stranger');
    expect((await http.get(`/api/v1/tts/voices/${id}`, { token: other.token })).status).toBe(404);
    expect((await http.get('/api/v1/tts/voices', { token: other.token })).body.items).toEqual([]);
    const del = await http.delete(`/api/v1/tts/voices/${id}?version=1`, { token: other.token });
    expect(del.status).toBe(404);
    expect((await http.get(`/api/v1/tts/voices/${id}`, { token })).status).toBe(200);
    // The same name is free for another user.
    const name = (await http.get(`/api/v1/tts/voices/${id}`, { token })).body.name;
    await createVoice({ name, base_voice: 'f5' }, other.token);
  });
});

describe('TTS over GraphQL', () => {
  it('createVoice, voice with its owner resolved by the auth subgraph, voices, deleteVoice', async () => {
    const created = await http.graphql(
      'mutation ($n: String!) { createVoice(name: $n, baseVoice: "m3", speed: 0.5) { id version speed owner { id username } } }',
      { n: uniqueName('gql') },
      token,
    );
    expect(created.body.errors).toBeUndefined();
    const voice = created.body.data.createVoice;
    expect(voice).toMatchObject({ version: 1, speed: 0.5, owner: { id: userId, username: ADMIN.username } });

    const read = await http.graphql(
      'query ($id: ID!) { voice(id: $id) { id baseVoice language } voices(first: 100) { items { id } } }',
      { id: voice.id },
      token,
    );
    expect(read.body.data.voice).toEqual({ id: voice.id, baseVoice: 'm3', language: 'en-us' });
    expect(read.body.data.voices.items).toContainEqual({ id: voice.id });

    const stale = await http.graphql(
      'mutation ($id: ID!) { deleteVoice(id: $id, version: 7) { id } }',
      { id: voice.id },
      token,
    );
    expect(stale.body.errors[0].extensions).toMatchObject({ code: 'conflict', details: { currentVersion: 1 } });
    const deleted = await http.graphql(
      'mutation ($id: ID!) { deleteVoice(id: $id, version: 1) { id } }',
      { id: voice.id },
      token,
    );
    expect(deleted.body.data.deleteVoice).toEqual({ id: voice.id });
  });

  it('baseVoices, and validation errors per argument', async () => {
    const res = await http.graphql('{ baseVoices { name gender } }', {}, token);
    expect(res.body.data.baseVoices).toContainEqual({ name: 'm3', gender: 'male' });
    const bad = await http.graphql('mutation { createVoice(name: "", baseVoice: "f1", speed: 10) { id } }', {}, token);
    expect(bad.body.errors[0].extensions.code).toBe('validation_error');
    expect(Object.keys(bad.body.errors[0].extensions.details).sort()).toEqual(['name', 'speed']);
    expect((await http.graphql('{ voices { items { id } } }')).body.errors[0].extensions.code).toBe('unauthorized');
  });
});

describe('the voice quota (VOICES_PER_USER)', () => {
  let limited: TestServer;
  beforeAll(async () => (limited = await startTestServer({ VOICES_PER_USER: '3' })));
  afterAll(() => limited.close());

  it('keeps exactly the limit of 10 concurrent creates; the rest are 409 with details.limit, until one is deleted', async () => {
    const adminToken = (await login(limited.url, ADMIN)).access_token;
    const user = await createUserAndLogin(limited.url, adminToken, 'collector');
    const client = api(limited.url);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        client.post('/api/v1/tts/voices', { name: `mine ${i}`, base_voice: 'f3' }, { token: user.token }),
      ),
    );
    expect(answers.filter((r) => r.status === 202)).toHaveLength(3);
    for (const res of answers.filter((r) => r.status !== 202)) {
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        error: 'conflict',
        message: expect.stringContaining('3'),
        details: { limit: 'VOICES_PER_USER', max: 3, count: 3 },
      });
    }
    const gql = await client.graphql(
      'mutation { createVoice(name: "one more", baseVoice: "f3") { id } }',
      undefined,
      user.token,
    );
    expect(gql.body.errors?.[0]?.extensions).toMatchObject({
      code: 'conflict',
      details: { limit: 'VOICES_PER_USER', max: 3, count: 3 },
    });
    // Another user has a quota of their own; a delete frees a place.
    expect(
      (await client.post('/api/v1/tts/voices', { name: 'theirs', base_voice: 'f3' }, { token: adminToken })).status,
    ).toBe(202);
    const [kept] = (await client.get('/api/v1/tts/voices', { token: user.token })).body.items;
    expect((await client.delete(`/api/v1/tts/voices/${kept.id}?version=1`, { token: user.token })).status).toBe(202);
    expect(
      (await client.post('/api/v1/tts/voices', { name: 'again', base_voice: 'f3' }, { token: user.token })).status,
    ).toBe(202);
  });
});
