// Voice updates (PATCH /api/v1/tts/voices/{id} and updateVoice) with optimistic locking, on
// SQLite and on MySQL: the rules of creation, ?version and If-Match, stale versions, concurrent
// updates, the voice.updated event, and syntheses keeping the settings they were queued with.
import { get } from 'node:http';
import { api, createUserAndLogin, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { openStream } from '../helpers/sse';

let server: TestServer;
let http: ReturnType<typeof api>;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  http = api(server.url);
  token = (await login(server.url, ADMIN)).access_token;
});
afterAll(() => server.close());

let counter = 0;
const uniqueName = (prefix = 'voice') => `${prefix} ${++counter}`;

async function createVoice(body: Record<string, unknown> = {}, as = token): Promise<string> {
  const res = await http.post('/api/v1/tts/voices', { name: uniqueName(), base_voice: 'f3', ...body }, { token: as });
  expect(res.status).toBe(202);
  return res.body.id;
}

const patch = (id: string, body: unknown, opts: { version?: number | string; ifMatch?: string; as?: string } = {}) =>
  fetch(`${server.url}/api/v1/tts/voices/${id}${opts.version !== undefined ? `?version=${opts.version}` : ''}`, {
    method: 'PATCH',
    headers: {
      authorization: `Bearer ${opts.as ?? token}`,
      'content-type': 'application/json',
      ...(opts.ifMatch !== undefined ? { 'if-match': opts.ifMatch } : {}),
    },
    body: JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, headers: res.headers, body: (await res.json()) as any }));

const read = async (id: string) => (await http.get(`/api/v1/tts/voices/${id}`, { token })).body;

