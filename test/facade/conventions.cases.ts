import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import { api, request } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

let server: TestServer;
let http: ReturnType<typeof api>;

beforeAll(async () => {
  server = await startTestServer({ BODY_LIMIT_BYTES: '2048' });
  http = api(server.url);
});
afterAll(() => server.close());

const expectError = (res: { status: number; body: any; headers: Headers }, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body).toEqual(expect.objectContaining({ error: code, message: expect.any(String) }));
  expect(res.body.message).not.toMatch(/at .*\.(ts|js):\d+/); // no stack traces
};

describe('conventions', () => {
  it('malformed JSON is a validation_error', async () => {
    const res = await request(server.url, 'POST', '/api/v1/auth/login', {
      raw: '{"username": "a",',
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 400, 'validation_error');
  });

  it('a body that is not JSON is unsupported_media_type', async () => {
    const res = await request(server.url, 'POST', '/api/v1/auth/login', {
      raw: 'username=a&password=b',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectError(res, 415, 'unsupported_media_type');
  });

  it('an oversized body is payload_too_large', async () => {
    const res = await http.post('/api/v1/auth/login', { username: 'a', password: 'x'.repeat(4096) });
    expectError(res, 413, 'payload_too_large');
  });

  it('a missing body is a validation_error', async () => {
    expectError(await request(server.url, 'POST', '/api/v1/auth/login'), 400, 'validation_error');
  });

  it('an unknown route is not_found, also outside /api/v1', async () => {
    expectError(await http.get('/api/v1/nothing/here'), 404, 'not_found');
    expectError(await http.get('/favicon.ico'), 404, 'not_found');
  });

  it('a known path with the wrong method is method_not_allowed with Allow', async () => {
    const res = await http.delete('/api/v1/auth/session');
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toContain('GET');
  });

  it('echoes a caller-supplied X-Request-Id and makes one otherwise', async () => {
    const echoed = await http.get('/health/live', { headers: { 'x-request-id': 'trace-abc-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-abc-123');
    const made = await http.get('/api/v1/nothing');
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves health at the root and under /api/v1 without a token', async () => {
    for (const prefix of ['', '/api/v1']) {
      expect((await http.get(`${prefix}/health/live`)).body).toEqual({ status: 'ok' });
      const ready = await http.get(`${prefix}/health/ready`);
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({
        status: 'ready',
        checks: expect.objectContaining({ database: 'up', auth: 'up' }),
        details: expect.any(Object),
      });
    }
  });

  it('serves the OpenAPI document and a docs page with local assets', async () => {
    const doc = await http.get('/api/v1/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\.0\./);
    expect(doc.body.paths['/api/v1/auth/login'].post.responses).toEqual(
      expect.objectContaining({
        '202': expect.anything(),
        '400': expect.anything(),
        '401': expect.anything(),
        '429': expect.anything(),
      }),
    );
    const voices = doc.body.paths['/api/v1/tts/voices/{voiceId}'];
    expect(Object.keys(voices.delete.responses).sort()).toEqual([
      '202',
      '400',
      '401',
      '403',
      '404',
      '409',
      '500',
      '503',
    ]);
    expect(voices.delete.parameters).toContainEqual(
      expect.objectContaining({ name: 'version', in: 'query', required: true }),
    );
    expect(doc.body.paths['/api/v1/tts/voices'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/CreateVoiceRequest',
    });
    const events = doc.body.paths['/api/v1/events'].get;
    expect(Object.keys(events.responses['200'].content)).toEqual(['text/event-stream']);
    expect(events.parameters).toContainEqual(expect.objectContaining({ name: 'Last-Event-ID', in: 'header' }));
    expect(events.responses['410']).toBeDefined();
    expect(doc.body.components.securitySchemes.bearerAuth.scheme).toBe('bearer');
    expect(doc.body.components.schemas.ErrorObject.required).toEqual(['error', 'message']);
    const page = await request(server.url, 'GET', '/api/v1/docs');
    expect(page.status).toBe(200);
    expect(page.text).not.toMatch(/https?:\/\//); // no CDN
    const asset = await request(server.url, 'GET', '/api/v1/docs/assets/swagger-ui-bundle.js');
    expect(asset.status).toBe(200);
  });

  it('serves the public key as a JWKS that verifies the tokens it issues, found by their kid', async () => {
    const res = await http.get('/.well-known/jwks.json');
    expect(res.body.keys).toHaveLength(1);
    const [jwk] = res.body.keys;
    expect(jwk).toEqual(
      expect.objectContaining({
        kty: 'RSA',
        alg: 'RS256',
        use: 'sig',
        kid: expect.any(String),
        n: expect.any(String),
        e: 'AQAB',
      }),
    );
    expect(jwk).not.toHaveProperty('d'); // no private part

    // As a service outside this codebase would: pick the key by the token's kid, verify with it.
    const login = await http.post('/api/v1/auth/login', ADMIN);
    const token = login.body.access_token as string;
    const header = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString());
    expect(header).toEqual({ alg: 'RS256', typ: 'JWT', kid: jwk.kid });
    const key = crypto.createPublicKey({ key: jwk, format: 'jwk' });
    const claims = jwt.verify(token, key, {
      algorithms: ['RS256'],
      issuer: server.config.JWT_ISSUER,
    }) as jwt.JwtPayload;
    expect(claims).toMatchObject({ sid: login.body.session_id, typ: 'access' });
    // And it is this server's key: a token signed by another key does not verify with it.
    const other = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    expect(() =>
      jwt.verify(jwt.sign({ sub: 'x' }, other, { algorithm: 'RS256' }), key, { algorithms: ['RS256'] }),
    ).toThrow('invalid signature');
  });
});
