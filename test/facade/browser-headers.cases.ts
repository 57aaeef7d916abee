// What a browser is told: CORS for the configured origins only, security headers, the docs
// assets, and the index pages.
import { loadConfig } from '../../lib/config';
import { request } from '../helpers/http';
import { startTestServer, TestServer } from '../helpers/server';

const ALLOWED = 'http://app.example.test:3000';
const OTHER = 'http://evil.example.test';

let server: TestServer;
let plain: TestServer;

beforeAll(async () => {
  [server, plain] = await Promise.all([
    startTestServer({ CORS_ORIGINS: `${ALLOWED}, http://second.example.test`, CORS_MAX_AGE_SECONDS: '321' }),
    startTestServer(),
  ]);
});
afterAll(() => Promise.all([server?.close(), plain?.close()]));

const preflight = (
  url: string,
  path: string,
  origin: string,
  method = 'POST',
  headers = 'authorization,content-type',
) =>
  request(url, 'OPTIONS', path, {
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });

describe('CORS', () => {
  it.each(['/api/v1/auth/login', '/api/v1/events', '/graphql', '/graphql/stream'])(
    'a preflight from an allowed origin to %s is allowed, and cached',
    async (path) => {
      const res = await preflight(
        server.url,
        path,
        ALLOWED,
        'POST',
        'authorization,content-type,last-event-id,x-request-id',
      );
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(ALLOWED);
      expect(res.headers.get('access-control-allow-methods')).toEqual(expect.stringContaining('POST'));
      const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase().split(',');
      expect(allowed).toEqual(
        expect.arrayContaining(['authorization', 'content-type', 'last-event-id', 'x-request-id']),
      );
      expect(res.headers.get('access-control-max-age')).toBe('321');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    },
  );

  it('an answer to an allowed origin names it and exposes Location, Retry-After and X-Request-Id', async () => {
    const res = await request(server.url, 'POST', '/api/v1/auth/login', {
      body: { username: 'admin', password: 'correct horse battery' },
      headers: { origin: 'http://second.example.test' },
    });
    expect(res.status).toBe(202);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://second.example.test');
    expect(res.headers.get('vary')).toMatch(/origin/i);
    const exposed = res.headers.get('access-control-expose-headers')!.toLowerCase().split(',');
    expect(exposed).toEqual(expect.arrayContaining(['location', 'retry-after', 'x-request-id']));
  });

  it('another origin gets no Access-Control-Allow-Origin (preflight or request), nor does a near miss', async () => {
    for (const origin of [OTHER, `${ALLOWED}/`, 'http://app.example.test:3001', 'https://app.example.test:3000']) {
      const pre = await preflight(server.url, '/api/v1/auth/login', origin);
      expect(pre.headers.get('access-control-allow-origin')).toBeNull();
      const res = await request(server.url, 'GET', '/api/v1/health/live', { headers: { origin } });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('without CORS_ORIGINS no Access-Control header is sent at all', async () => {
    const pre = await preflight(plain.url, '/api/v1/auth/login', ALLOWED);
    expect([...pre.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([]);
    const res = await request(plain.url, 'GET', '/api/v1/health/live', { headers: { origin: ALLOWED } });
    expect([...res.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });

  it('CORS_ORIGINS must be origins', () => {
    expect(() => loadConfig({ CORS_ORIGINS: 'app.example.test' })).toThrow(/CORS_ORIGINS/);
    expect(() => loadConfig({ CORS_ORIGINS: 'https://app.example.test/path' })).toThrow(/CORS_ORIGINS/);
    expect(loadConfig({ CORS_ORIGINS: 'https://a.test, http://b.test:8080' }).CORS_ORIGINS).toEqual([
      'https://a.test',
      'http://b.test:8080',
    ]);
  });
});

describe('security headers', () => {
  it("a Content-Security-Policy that allows this origin only, and helmet's other headers", async () => {
    const res = await request(plain.url, 'GET', '/api/v1/docs');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/https?:|upgrade-insecure-requests/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('serves only the swagger-ui files the docs page loads', async () => {
    const page = await request(plain.url, 'GET', '/api/v1/docs');
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) expect((await request(plain.url, 'GET', asset)).status).toBe(200);
    for (const other of [
      'package.json',
      'index.html',
      'swagger-ui-bundle.js.map',
      'swagger-ui.js',
      '../package.json',
    ]) {
      expect((await request(plain.url, 'GET', `/api/v1/docs/assets/${other}`)).status).toBe(404);
    }
  });
});

describe('index pages', () => {
  it.each(['/', '/api/v1'])(
    '%s answers JSON links to the docs, the OpenAPI document, GraphQL and health',
    async (path) => {
      const res = await request(plain.url, 'GET', path);
      expect(res.status).toBe(200);
      expect(res.body.links).toEqual(
        expect.objectContaining({
          docs: '/api/v1/docs',
          openapi: '/api/v1/openapi.json',
          graphql: '/graphql',
          health_ready: '/health/ready',
        }),
      );
      for (const href of Object.values(res.body.links as Record<string, string>)) {
        if (href.endsWith('/events') || href.endsWith('/stream') || href === '/graphql') continue; // need a token or a POST
        expect((await request(plain.url, 'GET', href)).status).toBe(200);
      }
    },
  );

  it('a browser gets the same links as HTML', async () => {
    const res = await request(plain.url, 'GET', '/', {
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain('href="/api/v1/docs"');
  });
});
