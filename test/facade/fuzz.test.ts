// A fuzz test of the REST facade (issue 12): random methods, paths, percent-encodings, query
// strings, headers, content encodings and bodies against the real one-process server. Whatever
// comes in, the answer is never a 5xx, and every error is the error object. The generator is
// seeded (FUZZ_SEED, FUZZ_RUNS to change them), so a failure reproduces: fast-check prints the
// seed and the shrunk request.
import http from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { routeTable } from '../../rest-facade/route-table';
import { facadeRoutes } from '../../subgraphs';
import { api, createUserAndLogin, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

const { routes } = routeTable(facadeRoutes);

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

let server: TestServer;
let port: number;
const known = { token: '', otherToken: '', voiceId: '', synthesisId: '' };

beforeAll(async () => {
  // Nothing renders: fuzzed syntheses stay queued rather than loading the machine.
  server = await startTestServer({ SYNTHESIS_CONCURRENCY: '0', LOG_LEVEL: 'silent' });
  port = Number(new URL(server.url).port);
  const admin = await login(server.url, ADMIN);
  const other = await createUserAndLogin(server.url, admin.access_token, 'fuzzy');
  known.token = admin.access_token;
  known.otherToken = other.token;
  const http = api(server.url);
  known.voiceId = (
    await http.post('/api/v1/tts/voices', { name: 'fuzz', base_voice: 'f3' }, { token: known.token })
  ).body.id;
  known.synthesisId = (
    await http.post('/api/v1/tts/syntheses', { text: 'fuzz', base_voice: 'f3' }, { token: known.token })
  ).body.id;
});
afterAll(() => server.close());

// ---- what a request is made of -------------------------------------------------------------

/** A path segment: real ids ({voice}, {synthesis}: filled in when sent), ids of nobody, junk, and percent-encodings good and bad. */
const segment = fc.oneof(
  fc.constantFrom('{voice}', '{synthesis}'),
  fc.uuid().map(String),
  fc.constantFrom(
    '%zz',
    '%',
    '%E0%A4%A',
    '%C0%AF',
    '%00',
    '%2F',
    '%25',
    '%FF%FE',
    '%ED%A0%80',
    '..',
    '.',
    '%2e%2e',
    '%u0041',
    '%%',
    'a%2',
    '~',
    '',
  ),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
  fc.string({ unit: 'binary', maxLength: 8 }).map(encodeURIComponent),
  // Raw bytes the HTTP parser lets through (0x21–0xFF): Latin-1 is not UTF-8.
  fc
    .array(fc.integer({ min: 0x21, max: 0xff }), { maxLength: 6 })
    .map((codes) => String.fromCharCode(...codes.filter((c) => c !== 0x3f && c !== 0x23 && c !== 0x2f))),
);

const templates = [
  ...new Set(routes.map((r) => `/api/v1${r.path}`)),
  '/api/v1/docs/assets/:file',
  '/api/v1/openapi.json',
  '/health/live',
  '/api/v1/health/ready',
];
const pathArb = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.constantFrom(...templates), fc.array(segment, { minLength: 3, maxLength: 3 }))
      .map(([t, segs]) => {
        let i = 0;
        return t.replace(/:\w+/g, () => segs[i++]);
      }),
  },
  {
    weight: 1,
    arbitrary: fc.array(segment, { minLength: 1, maxLength: 5 }).map((segs) => `/api/v1/${segs.join('/')}`),
  },
);

