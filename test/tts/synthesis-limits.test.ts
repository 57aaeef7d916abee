// Per-user synthesis limits and cancel through the REST facade and GraphQL, on SQLite and on
// MySQL: at most SYNTHESIS_QUEUE_PER_USER queued or running however many requests race; 429
// with Retry-After beyond; DELETE cancels (queued, running) or deletes (finished, with audio).
import fs from 'node:fs';
import path from 'node:path';
import { api, createUserAndLogin, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { openStream } from '../helpers/sse';
import { until } from '../helpers/wait';
import { audioDir } from '../../subgraphs/tts/settings';

const TEXT = { text: 'Hello there, this is a short one.', base_voice: 'f3' };

describe('with no worker (jobs stay queued)', () => {
  let server: TestServer;
  let http: ReturnType<typeof api>;
  let adminToken: string;
  beforeAll(async () => {
    server = await startTestServer({ SYNTHESIS_CONCURRENCY: '0' });
    http = api(server.url);
    adminToken = (await login(server.url, ADMIN)).access_token;
  });
  afterAll(() => server.close());

  it('accepts exactly 10 of 40 concurrent requests by one user; the rest are 429 with Retry-After; others are not affected', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'eager');
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => http.post('/api/v1/tts/syntheses', TEXT, { token: user.token })),
    );
    expect(answers.filter((r) => r.status === 202)).toHaveLength(10);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused).toHaveLength(30);
    for (const res of refused) {
      expect(res.body).toEqual({
        error: 'rate_limit_exceeded',
        message: expect.stringContaining('10'),
        details: { limit: 10, active: 10 },
      });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    const listed = await http.get('/api/v1/tts/syntheses?limit=100', { token: user.token });
    expect(listed.body.items).toHaveLength(10);

    // GraphQL is held to the same count.
    const gql = await http.graphql(
      'mutation { synthesize(text: "one more", baseVoice: "f3") { id } }',
      undefined,
      user.token,
    );
    expect(gql.body.errors[0].extensions).toMatchObject({
      code: 'rate_limit_exceeded',
      retryAfter: expect.any(Number),
    });

    // Another user has a queue of their own.
    const other = await createUserAndLogin(server.url, adminToken, 'patient');
    expect((await http.post('/api/v1/tts/syntheses', TEXT, { token: other.token })).status).toBe(202);
  });

  it('cancels a queued synthesis (202, Location, { id, message }, synthesis.canceled), which frees its place in the queue', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'canceller');
    const ids: string[] = [];
    for (let i = 0; i < 10; i++)
      ids.push((await http.post('/api/v1/tts/syntheses', TEXT, { token: user.token })).body.id);
    expect((await http.post('/api/v1/tts/syntheses', TEXT, { token: user.token })).status).toBe(429);
    const stream = await openStream(`${server.url}/api/v1/events?types=synthesis.canceled`, { token: user.token });
    try {
      const res = await http.delete(`/api/v1/tts/syntheses/${ids[0]}`, { token: user.token });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ id: ids[0], message: 'Synthesis canceled.' });
      expect(res.headers.get('location')).toBe(`/api/v1/tts/syntheses/${ids[0]}`);
      const [frame] = await stream.waitFor((f) => f.event === 'synthesis.canceled');
      expect(frame.data).toMatchObject({ id: ids[0], synthesis_id: ids[0], state: 'canceled' });
    } finally {
      stream.close();
    }
    expect((await http.get(`/api/v1/tts/syntheses/${ids[0]}`, { token: user.token })).body).toMatchObject({
      state: 'canceled',
      finished_at: expect.any(String),
    });
    expect((await http.get(`/api/v1/tts/syntheses/${ids[0]}/audio`, { token: user.token })).body).toMatchObject({
      error: 'conflict',
      details: { state: 'canceled' },
    });
    expect((await http.post('/api/v1/tts/syntheses', TEXT, { token: user.token })).status).toBe(202);

    // A canceled one is finished: the next DELETE removes it; then it is gone.
    const again = await http.delete(`/api/v1/tts/syntheses/${ids[0]}`, { token: user.token });
    expect(again).toMatchObject({ status: 202, body: { id: ids[0], message: 'Synthesis deleted.' } });
    expect((await http.get(`/api/v1/tts/syntheses/${ids[0]}`, { token: user.token })).status).toBe(404);
    expect((await http.delete(`/api/v1/tts/syntheses/${ids[0]}`, { token: user.token })).body.error).toBe('not_found');
  });

  it("answers not_found for another user's synthesis and an unknown one, through REST and GraphQL", async () => {
    const owner = await createUserAndLogin(server.url, adminToken, 'owner');
    const stranger = await createUserAndLogin(server.url, adminToken, 'stranger');
    const id = (await http.post('/api/v1/tts/syntheses', TEXT, { token: owner.token })).body.id;
    expect((await http.delete(`/api/v1/tts/syntheses/${id}`, { token: stranger.token })).body.error).toBe('not_found');
    expect(
      (await http.delete('/api/v1/tts/syntheses/01a20942-3da2-774c-8632-03c9fb015943', { token: owner.token })).body
        .error,
    ).toBe('not_found');
    const gql = await http.graphql('mutation ($id: ID!) { cancelSynthesis(id: $id) { id } }', { id }, stranger.token);
    expect(gql.body.errors[0].extensions.code).toBe('not_found');
    expect((await http.get(`/api/v1/tts/syntheses/${id}`, { token: owner.token })).body.state).toBe('queued');
    // The owner cancels through GraphQL.
    const mine = await http.graphql(
      'mutation ($id: ID!) { cancelSynthesis(id: $id) { id outcome synthesis { state } } }',
      { id },
      owner.token,
    );
    expect(mine.body.data.cancelSynthesis).toEqual({ id, outcome: 'CANCELED', synthesis: { state: 'CANCELED' } });
    expect((await http.delete(`/api/v1/tts/syntheses/${id}`, { token: undefined })).status).toBe(401);
  });

  it('documents the limit, the 429 and the cancel route in the OpenAPI document', async () => {
    const doc = (await http.get('/api/v1/openapi.json')).body;
    const create = doc.paths['/api/v1/tts/syntheses'].post;
    expect(create.responses['429'].headers['Retry-After']).toBeDefined();
    expect(create.description).toContain('SYNTHESIS_QUEUE_PER_USER');
    const cancel = doc.paths['/api/v1/tts/syntheses/{synthesisId}'].delete;
    expect(Object.keys(cancel.responses)).toEqual(expect.arrayContaining(['202', '401', '404']));
    expect(cancel.responses['202'].headers.Location).toBeDefined();
  });
});

