// GET /metrics of the one-process server after a login, a failed login, a voice create and a
// synthesis: the series an operator's dashboard reads are there, with bounded labels.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Agent, request } from 'undici';
import { loadConfig } from '../../lib/config';
import { createBaseApp } from '../../lib/http-app';
import { listen } from '../../lib/http-server';
import { createLogger } from '../../lib/logger';
import { api, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

/** Prometheus text: `name{labels} value` samples. */
function parse(text: string) {
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]),
    );
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

describe('Prometheus metrics', () => {
  let server: TestServer;
  let text: string;
  let samples: ReturnType<typeof parse>;
  const find = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

  beforeAll(async () => {
    server = await startTestServer();
    const http = api(server.url);
    const { access_token: token } = await login(server.url, ADMIN);
    expect(
      (await http.post('/api/v1/auth/login', { username: ADMIN.username, password: 'not the password' })).status,
    ).toBe(401);
    expect((await http.post('/api/v1/tts/voices', { name: 'Metered', base_voice: 'f3' }, { token })).status).toBe(202);
    const queued = await http.post('/api/v1/tts/syntheses', { text: 'Counted.', base_voice: 'f3' }, { token });
    expect(queued.status).toBe(202);
    for (let state = ''; state !== 'succeeded';) {
      const res = await http.get(`/api/v1/tts/syntheses/${queued.body.id}`, { token });
      state = res.body.state;
      expect(state).not.toBe('failed');
      if (state !== 'succeeded') await new Promise((r) => setTimeout(r, 50));
    }
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    text = await res.text();
    samples = parse(text);
  }, 60_000);

  afterAll(() => server?.close());

  it('counts requests by route template and status class, never by raw path', () => {
    expect(
      find('http_server_request_duration_seconds_count', {
        method: 'POST',
        route: '/api/v1/auth/login',
        status_class: '2xx',
      })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(
      find('http_server_request_duration_seconds_count', {
        method: 'POST',
        route: '/api/v1/auth/login',
        status_class: '4xx',
      })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(
      find('http_server_request_duration_seconds_count', {
        method: 'GET',
        route: '/api/v1/tts/syntheses/:synthesisId',
      })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    // No label anywhere holds an id.
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
  });

  it('counts GraphQL operations and subgraph fetches', () => {
    expect(find('graphql_operations_total', { type: 'mutation', outcome: 'ok' }).length).toBeGreaterThanOrEqual(1);
    expect(find('graphql_operations_total', { type: 'mutation', outcome: 'unauthorized' }).length).toBe(1);
    expect(
      find('graphql_operation_duration_seconds_count', { type: 'query', outcome: 'ok' }).length,
    ).toBeGreaterThanOrEqual(1);
    expect(
      find('graphql_subgraph_request_duration_seconds_count', { subgraph: 'auth', outcome: 'ok' })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(
      find('graphql_subgraph_request_duration_seconds_count', { subgraph: 'tts', outcome: 'ok' })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
  });

  it('reports logins by outcome, the synthesis queue and render time, and the event relay', () => {
    expect(find('login_attempts_total', { outcome: 'success' })[0]?.value).toBeGreaterThanOrEqual(1);
    expect(find('login_attempts_total', { outcome: 'failure' })[0]?.value).toBeGreaterThanOrEqual(1);
    expect(find('synthesis_jobs', { state: 'succeeded' })[0]?.value).toBe(1);
    expect(find('synthesis_queue_oldest_age_seconds')[0]?.value).toBe(0);
    expect(find('synthesis_render_seconds_count', { outcome: 'succeeded' })[0]?.value).toBeGreaterThanOrEqual(1);
    expect(find('event_relay_lag_seconds_count', { source: 'auth' })[0]?.value).toBeGreaterThanOrEqual(1);
    expect(find('event_relay_lag_seconds_count', { source: 'tts' })[0]?.value).toBeGreaterThanOrEqual(1);
    expect(find('event_stream_connections')).toHaveLength(1);
    expect(find('nodejs_eventloop_lag_p99_seconds')).toHaveLength(1);
    expect(find('process_resident_memory_bytes')).toHaveLength(1);
  });

  it('serves every series the Grafana dashboard reads', () => {
    const dashboard = fs.readFileSync(path.join(__dirname, '../../ops/grafana-dashboard.json'), 'utf8');
    const names = new Set(
      [
        ...dashboard.matchAll(
          /\b([a-z_]+(?:_total|_seconds|_bytes|_connections|_jobs|_in_use|_waiting)(?:_bucket|_count)?)\b/g,
        ),
      ].map((m) => m[1]),
    );
    expect(names.size).toBeGreaterThan(10);
    // Registered (a histogram's _bucket and _count belong to its base name); the pool gauges have samples only on MySQL.
    const missing = [...names].filter((n) => !text.includes(`# TYPE ${n.replace(/_(bucket|count)$/, '')} `));
    expect(missing).toEqual([]);
  });
});

/** A random variant of `path`'s letters' case. */
const anyCase = (p: string) => [...p].map((c) => (Math.random() < 0.5 ? c.toUpperCase() : c)).join('');

describe('metrics under hostile paths and methods', () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()), 60_000);
  afterAll(() => server?.close());

  const requestSeries = async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    return { text, series: parse(text).filter((s) => s.name === 'http_server_request_duration_seconds_count') };
  };

  it('keeps the request series bounded by the routes in the code after 10,000 random paths and methods', async () => {
    const known = [
      '/graphql/stream',
      '/graphql',
      '/api/v1/tts/voices',
      `/api/v1/tts/voices/${crypto.randomUUID()}`,
      '/health/live',
      '/api/v1/auth/login',
      '/v1/audio/speech',
      '/metrics',
    ];
    const methods = [...http.METHODS.filter((m) => m !== 'CONNECT'), 'FOO', 'GETT'];
    const agent = new Agent({ connections: 32, pipelining: 1 });
    const targets = Array.from({ length: 10_000 }, (_, i) => {
      const random = `/${crypto.randomBytes(6).toString('hex')}/${i}`;
      const p = i % 3 === 0 ? random : anyCase(known[i % known.length]) + (i % 5 === 0 ? '/' : '');
      return { path: p, method: methods[i % methods.length] };
    });
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < targets.length) {
          const { path: p, method } = targets[next++];
          await request(`${server.url}${p}`, {
            method,
            dispatcher: agent,
            headers: { 'content-type': 'application/json' },
            headersTimeout: 5000,
            bodyTimeout: 5000,
          }).then(
            (res) => res.body.dump(),
            () => undefined,
          );
        }
      }),
    );

    await agent.close();
    const { text, series } = await requestSeries();
    // Every route label is a template from the code (lower case, no id) or `unmatched`.
    const routes = new Set(series.map((s) => s.labels.route));
    for (const route of routes) expect(route.replace(/:\w+/g, ':id')).toMatch(/^(unmatched|\/[a-z0-9/:._-]*)$/);
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
    expect(new Set(series.map((s) => s.labels.method))).toEqual(
      new Set(
        series
          .map((s) => s.labels.method)
          .filter((m) => ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'other'].includes(m)),
      ),
    );
    // The bound: the code's routes, 8 methods, 5 status classes; far below one series per request.
    expect(routes.size).toBeLessThan(40);
    expect(series.length).toBeLessThan(400);
    expect(Buffer.byteLength(text)).toBeLessThan(1024 * 1024);
  }, 240_000);
});

describe('/metrics in production', () => {
  const served = async (env: Record<string, string>) => {
    const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
    const app = createBaseApp({ config, logger: createLogger(config), checks: async () => ({}) });
    const server = await listen(app, 0, '127.0.0.1');
    try {
      const res = await fetch(`${server.url}/metrics`);
      return { status: res.status, body: await res.text() };
    } finally {
      await server.close(100);
    }
  };

  it('is refused on the public port unless METRICS_PUBLIC=true', async () => {
    const refused = await served({ NODE_ENV: 'production' });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({
      error: 'forbidden',
      message: expect.stringContaining('METRICS_PORT'),
    });
    expect((await served({ NODE_ENV: 'production', METRICS_PUBLIC: 'true' })).status).toBe(200);
    expect((await served({})).status).toBe(200); // development
  });
});