const queryValue = fc.oneof(
  fc.constantFrom(
    '1',
    '0',
    '-1',
    '2147483648',
    '1e3',
    'wav',
    'mp3',
    'all',
    'own',
    '',
    '%zz',
    '%',
    'a,b,,',
    '999999999999999',
  ),
  fc.string({ maxLength: 10 }).map(encodeURIComponent),
);
const queryArb = fc
  .array(
    fc.tuple(
      fc.constantFrom(
        'version',
        'limit',
        'cursor',
        'format',
        'scope',
        'types',
        'last_event_id',
        'version[]',
        'limit[a]',
        'x',
        '%zz',
      ),
      queryValue,
    ),
    { maxLength: 4 },
  )
  .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}` : ''));

const header = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const headersArb = fc.record({
  'content-type': header(
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/json; charset=bogus',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/merge-patch+json',
      '*/*',
      'application/json;;;',
      'json',
    ),
  ),
  'content-encoding': header(
    fc.constantFrom('gzip', 'br', 'deflate', 'identity', 'zstd', 'bogus', 'gzip, br', 'GZIP', 'x-gzip'),
  ),
  authorization: header(
    fc.constantFrom(
      'token',
      'other',
      'Bearer',
      'Bearer x.y.z',
      'Basic YTpi',
      'bearer',
      'Bearer eyJhbGciOiJub25lIn0.e30.',
    ),
  ),
  range: header(
    fc.constantFrom('bytes=0-10', 'bytes=-5', 'bytes=10-5', 'bytes=0-0,5-6', 'bytes=x', 'items=0-1', 'bytes=99999999-'),
  ),
  'if-none-match': header(fc.constantFrom('*', '"x"', 'W/"y"', 'junk')),
  'if-range': header(fc.constantFrom('"x"', 'Mon, 01 Jan 2001 00:00:00 GMT', 'junk')),
  'last-event-id': header(fc.constantFrom('0', '999999999', 'abc', '-1', '1e5', '')),
  accept: header(fc.constantFrom('text/event-stream', 'application/json', 'audio/wav', '*/*', 'nothing/here')),
  'x-forwarded-for': header(fc.constantFrom('203.0.113.7', 'garbage', '::1', '1.1.1.1, 2.2.2.2')),
  'x-request-id': header(fc.constantFrom('abc', 'x'.repeat(300), '')),
});

const anything = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
);
const fieldValue = fc.oneof(
  anything,
  fc.constantFrom(
    'f3',
    'm1',
    'f3(2)+m3',
    'f3(0)',
    '+',
    'en-us',
    'xx',
    ADMIN.username,
    ADMIN.password,
    'a long enough password',
    ' ',
    '\u0000',
    '😀'.repeat(3),
  ),
  fc.constant('{voice}'),
);
const bodyFields = fc.record(
  Object.fromEntries(
    [
      'username',
      'password',
      'refresh_token',
      'name',
      'description',
      'base_voice',
      'voice_blend',
      'language',
      'speed',
      'text',
      'voice_id',
    ].map((k) => [k, fieldValue]),
  ),
  { requiredKeys: [] },
);
const bodyArb = fc.oneof(
  fc.constant(undefined),
  bodyFields.map((o) => Buffer.from(JSON.stringify(o))),
  fc.jsonValue({ maxDepth: 3 }).map((v) => Buffer.from(JSON.stringify(v))),
  fc.string({ maxLength: 40 }).map((s) => Buffer.from(`{"text": "${s}`)),
  fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)),
);

const compressors: Record<string, (b: Buffer) => Buffer> = {
  gzip: gzipSync,
  'x-gzip': gzipSync,
  deflate: deflateSync,
  br: brotliCompressSync,
};

const requestArb = fc.record({
  method: fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'HEAD', 'OPTIONS'),
  path: pathArb,
  query: queryArb,
  headers: headersArb,
  body: bodyArb,
  /** Compress the body when it says it is compressed (or lie); send it chunked instead of with a length. */
  compress: fc.boolean(),
  chunked: fc.boolean(),
});
type FuzzRequest = typeof requestArb extends fc.Arbitrary<infer T> ? T : never;

// ---- sending it ----------------------------------------------------------------------------

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

function send(r: FuzzRequest): Promise<Answer> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(r.headers)) if (value !== undefined) headers[name] = value;
  if (headers.authorization === 'token' || headers.authorization === 'other')
    headers.authorization = `Bearer ${headers.authorization === 'token' ? known.token : known.otherToken}`;
  /** Placeholders of the ids made in beforeAll (so that printed failures stay readable). */
  const fill = (text: string) => text.replace(/\{voice\}/g, known.voiceId).replace(/\{synthesis\}/g, known.synthesisId);
  let body: Buffer | undefined = r.body && Buffer.from(fill(r.body.toString('latin1')), 'latin1');
  const encoding = headers['content-encoding']?.toLowerCase();
  if (body && encoding && r.compress && compressors[encoding]) body = compressors[encoding](body);
  // Framed either way explicitly (Node would send a GET's body unframed, which no server can read).
  if (body && r.chunked) headers['transfer-encoding'] = 'chunked';
  else if (body) headers['content-length'] = String(body.length);
  return new Promise<Answer>((resolve, reject) => {
    // A connection per request: an answer sent before the body was read may close its connection.
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: r.method,
        path: fill(`${r.path}${r.query}`),
        headers,
        timeout: 30_000,
        agent: false,
      },
      (res) => {
        const contentType = String(res.headers['content-type'] ?? '');
        if (contentType.startsWith('text/event-stream')) {
          // An event stream that started: its status is the answer.
          res.destroy();
          return resolve({ status: res.statusCode!, contentType, body: '' });
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, contentType, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within 30 s: ${r.method} ${r.path}${r.query}`)));
    req.on('error', reject);
    if (body && r.chunked) {
      req.write(body);
      req.end();
    } else {
      req.end(body);
    }
  });
}

describe('REST fuzz', () => {
  it(`answers ${RUNS} random requests (seed ${SEED}) without a 5xx, every error the error object`, async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        const answer = await send(r);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status >= 500) throw new Error(`${answer.status} ${answer.body}`);
        if (answer.status >= 400 && r.method !== 'HEAD') {
          expect(answer.contentType).toMatch(/^application\/json/);
          expect(JSON.parse(answer.body)).toEqual(
            expect.objectContaining({ error: expect.any(String), message: expect.any(String) }),
          );
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: false },
    );
    // The generator reaches past the first checks: some requests were accepted, many refused in various ways.
    const seen = [...statuses.keys()];
    expect(seen.some((s) => s < 300)).toBe(true);
    for (const status of [400, 401, 404, 405, 415]) expect(seen).toContain(status);
    expect((await api(server.url).get('/health/live')).status).toBe(200);
  });
});
