// What careless clients send to the REST facade: each answers a 4xx with the error object,
// never a 500 (issue 12). And answers that carry tokens are never stored by a cache.
import net from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { api, login, request } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startTestServer({ SYNTHESIS_CONCURRENCY: '0' });
  token = (await login(server.url, ADMIN)).access_token;
});
afterAll(() => server.close());

const expectError = (res: { status: number; body: any; headers: Headers }, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body).toEqual(expect.objectContaining({ error: code, message: expect.any(String) }));
};

/** Sends raw bytes: fetch would refuse to send a body it was not given as it is. */
async function send(path: string, body: Buffer, headers: Record<string, string>, method = 'POST') {
  const res = await fetch(`${server.url}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

const LOGIN = Buffer.from(JSON.stringify(ADMIN));
const json = { 'content-type': 'application/json' };

describe('malformed percent-encoding in a path', () => {
  it.each(['%zz', '%E0%A4%A', '%', '%C0%AF', '%FF', 'abc%2', '%ED%A0%80'])(
    'DELETE /api/v1/tts/voices/%s?version=1 is a validation_error',
    async (segment) => {
      const res = await request(server.url, 'DELETE', `/api/v1/tts/voices/${segment}?version=1`, { token });
      expectError(res, 400, 'validation_error');
      expect(res.body.details).toEqual({ path: [expect.any(String)] });
    },
  );

  it('is a validation_error on every route with a path parameter, with or without a token', async () => {
    for (const path of [
      '/api/v1/tts/voices/%zz',
      '/api/v1/tts/syntheses/%zz',
      '/api/v1/tts/syntheses/%zz/audio',
      '/api/v1/auth/session/%zz',
    ]) {
      expectError(await request(server.url, 'GET', path, { token }), 400, 'validation_error');
      const anonymous = await request(server.url, 'GET', path);
      expect(anonymous.status).toBeGreaterThanOrEqual(400);
      expect(anonymous.status).toBeLessThan(500);
    }
    const asset = await request(server.url, 'GET', '/api/v1/docs/assets/%zz');
    expect([400, 404]).toContain(asset.status);
    expect(asset.body).toEqual(expect.objectContaining({ error: expect.any(String) }));
  });

  it('decodes valid percent-encoding as before', async () => {
    // %2D is "-": still not a UUID, so the parameter check answers (not the decoder).
    const res = await request(server.url, 'GET', '/api/v1/tts/voices/abc%2Ddef', { token });
    expectError(res, 400, 'validation_error');
    expect(res.body.details).toHaveProperty('voiceId');
  });
});

describe('Content-Encoding', () => {
  it.each(['gzip', 'br', 'deflate'])(
    '%s with a body that is not compressed is unsupported_media_type',
    async (encoding) => {
      const res = await send('/api/v1/auth/login', LOGIN, { ...json, 'content-encoding': encoding });
      expectError(res, 415, 'unsupported_media_type');
      expect(res.body.message).toContain(encoding);
      expect(res.body.details).toHaveProperty('content_encoding');
    },
  );

  it.each(['zstd', 'compress', 'bogus', 'gzip, br'])(
    'an encoding it cannot decode (%s) is unsupported_media_type',
    async (encoding) => {
      const res = await send('/api/v1/auth/login', LOGIN, { ...json, 'content-encoding': encoding });
      expectError(res, 415, 'unsupported_media_type');
      expect(res.body.details).toHaveProperty('content_encoding');
    },
  );

  it('a truncated gzip body is unsupported_media_type', async () => {
    const res = await send('/api/v1/auth/login', gzipSync(LOGIN).subarray(0, 12), {
      ...json,
      'content-encoding': 'gzip',
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body).toEqual(expect.objectContaining({ error: expect.any(String), message: expect.any(String) }));
  });

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ] as const)('a body really compressed with %s is accepted', async (encoding, compress) => {
    const res = await send('/api/v1/auth/login', compress(LOGIN), { ...json, 'content-encoding': encoding });
    expect(res.status).toBe(202);
  });

  it('an unsupported charset is unsupported_media_type', async () => {
    const res = await send('/api/v1/auth/login', LOGIN, { 'content-type': 'application/json; charset=klingon' });
    expectError(res, 415, 'unsupported_media_type');
  });
});

describe('requests that are not HTTP', () => {
  /** Writes raw bytes on a connection of its own and reads until the server closes it. */
  function raw(bytes: string): Promise<string> {
    const { hostname, port } = new URL(server.url);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, () => socket.write(bytes));
      let answer = '';
      socket.on('data', (d) => (answer += d.toString('latin1')));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
  }

  it.each([
    ['a bad Content-Length', 'POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
    ['a bad header name', 'GET /health/live HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n'],
    ['a request line that is not HTTP', '\u0000\u0001 hello\r\n\r\n'],
    ['a byte that is not allowed in a path', 'GET /api/v1/tts/voices/\u00e9 HTTP/1.1\r\nHost: x\r\n\r\n'],
  ])('%s gets 400 with the error object', async (_what, bytes) => {
    const answer = await raw(bytes);
    const last = answer.lastIndexOf('HTTP/1.1 ');
    expect(answer.slice(last)).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.slice(answer.lastIndexOf('\r\n\r\n') + 4))).toEqual({
      error: 'validation_error',
      message: expect.any(String),
    });
  });
});

describe('answers that carry tokens', () => {
  it('login, refresh and stream tickets answer with Cache-Control: no-store and Pragma: no-cache', async () => {
    const http = api(server.url);
    const logged = await http.post('/api/v1/auth/login', ADMIN);
    expect(logged.status).toBe(202);
    expect(logged.headers.get('cache-control')).toBe('no-store');
    expect(logged.headers.get('pragma')).toBe('no-cache');
    const refreshed = await http.post('/api/v1/auth/refresh', { refresh_token: logged.body.refresh_token });
    expect(refreshed.status).toBe(202);
    expect(refreshed.headers.get('cache-control')).toBe('no-store');
    expect(refreshed.headers.get('pragma')).toBe('no-cache');
    const ticket = await http.post('/api/v1/auth/stream-ticket', undefined, { token: refreshed.body.access_token });
    expect(ticket.status).toBe(202);
    expect(ticket.headers.get('cache-control')).toBe('no-store');
  });

  it('the OpenAPI document says so for every answer that carries tokens, and only for those', async () => {
    const doc = (await api(server.url).get('/api/v1/openapi.json')).body;
    const tokenAnswers: string[] = [];
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        for (const [status, response] of Object.entries<any>(op.responses)) {
          const schema = response.content?.['application/json']?.schema;
          const noStore = response.headers?.['Cache-Control']?.schema?.enum?.[0] === 'no-store';
          if (schema?.$ref === '#/components/schemas/TokenSet') expect(noStore).toBe(true);
          if (noStore) tokenAnswers.push(`${method} ${path} ${status}`);
        }
      }
    }
    // Tokens, and the secrets shown once: an API key, a webhook's signing secret.
    expect(tokenAnswers.sort()).toEqual([
      'post /api/v1/auth/api-keys 202',
      'post /api/v1/auth/login 202',
      'post /api/v1/auth/refresh 202',
      'post /api/v1/auth/stream-ticket 202',
      'post /api/v1/integrations/webhooks 202',
      'post /api/v1/integrations/webhooks/{webhookId}/rotate-secret 202',
    ]);
  });

  it('GraphQL answers carry it too', async () => {
    const res = await api(server.url).graphql(
      `mutation { login(username: "${ADMIN.username}", password: "${ADMIN.password}") { sessionId } }`,
    );
    expect(res.body.data.login.sessionId).toEqual(expect.any(String));
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});