describe('PATCH /api/v1/tts/voices/{id}', () => {
  it('changes the given fields only, answers 202 with Location and the new ETag, and adds 1 to the version', async () => {
    const id = await createVoice({ description: 'before', voice_blend: 'f3+m3', language: 'en-gb', speed: 1.5 });
    const before = await read(id);
    const name = uniqueName('renamed');
    const res = await patch(id, { name: `  ${name} `, speed: 0.25 }, { version: 1 });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id, message: expect.any(String) });
    expect(res.headers.get('location')).toBe(`/api/v1/tts/voices/${id}`);
    expect(res.headers.get('etag')).toBe('"2"');
    const after = await read(id);
    expect(after).toEqual({ ...before, name, speed: 0.25, version: 2, updated_at: expect.any(String) });
    expect(Date.parse(after.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
  });

  it('clears description and voice_blend with null, and stores names as the catalog spells them', async () => {
    const id = await createVoice({ description: 'words', voice_blend: 'f3(2)+m3' });
    expect((await patch(id, { description: null, voice_blend: null }, { version: 1 })).status).toBe(202);
    expect(await read(id)).toMatchObject({ description: null, voice_blend: null, version: 2 });
    expect(
      (await patch(id, { base_voice: 'M3', voice_blend: 'F1(3)+m3(1)', language: 'DE' }, { version: 2 })).status,
    ).toBe(202);
    expect(await read(id)).toMatchObject({ base_voice: 'm3', voice_blend: 'f1(3)+m3', language: 'de', version: 3 });
  });

  it('takes the version from If-Match (the ETag of GET) as well', async () => {
    const id = await createVoice();
    const get = await http.get(`/api/v1/tts/voices/${id}`, { token });
    expect(get.headers.get('etag')).toBe('"1"');
    const res = await patch(id, { description: 'by If-Match' }, { ifMatch: get.headers.get('etag')! });
    expect(res.status).toBe(202);
    expect((await patch(id, { description: 'both agree' }, { version: 2, ifMatch: '"2"' })).status).toBe(202);
    expect(await read(id)).toMatchObject({ description: 'both agree', version: 3 });
  });

  it('GET answers If-None-Match of the current version with 304; other JSON answers carry no hashed ETag', async () => {
    // node:http, not fetch: fetch adds Cache-Control: no-cache to a conditional request.
    const conditional = (id: string, etag: string) =>
      new Promise<{ status: number; etag: unknown }>((resolve, reject) => {
        get(
          `${server.url}/api/v1/tts/voices/${id}`,
          { headers: { authorization: `Bearer ${token}`, 'if-none-match': etag } },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode!, etag: res.headers.etag }));
          },
        ).on('error', reject);
      });
    const id = await createVoice();
    expect(await conditional(id, '"1"')).toEqual({ status: 304, etag: '"1"' });
    await patch(id, { description: 'moved on' }, { version: 1 });
    expect(await conditional(id, '"1"')).toEqual({ status: 200, etag: '"2"' });
    const list = await http.get('/api/v1/tts/voices', { token });
    expect(list.status).toBe(200);
    expect(list.headers.get('etag')).toBeNull();
  });

  it.each([
    [{ speed: 2 }, {}, ['version']],
    [{ speed: 2 }, { version: 0 }, ['version']],
    [{ speed: 2 }, { version: 'x' }, ['version']],
    [{ speed: 2 }, { ifMatch: 'W/"x"' }, ['if_match']],
    [{ speed: 2 }, { version: 1, ifMatch: '"2"' }, ['version']],
    [{}, { version: 1 }, ['body']],
    [{ name: '  ' }, { version: 1 }, ['name']],
    [{ name: null }, { version: 1 }, ['name']],
    [{ name: 'x'.repeat(101) }, { version: 1 }, ['name']],
    [{ speed: 0.2 }, { version: 1 }, ['speed']],
    [{ speed: 4.01 }, { version: 1 }, ['speed']],
    [{ speed: null }, { version: 1 }, ['speed']],
    [{ base_voice: 'nobody' }, { version: 1 }, ['base_voice']],
    [{ base_voice: null }, { version: 1 }, ['base_voice']],
    [{ voice_blend: 'f3(0)' }, { version: 1 }, ['voice_blend']],
    [{ language: 'xx-nowhere' }, { version: 1 }, ['language']],
    [{ description: 'd'.repeat(1001) }, { version: 1 }, ['description']],
  ])('%j with %j is a validation_error naming %j, and changes nothing', async (body, opts, fields) => {
    const id = await createVoice();
    const res = await patch(id, body, opts);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(Object.keys(res.body.details).sort()).toEqual(fields);
    expect((await read(id)).version).toBe(1);
  });

  it('a stale version is a conflict with current_version; a name you use for another voice is a conflict', async () => {
    const id = await createVoice();
    expect((await patch(id, { speed: 2 }, { version: 1 })).status).toBe(202);
    const stale = await patch(id, { speed: 3 }, { version: 1 });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ error: 'conflict', details: { current_version: 2 } });
    const ahead = await patch(id, { speed: 3 }, { ifMatch: '"7"' });
    expect(ahead.body).toMatchObject({ error: 'conflict', details: { current_version: 2 } });

    const other = await createVoice({ name: 'Taken Name' });
    const taken = await patch(id, { name: 'taken name' }, { version: 2 });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({
      error: 'conflict',
      message: 'You have a voice with this name already.',
      details: { name: ['is taken by another of your voices'] },
    });
    // A stale version is refused before the changes are checked: the caller must read again first.
    const staleAndBad = await patch(id, { base_voice: 'no such voice' }, { version: 1 });
    expect(staleAndBad.body).toMatchObject({ error: 'conflict', details: { current_version: 2 } });
    expect(await read(id)).toMatchObject({ speed: 2, version: 2 });
    expect((await read(other)).name).toBe('Taken Name');
  });

  it('an unknown voice, or one of another user, is not_found', async () => {
    const id = await createVoice();
    const stranger = await createUserAndLogin(server.url, token, 'patch-stranger');
    expect((await patch(id, { speed: 2 }, { version: 1, as: stranger.token })).status).toBe(404);
    expect((await patch('01a2076b-0000-7000-8000-000000000000', { speed: 2 }, { version: 1 })).status).toBe(404);
    expect((await patch('not-a-uuid', { speed: 2 }, { version: 1 })).status).toBe(400);
    expect((await read(id)).speed).toBe(1);
  });

  it('of 20 concurrent updates at one version exactly one wins; the others get conflict with the new version', async () => {
    const id = await createVoice();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => patch(id, { description: `writer ${i}` }, { version: 1 })),
    );
    const won = results.filter((r) => r.status === 202);
    expect(won).toHaveLength(1);
    const lost = results.filter((r) => r.status !== 202);
    expect(lost.map((r) => [r.status, r.body.details?.current_version])).toEqual(lost.map(() => [409, 2]));
    const winner = results.indexOf(won[0]);
    expect(await read(id)).toMatchObject({ description: `writer ${winner}`, version: 2 });
  });

  it('records voice.updated with the changed fields and their former values', async () => {
    const stream = await openStream(`${server.url}/api/v1/events?types=voice.updated`, { token });
    try {
      const id = await createVoice({ speed: 1, language: 'en-us' });
      expect((await patch(id, { speed: 3.5, language: 'en-us', description: 'new' }, { version: 1 })).status).toBe(202);
      const [frame] = await stream.waitFor((f) => f.data.id === id, 1, 20_000);
      expect(frame.event).toBe('voice.updated');
      expect(frame.data).toMatchObject({
        type: 'voice.updated',
        voice_id: id,
        version: 2,
        speed: 3.5,
        changed: { speed: 3.5, description: 'new' },
        previous: { speed: 1, description: null },
      });
      // language was given but did not change, so it is not among the changes.
      expect(Object.keys(frame.data.changed).sort()).toEqual(['description', 'speed']);
    } finally {
      stream.close();
    }
  });

  it('a synthesis queued before the update keeps the settings it was queued with', async () => {
    const id = await createVoice({ base_voice: 'm1', speed: 1 });
    const queued = await http.post('/api/v1/tts/syntheses', { text: 'Kept as it was.', voice_id: id }, { token });
    expect(queued.status).toBe(202);
    expect((await patch(id, { base_voice: 'f5', speed: 2.5 }, { version: 1 })).status).toBe(202);
    const synthesis = (await http.get(`/api/v1/tts/syntheses/${queued.body.id}`, { token })).body;
    expect(synthesis).toMatchObject({ voice_id: id, base_voice: 'm1', speed: 1 });
  });
});

