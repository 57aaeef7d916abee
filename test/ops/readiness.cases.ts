// Readiness that tells the truth about speech: workers heartbeat into the tts database; with
// none alive, /health/ready stays 200 but marks `synthesis: degraded`, GET /api/v1/tts/status
// says so with the queue's age, and a job created then is accepted with a warning.
import { DistributedLayout, startDistributed } from '../helpers/processes';
import { loadConfig } from '../../lib/config';
import { api, login } from '../helpers/http';
import { ADMIN, cleanupDatabases, isolatedEnv, startTestServer, TEST_DB, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

describe('one process rendering nothing itself (SYNTHESIS_CONCURRENCY=0)', () => {
  let server: TestServer;
  let token: string;
  beforeAll(async () => {
    server = await startTestServer({ SYNTHESIS_CONCURRENCY: '0' });
    token = (await login(server.url, ADMIN)).access_token;
  });
  afterAll(() => server.close());

  it('is ready (200) with synthesis degraded, says why in /tts/status, and accepts a job with a warning', async () => {
    const http = api(server.url);
    const ready = await http.get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({
      status: 'ready',
      checks: { database: 'up', synthesis: 'degraded' },
      details: { synthesis: { live_workers: 0, queued: 0, oldest_queued_age_seconds: null } },
    });

    const created = await http.post(
      '/api/v1/tts/syntheses',
      { text: 'Nobody will say this yet.', base_voice: 'f3' },
      { token },
    );
    expect(created.status).toBe(202);
    expect(created.body).toEqual({
      id: created.body.id,
      message: 'Synthesis queued.',
      warning: expect.stringMatching(/^No synthesis worker is running/),
    });

    // The queue's age grows while nobody renders: polled until it shows, not slept for.
    const status = await until(async () => {
      const r = await http.get('/api/v1/tts/status', { token });
      return r.body.oldest_queued_age_seconds >= 0.2 ? r : undefined;
    }, 'the queued job to be 0.2 s old in /tts/status');
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ status: 'degraded', live_workers: 0, queued: 1 });
    expect(status.body.oldest_queued_age_seconds).toBeGreaterThanOrEqual(0.2);
    expect((await http.get('/api/v1/tts/status')).status).toBe(401);
    expect((await http.get('/api/v1/health/ready')).body.details.synthesis).toMatchObject({ queued: 1 });
  });
});

describe('one process rendering (the default)', () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server.close());

  it('counts its own worker: synthesis up, no warning on a new job', async () => {
    const http = api(server.url);
    const { access_token: token } = await login(server.url, ADMIN);
    const ready = await until(async () => {
      const r = await http.get('/health/ready');
      return r.body.checks.synthesis === 'up' ? r : undefined;
    }, 'synthesis up in /health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.details.synthesis.live_workers).toBe(1);
    const created = await http.post('/api/v1/tts/syntheses', { text: 'Said at once.', base_voice: 'f3' }, { token });
    expect(created.status).toBe(202);
    expect(created.body).toEqual({ id: created.body.id, message: 'Synthesis queued.' });
  });
});

// Worker processes beside subgraph processes share a database only on MySQL.
(TEST_DB === 'mysql' ? describe : describe.skip)('distributed: a worker process dies', () => {
  const env = {
    ...isolatedEnv(),
    LOG_LEVEL: 'warn',
    AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
    AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
    SYNTHESIS_HEARTBEAT_SECONDS: '1',
  };
  let layout: DistributedLayout;
  beforeAll(async () => {
    layout = await startDistributed(env, { gateways: 1, facades: 1, workers: 1 });
  }, 120_000);
  afterAll(async () => {
    await layout?.stop();
    await cleanupDatabases(loadConfig(env));
  }, 60_000);

  it('the gateway and the facade go from synthesis up to degraded (still 200) once its heartbeat stops', async () => {
    const [gateway] = layout.gateways;
    const [facade] = layout.facades;
    const readiness = async (url: string) => api(url).get('/health/ready');
    const up = await until(
      async () => ((await readiness(gateway.url)).body.checks.synthesis === 'up' ? true : undefined),
      'synthesis up at the gateway',
    );
    expect(up).toBe(true);
    expect((await readiness(facade.url)).body).toMatchObject({
      status: 'ready',
      checks: { synthesis: 'up' },
      details: { synthesis: { live_workers: 1 } },
    });

    await layout.workers[0].kill('SIGKILL'); // no chance to remove its heartbeat
    const degraded = await until(async () => {
      const r = await readiness(gateway.url);
      return r.body.checks.synthesis === 'degraded' ? r : undefined;
    }, 'synthesis degraded at the gateway');
    expect(degraded.status).toBe(200);
    expect(degraded.body.details.synthesis.live_workers).toBe(0);
    const viaFacade = await readiness(facade.url);
    expect(viaFacade.status).toBe(200);
    expect(viaFacade.body.checks).toMatchObject({ gateway: 'up', database: 'up', synthesis: 'degraded' });
    const { access_token: token } = await login(facade.url, ADMIN);
    const created = await api(facade.url).post(
      '/api/v1/tts/syntheses',
      { text: 'Waits for a worker.', base_voice: 'm1' },
      { token },
    );
    expect(created.status).toBe(202);
    expect(created.body.warning).toMatch(/^No synthesis worker is running/);
  }, 60_000);
});