describe('with a worker', () => {
  let server: TestServer;
  let http: ReturnType<typeof api>;
  let token: string;
  beforeAll(async () => {
    server = await startTestServer({ SYNTHESIS_CONCURRENCY: '1' });
    http = api(server.url);
    token = (await login(server.url, ADMIN)).access_token;
  });
  afterAll(() => server.close());

  const state = async (id: string) => (await http.get(`/api/v1/tts/syntheses/${id}`, { token })).body.state as string;
  const audioFile = (id: string) => path.join(audioDir(server.config), `${id}.wav`);

  it('deletes a succeeded synthesis with its audio', async () => {
    const id = (await http.post('/api/v1/tts/syntheses', TEXT, { token })).body.id;
    await until(async () => (await state(id)) === 'succeeded', 'the synthesis to succeed', 60_000);
    expect(fs.existsSync(audioFile(id))).toBe(true);
    const res = await http.delete(`/api/v1/tts/syntheses/${id}`, { token });
    expect(res).toMatchObject({ status: 202, body: { id, message: 'Synthesis deleted.' } });
    expect(fs.existsSync(audioFile(id))).toBe(false);
    expect((await http.get(`/api/v1/tts/syntheses/${id}/audio`, { token })).status).toBe(404);
  });

  it('cancels a running synthesis: it never succeeds, leaves no audio, and the worker goes on with the next job', async () => {
    // Long enough to be caught running (seconds of rendering), short enough for a quick test.
    const long = (
      await http.post(
        '/api/v1/tts/syntheses',
        { text: 'The quick brown fox jumps over the lazy dog. '.repeat(200), base_voice: 'm1' },
        { token },
      )
    ).body.id;
    await until(async () => (await state(long)) === 'running', 'the synthesis to run', 60_000, 5);
    const res = await http.delete(`/api/v1/tts/syntheses/${long}`, { token });
    expect(res).toMatchObject({ status: 202, body: { id: long, message: 'Synthesis canceled.' } });
    // One worker renders one job at a time: once the next job has succeeded, the canceled one's render has ended.
    const next = (await http.post('/api/v1/tts/syntheses', TEXT, { token })).body.id;
    await until(async () => (await state(next)) === 'succeeded', 'the next synthesis to succeed', 60_000);
    expect(await state(long)).toBe('canceled');
    expect(fs.existsSync(audioFile(long))).toBe(false);
    expect(fs.readdirSync(audioDir(server.config)).filter((f) => f.includes(long))).toEqual([]);
  });
});

describe('the kept-audio quota (AUDIO_BYTES_PER_USER)', () => {
  let server: TestServer;
  let http: ReturnType<typeof api>;
  let adminToken: string;
  beforeAll(async () => {
    server = await startTestServer({ SYNTHESIS_CONCURRENCY: '1', AUDIO_BYTES_PER_USER: '2000' });
    http = api(server.url);
    adminToken = (await login(server.url, ADMIN)).access_token;
  });
  afterAll(() => server.close());

  it('refuses a synthesis once the audio kept reaches the limit (409 with details.limit), until some is deleted', async () => {
    const user = await createUserAndLogin(server.url, adminToken, 'hoarder');
    const first = (await http.post('/api/v1/tts/syntheses', TEXT, { token: user.token })).body.id;
    await until(
      async () => (await http.get(`/api/v1/tts/syntheses/${first}`, { token: user.token })).body.state === 'succeeded',
      'the synthesis to succeed',
      60_000,
    );
    const refused = await http.post('/api/v1/tts/syntheses', TEXT, { token: user.token });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error: 'conflict',
      message: expect.stringContaining('2000'),
      details: { limit: 2000, bytes: expect.any(Number) },
    });
    expect(refused.body.details.bytes).toBeGreaterThanOrEqual(2000);
    // GraphQL and the OpenAI-style endpoint are held to it too.
    const gql = await http.graphql(
      'mutation { synthesize(text: "one more", baseVoice: "f3") { id } }',
      undefined,
      user.token,
    );
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'conflict', details: { limit: 2000 } });
    const speech = await fetch(`${server.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ model: 'tts-1', voice: 'f3', input: 'Hi.' }),
    });
    expect(speech.status).toBe(409);
    expect(await speech.json()).toMatchObject({ error: { type: 'conflict', code: 'conflict' } });
    // Another user has a quota of their own; deleting frees it.
    const other = await createUserAndLogin(server.url, adminToken, 'frugal');
    expect((await http.post('/api/v1/tts/syntheses', TEXT, { token: other.token })).status).toBe(202);
    expect((await http.delete(`/api/v1/tts/syntheses/${first}`, { token: user.token })).status).toBe(202);
    expect((await http.post('/api/v1/tts/syntheses', TEXT, { token: user.token })).status).toBe(202);
  });
});