describe('updateVoice over GraphQL', () => {
  it('changes the given arguments, leaves out the others, clears with null, and checks the version', async () => {
    const id = await createVoice({ description: 'gql', voice_blend: 'f3+m1' });
    const mutation =
      'mutation ($id: ID!, $v: Int!, $s: Float, $d: String) { updateVoice(id: $id, version: $v, speed: $s, description: $d) { version speed description voiceBlend } }';
    const res = await http.graphql(mutation, { id, v: 1, s: 0.5 }, token);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.updateVoice).toEqual({ version: 2, speed: 0.5, description: 'gql', voiceBlend: 'f3+m1' });
    const cleared = await http.graphql(mutation, { id, v: 2, d: null }, token);
    expect(cleared.body.data.updateVoice).toEqual({ version: 3, speed: 0.5, description: null, voiceBlend: 'f3+m1' });
    const stale = await http.graphql(mutation, { id, v: 2, s: 1 }, token);
    expect(stale.body.errors[0].extensions).toMatchObject({ code: 'conflict', details: { currentVersion: 3 } });
    const bad = await http.graphql(mutation, { id, v: 3, s: 9 }, token);
    expect(bad.body.errors[0].extensions).toMatchObject({
      code: 'validation_error',
      details: { speed: expect.any(Array) },
    });
    // GraphQL has no request schema in front: the service itself refuses nothing to change and cleared required fields.
    const nothing = await http.graphql(mutation, { id, v: 3 }, token);
    expect(nothing.body.errors[0].extensions).toEqual({
      code: 'validation_error',
      details: { body: [expect.stringMatching(/^give at least one of name, /)] },
    });
    const named =
      'mutation ($id: ID!, $v: Int!, $n: String, $l: String) { updateVoice(id: $id, version: $v, name: $n, language: $l) { version } }';
    const nulls = await http.graphql(named, { id, v: 3, n: null, l: null }, token);
    expect(nulls.body.errors[0].extensions).toEqual({
      code: 'validation_error',
      details: { name: ['cannot be cleared (null)'], language: ['cannot be cleared (null)'] },
    });
    expect(await read(id)).toMatchObject({ version: 3, speed: 0.5 });
  });
});
