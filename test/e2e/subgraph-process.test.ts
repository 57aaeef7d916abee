// Issue 29 item 1 in the distributed layout: a subgraph in a process of its own, as deployed
// (NODE_ENV=production, SUBGRAPH_SECRET set). Before the pipeline reached subgraph endpoints,
// 12,434 aliases of `_service { sdl }` answered 152 MB, held the event loop 1.8 s, and 20 such
// requests at once killed the process; `_service` answered anyone. One process start.
// Run once, on SQLite (DATABASE_INCIDENTAL in jest.config.js): the process opens its database, but
// what is tested (the pipeline's limits in front of `_service`) happens before any statement.
import { loadConfig } from '../../lib/config';
import { request } from '../helpers/http';
import { ServiceProcess, startProcess } from '../helpers/processes';
import { ADMIN, cleanupDatabases, isolatedEnv } from '../helpers/server';

const SECRET = 'a-hop-secret-of-at-least-thirty-two-characters';
const env = {
  ...isolatedEnv(),
  LOG_LEVEL: 'warn',
  NODE_ENV: 'production',
  SUBGRAPH_SECRET: SECRET,
  AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
  AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
};
// Generous for a busy 2-core machine: the unprotected process took 1.8 s of one core per request.
const QUICK_MS = 3000;

let subgraph: ServiceProcess;

beforeAll(async () => {
  subgraph = await startProcess('subgraph auth', 'subgraph.js', ['auth'], env);
}, 60_000);
afterAll(async () => {
  await subgraph?.kill();
  await cleanupDatabases(loadConfig(env));
}, 30_000);

const aliases = (n: number, field: string) =>
  Array.from({ length: n }, (_, i) => `a${i.toString(36)}:${field}`).join(' ');
const graphql = (query: string, headers: Record<string, string> = {}) =>
  request(subgraph.url, 'POST', '/graphql', { body: { query }, headers });

it('refuses 12,000 aliases of _service { sdl } quickly, as a JSON validation_error, while /health/live answers', async () => {
  const started = Date.now();
  const attack = graphql(`{ ${aliases(12_000, '_service{sdl}')} }`, { 'x-hop-secret': SECRET }).then((res) => ({
    ...res,
    ms: Date.now() - started,
  }));
  const liveStarted = Date.now();
  const live = await fetch(`${subgraph.url}/health/live`);
  expect(live.status).toBe(200);
  expect(Date.now() - liveStarted).toBeLessThan(QUICK_MS);
  const res = await attack;
  expect(res.ms).toBeLessThan(QUICK_MS);
  expect(res.status).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  expect(res.body.data ?? undefined).toBeUndefined();
  expect(res.body.errors[0].extensions.code).toBe('validation_error');
  expect(res.body.errors[0].message).toMatch(/GRAPHQL_MAX_(TOKENS|ALIASES)/);
});

it('answers 401 without the hop secret (or with a wrong one), before reading the attack', async () => {
  for (const headers of [{}, { 'x-hop-secret': `${SECRET}x` }] as Record<string, string>[]) {
    const res = await graphql(`{ ${aliases(12_000, '_service{sdl}')} }`, headers);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body.errors[0].extensions.code).toBe('unauthorized');
  }
  const sdl = await graphql('{ _service { sdl } }');
  expect(sdl.status).toBe(401);
});

it('serves the gateway, which presents the secret', async () => {
  const sdl = await graphql('{ _service { sdl } }', { 'x-hop-secret': SECRET });
  expect(sdl.status).toBe(200);
  expect(sdl.body.data._service.sdl).toContain('currentSession');
});
