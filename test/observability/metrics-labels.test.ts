// What the request and render series count, and under which label (issue 42): GraphQL by GET
// under /graphql (not the explorer's template), nothing served below /graphql, streams the client
// closed counted when they close, the speech route without a trailing slash, and a canceled
// render under its own outcome, not `failed`.
import { httpRequestDuration } from '../../lib/metrics';
import { synthesisRenderSeconds } from '../../subgraphs/tts/metrics';
import { api, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

let server: TestServer;
let token: string;

beforeAll(async () => {
  // The explorer on (as outside production): its page shares /graphql with GraphQL over GET.
  server = await startTestServer({ GRAPHQL_EXPLORER: 'true' });
  token = (await login(server.url, ADMIN)).access_token;
}, 60_000);
afterAll(() => server?.close());

/** The request count of one label set, as this process's registry has it now (0 when none). */
type Label = 'method' | 'route' | 'status_class';
async function requests(labels: Partial<Record<Label, string>>): Promise<number> {
  const { values } = await httpRequestDuration.get();
  return values
    .filter((v) => v.metricName === 'http_server_request_duration_seconds_count')
    .filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k as Label] === value))
    .reduce((sum, v) => sum + v.value, 0);
}

async function renders(outcome: string): Promise<number> {
  const { values } = await synthesisRenderSeconds.get();
  return (
    values.find((v) => v.metricName === 'synthesis_render_seconds_count' && v.labels.outcome === outcome)?.value ?? 0
  );
}

it("counts GET /graphql?query= under /graphql, not under the explorer page's template", async () => {
  const before = await requests({ method: 'GET', route: '/graphql' });
  const res = await fetch(`${server.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, {
    headers: { accept: 'application/graphql-response+json', 'apollo-require-preflight': 'true' },
  });
  expect([res.status, await res.json()]).toEqual([200, { data: { __typename: 'Query' } }]);
  await until(async () => (await requests({ method: 'GET', route: '/graphql' })) > before, 'the count');
  expect(await requests({ route: '/graphql/graphql' })).toBe(0);
});

it('serves GraphQL at /graphql only: POST /graphql/graphql is 404, counted as unmatched', async () => {
  const before = await requests({ method: 'POST', route: 'unmatched', status_class: '4xx' });
  const res = await fetch(`${server.url}/graphql/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __typename }' }),
  });
  expect(res.status).toBe(404);
  await until(
    async () => (await requests({ method: 'POST', route: 'unmatched', status_class: '4xx' })) > before,
    'the count',
  );
  expect(await requests({ method: 'POST', route: '/graphql' })).toBe(0);
});

it('counts an event stream when the client closes it, REST and GraphQL alike', async () => {
  for (const [route, open] of [
    ['/api/v1/events', () => fetch(`${server.url}/api/v1/events`, { headers: { authorization: `Bearer ${token}` } })],
    [
      '/graphql/stream',
      () =>
        fetch(`${server.url}/graphql/stream`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'text/event-stream',
            'content-type': 'application/json',
          },
          body: JSON.stringify({ query: 'subscription { events { type } }' }),
        }),
    ],
  ] as const) {
    const before = await requests({ route, status_class: '2xx' });
    const res = await open();
    expect([route, res.status]).toEqual([route, 200]);
    const reader = res.body!.getReader();
    await reader.read(); // the stream has started
    await reader.cancel(); // the client hangs up
    await until(async () => (await requests({ route, status_class: '2xx' })) > before, `${route} to be counted`);
  }
});

it('labels the speech route /v1/audio/speech, without a trailing slash', async () => {
  const before = await requests({ method: 'POST', route: '/v1/audio/speech' });
  const res = await fetch(`${server.url}/v1/audio/speech`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tts-1', voice: 'f3' }), // no input: 400
  });
  expect(res.status).toBe(400);
  await until(async () => (await requests({ method: 'POST', route: '/v1/audio/speech' })) > before, 'the count');
  expect(await requests({ route: '/v1/audio/speech/' })).toBe(0);
});

it('counts a render stopped by a cancellation as canceled, not failed', async () => {
  const http = api(server.url);
  const [canceledBefore, failedBefore] = [await renders('canceled'), await renders('failed')];
  // Minutes of audio: still rendering when it is canceled.
  const text = 'The quick brown fox jumps over the lazy dog, and then it runs far away into the forest. '.repeat(40);
  const queued = await http.post('/api/v1/tts/syntheses', { text, base_voice: 'f3' }, { token });
  expect(queued.status).toBe(202);
  const id = queued.body.id as string;
  await until(
    async () => (await http.get(`/api/v1/tts/syntheses/${id}`, { token })).body.state === 'running',
    'the render to start',
  );
  expect((await http.delete(`/api/v1/tts/syntheses/${id}`, { token })).status).toBe(202);
  await until(async () => (await renders('canceled')) > canceledBefore, 'the canceled render to be counted');
  expect(await renders('failed')).toBe(failedBefore);
}, 60_000);
