// Listing syntheses (GET /api/v1/tts/syntheses and `syntheses`) and the job's events, on SQLite
// and on MySQL. A second server that renders nothing (SYNTHESIS_CONCURRENCY=0) holds jobs queued
// for the state filter.
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

async function synthesize(text: string, as: string, url = server.url): Promise<string> {
  const res = await api(url).post('/api/v1/tts/syntheses', { text, base_voice: 'f3' }, { token: as });
  expect(res.status).toBe(202);
  return res.body.id;
}

async function finished(id: string, as = token): Promise<Record<string, any>> {
  for (;;) {
    const res = await http.get(`/api/v1/tts/syntheses/${id}`, { token: as });
    if (res.body.state === 'succeeded' || res.body.state === 'failed') return res.body;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function allPages(as: string, query = '', limit = 2): Promise<any[]> {
  const seen: any[] = [];
  let cursor: string | null = null;
  do {
    const res: any = await http.get(
      `/api/v1/tts/syntheses?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`,
      { token: as },
    );
    expect(res.status).toBe(200);
    expect(res.body.items.length).toBeLessThanOrEqual(limit);
    seen.push(...res.body.items);
    cursor = res.body.next_cursor;
  } while (cursor);
  return seen;
}

describe('GET /api/v1/tts/syntheses', () => {
  it('pages through exactly your syntheses, newest first, each as GET {id} shows it', async () => {
    const user = await createUserAndLogin(server.url, token, 'lister');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await synthesize(`Number ${i}.`, user.token));
    await synthesize('Not yours.', token);
    for (const id of ids) await finished(id, user.token); // so that the list and GET see the same state
    const listed = await allPages(user.token);
    expect(listed.map((s) => s.id)).toEqual([...ids].reverse());
    const one = (await http.get(`/api/v1/tts/syntheses/${ids[0]}`, { token: user.token })).body;
    expect(listed[4]).toEqual(one);
    expect(listed[4]).not.toHaveProperty('text');
  });

  it('filters by state, and pages within the filter', async () => {
    const user = await createUserAndLogin(server.url, token, 'filterer');
    const done = [await synthesize('First.', user.token), await synthesize('Second.', user.token)];
    // An in-process worker renders them; then two more are queued and left queued.
    for (const id of done) await finished(id, user.token);
    const stopped = await startTestServer({ SYNTHESIS_CONCURRENCY: '0' });
    try {
      const other = (await login(stopped.url, ADMIN)).access_token;
      const queued = [await synthesize('Third.', other, stopped.url), await synthesize('Fourth.', other, stopped.url)];
      const list = (query: string) => api(stopped.url).get(`/api/v1/tts/syntheses${query}`, { token: other });
      expect((await list('?state=queued&limit=1')).body.items.map((s: any) => s.id)).toEqual([queued[1]]);
      const rest = await list(`?state=queued&limit=1&cursor=${(await list('?state=queued&limit=1')).body.next_cursor}`);
      expect(rest.body).toEqual({
        items: [expect.objectContaining({ id: queued[0], state: 'queued' })],
        next_cursor: null,
      });
      expect((await list('?state=succeeded')).body).toEqual({ items: [], next_cursor: null });
    } finally {
      await stopped.close();
    }
    const succeeded = await allPages(user.token, '&state=succeeded', 1);
    expect(succeeded.map((s) => [s.id, s.state])).toEqual([
      [done[1], 'succeeded'],
      [done[0], 'succeeded'],
    ]);
    expect(await allPages(user.token, '&state=failed')).toEqual([]);
  });

  it('rejects a bad limit, cursor or state', async () => {
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['cursor=nope', 'cursor'],
      ['state=done', 'state'],
    ]) {
      const res = await http.get(`/api/v1/tts/syntheses?${query}`, { token });
      expect(res.status).toBe(400);
      expect(res.body.details).toHaveProperty(field);
    }
    expect((await http.get('/api/v1/tts/syntheses')).status).toBe(401);
  });

  it('is the `syntheses` query in GraphQL', async () => {
    const user = await createUserAndLogin(server.url, token, 'gql-lister');
    const ids = [await synthesize('One.', user.token), await synthesize('Two.', user.token)];
    const res = await http.graphql('{ syntheses(first: 1) { items { id state } nextCursor } }', {}, user.token);
    expect(res.body.data.syntheses.items).toEqual([{ id: ids[1], state: expect.any(String) }]);
    const next = await http.graphql(
      'query ($after: String) { syntheses(first: 5, after: $after) { items { id } nextCursor } }',
      { after: res.body.data.syntheses.nextCursor },
      user.token,
    );
    expect(next.body.data.syntheses).toEqual({ items: [{ id: ids[0] }], nextCursor: null });
  });
});

describe('job events', () => {
  it('one job makes synthesis.queued, synthesis.started (attempt 1) and synthesis.succeeded, in that order', async () => {
    const stream = await openStream(
      `${server.url}/api/v1/events?types=synthesis.queued,synthesis.started,synthesis.succeeded,synthesis.failed`,
      { token },
    );
    try {
      const id = await synthesize('In order, please.', token);
      const frames = await stream.waitFor((f) => f.data.id === id, 3, 30_000);
      expect(frames.map((f) => f.event)).toEqual(['synthesis.queued', 'synthesis.started', 'synthesis.succeeded']);
      expect(frames.map((f) => Number(f.id))).toEqual([...frames.map((f) => Number(f.id))].sort((a, b) => a - b));
      expect(frames[0].data).toMatchObject({
        synthesis_id: id,
        state: 'queued',
        characters: 17,
        base_voice: 'f3',
        language: 'en-us',
        speed: 1,
      });
      expect(frames[1].data).toMatchObject({ synthesis_id: id, state: 'running', attempt: 1 });
      expect(frames[2].data).toMatchObject({ synthesis_id: id, state: 'succeeded', duration_ms: expect.any(Number) });
    } finally {
      stream.close();
    }
  });

  it('a refused request records no event', async () => {
    const stream = await openStream(`${server.url}/api/v1/events?types=synthesis.queued`, { token });
    try {
      expect((await http.post('/api/v1/tts/syntheses', { text: 'x', base_voice: 'nobody' }, { token })).status).toBe(
        400,
      );
      const id = await synthesize('Marker.', token);
      const frames = await stream.waitFor((f) => f.data.id === id, 1, 20_000);
      expect(stream.frames).toEqual(frames); // the marker is the only queued event
    } finally {
      stream.close();
    }
  });
});
