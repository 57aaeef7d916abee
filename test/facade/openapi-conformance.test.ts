// The OpenAPI document against the running server, driven by the document alone: for every
// operation, requests generated from its schemas (parameters, headers, bodies; `x-catalog`
// values from the catalog it links to) and then broken on purpose. Every answer's status must
// be one the document lists for that operation, and its JSON body must match the documented
// schema field for field (no undocumented field); a request the document calls valid must
// never be refused as invalid (400, 413, 415). The exchanges pass through Stoplight Prism's
// validating proxy, which checks them against the document by its own reading: it must report no
// violation of a response, nor of a request the document calls valid.
import crypto from 'node:crypto';
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import RandExp from 'randexp';
import { api, createUserAndLogin, login, request } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { strict } from '../helpers/openapi';
import { PrismProxy, startPrismProxy, violations } from '../helpers/prism';

type Schema = Record<string, any>;
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, any>;
  security?: object[];
}

let server: TestServer;
let prism: PrismProxy;
let doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };
let token: string;
let catalogs: Record<string, string[]>;
const known: Record<string, string[]> = {}; // ids of real resources, to reach 200s as well as 404s

/** A seeded generator, so that a failure can be replayed (SEED is printed with it). */
const SEED = Number(process.env.CONFORMANCE_SEED ?? Date.now() % 100000);
let state = SEED;
const random = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));

const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
ajv.addFormat('double', true);
ajv.addFormat('binary', true);
const compiled = new Map<Schema, ValidateFunction>();
/** The document's validity, as the document states it (x-catalog included). */
function documentSays(schema: Schema, value: unknown): boolean {
  let validate = compiled.get(schema);
  if (!validate)
    compiled.set(
      schema,
      (validate = ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components/g, '"doc#/components')))),
    );
  return validate(value) && catalogsAgree(schema, value);
}
const resolve = (schema: Schema): Schema =>
  schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema;

function catalogsAgree(schema: Schema, value: any): boolean {
  schema = resolve(schema);
  if (schema['x-catalog'] && typeof value === 'string') {
    const names = catalogs[schema['x-catalog'].values].map((n) => n.toLowerCase());
    const parts = schema.pattern ? value.split('+').map((p) => p.replace(/\(.*\)$/, '')) : [value];
    return parts.every((p) => names.includes(p.toLowerCase()));
  }
  if (schema.properties && value && typeof value === 'object') {
    return Object.entries(schema.properties).every(([k, s]) => !(k in value) || catalogsAgree(s as Schema, value[k]));
  }
  return true;
}

/** A value the schema allows (most of the time; the document has the last word). */
function generate(schema: Schema): any {
  schema = resolve(schema);
  if (schema['x-catalog']) {
    const values = catalogs[schema['x-catalog'].values];
    if (!schema.pattern) return pick(values);
    return Array.from({ length: int(1, 3) }, () => pick(values) + pick(['', '', '(2)', '(0.5)', '(100)'])).join('+');
  }
  if (schema.enum) return pick(schema.enum.filter((v: unknown) => v !== null));
  switch (schema.type) {
    case 'integer':
      return int(schema.minimum ?? 0, Math.min(schema.maximum ?? 1000, (schema.minimum ?? 0) + 1000));
    case 'number':
      return (
        Math.round((schema.minimum ?? 0) + random() * ((schema.maximum ?? 100) - (schema.minimum ?? 0)) * 100) / 100
      );
    case 'boolean':
      return random() < 0.5;
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [name, s] of Object.entries(schema.properties ?? {})) {
        if (schema.required?.includes(name) || random() < 0.5) out[name] = generate(s as Schema);
      }
      for (const branch of schema.oneOf ? [pick(schema.oneOf as Schema[])] : []) {
        for (const name of branch.required ?? []) out[name] ??= generate(schema.properties[name]);
      }
      return out;
    }
    default: {
      if (schema.format === 'uuid') return pick(known[JSON.stringify(schema)] ?? []) ?? crypto.randomUUID();
      if (schema.format === 'date-time') return new Date().toISOString();
      if (schema.format === 'byte') {
        const bytes = Array.from({ length: 1 + Math.floor(random() * 64) }, () => Math.floor(random() * 256));
        return Buffer.from(bytes).toString('base64');
      }
      const min = schema.minLength ?? 0;
      const max = Math.min(schema.maxLength ?? 60, 10_000);
      // Lengths at and near the documented bounds as often as short ones: that is where documents and servers disagree.
      const r = random();
      const length =
        r < 0.3 ? max : r < 0.45 ? Math.max(min, max - int(0, 2)) : r < 0.55 ? min : int(min, Math.min(max, min + 40));
      if (schema.pattern && schema.pattern !== '\\S') {
        const r = new RandExp(schema.pattern);
        r.max = 8;
        r.randInt = (a: number, b: number) => int(a, b);
        return r.gen();
      }
      const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.éß漢字😀';
      let text = Array.from({ length }, () => pick([...chars])).join('');
      if (schema.pattern === '\\S' && !/\S/.test(text)) text = `x${text.slice(1)}`;
      // A search's words are counted (`x-max-terms`, SEARCH_MAX_TERMS): at most that many.
      const terms = schema['x-max-terms'];
      if (typeof terms === 'number') text = text.trim().split(/\s+/).slice(0, terms).join(' ') || 'x';
      return [...text].slice(0, max).join('');
    }
  }
}

/** Ways to break a valid body or parameter; each is checked against the document before use. */
function breakings(schema: Schema, value: any): any[] {
  schema = resolve(schema);
  const out: any[] = [];
  if (schema.type === 'object' && value && typeof value === 'object') {
    for (const name of schema.required ?? [])
      out.push(Object.fromEntries(Object.entries(value).filter(([k]) => k !== name)));
    for (const [name, s] of Object.entries(schema.properties ?? {}))
      for (const bad of breakings(s as Schema, value[name] ?? generate(s as Schema)))
        out.push({ ...value, [name]: bad });
    return out;
  }
  if (schema.type === 'string') {
    out.push(12345, '');
    if (schema.maxLength !== undefined) out.push('y'.repeat(schema.maxLength + 1));
    if (schema.pattern || schema.format) out.push('not a valid %value%');
  }
  if (schema.type === 'integer' || schema.type === 'number') {
    out.push('many');
    if (schema.minimum !== undefined) out.push(schema.minimum - 1);
    if (schema.maximum !== undefined) out.push(schema.maximum + 1);
    if (schema.type === 'integer') out.push(1.5);
  }
  return out;
}

const responseValidators = new Map<string, ValidateFunction>();
function responseValidator(schema: Schema): ValidateFunction {
  const text = JSON.stringify(schema);
  let validate = responseValidators.get(text);
  if (!validate)
    responseValidators.set(
      text,
      (validate = ajv.compile(strict(JSON.parse(text.replace(/"#\/components/g, '"strict#/components'))))),
    );
  return validate;
}

interface Sent {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: unknown;
  /** A raw body (an upload's file), sent as application/octet-stream. */
  raw?: string;
  valid: boolean;
}

async function send(op: Operation, sent: Sent, bearer: string | undefined) {
  const qs = new URLSearchParams(sent.query).toString();
  const headers = { ...sent.headers, ...(bearer && op.security?.length ? { authorization: `Bearer ${bearer}` } : {}) };
  const url = `${sent.path}${qs ? `?${qs}` : ''}`;
  if (op.responses['200']?.content?.['text/event-stream']) {
    // A stream: its status and type tell; then let go of it. Straight to the server: Prism's
    // proxy reads the whole upstream answer before it answers (node-fetch's text()), and an event
    // stream has no end.
    const abort = new AbortController();
    const res = await fetch(`${server.url}${url}`, {
      method: sent.method,
      headers: { ...headers, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    const body = res.headers.get('content-type')?.startsWith('application/json') ? await res.json() : undefined;
    abort.abort();
    return { status: res.status, headers: res.headers, body, text: '' };
  }
  if (sent.raw !== undefined)
    return request(prism.url, sent.method, url, {
      headers: { ...headers, 'content-type': 'application/octet-stream' },
      raw: sent.raw,
    });
  if (sent.body === undefined) return request(prism.url, sent.method, url, { headers });
  return request(prism.url, sent.method, url, {
    headers: { ...headers, 'content-type': 'application/json' },
    raw: JSON.stringify(sent.body),
  });
}

beforeAll(async () => {
  // No rendering (queued jobs are enough), and room for many login attempts from one address.
  server = await startTestServer({
    SYNTHESIS_CONCURRENCY: '0',
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
    LOGIN_MAX_FAILURES_PER_USER: '100000',
  });
  const http = api(server.url);
  doc = (await http.get('/api/v1/openapi.json')).body;
  prism = await startPrismProxy(doc, server.url);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  ajv.addSchema({
    $id: 'strict',
    components: strict(JSON.parse(JSON.stringify(doc.components).replace(/"#\/components/g, '"strict#/components'))),
  });
  const admin = await login(server.url, ADMIN);
  const user = await createUserAndLogin(server.url, admin.access_token, 'conformance');
  token = user.token;
  const voices = (await http.get('/api/v1/tts/base-voices', { token })).body.items as {
    name: string;
    languages: string[];
  }[];
  catalogs = {
    'items[].name': voices.map((v) => v.name),
    'items[].languages[]': [...new Set(voices.flatMap((v) => v.languages))],
  };
  const voice = await http.post('/api/v1/tts/voices', { name: 'Known', base_voice: 'f1' }, { token });
  const synthesis = await http.post('/api/v1/tts/syntheses', { text: 'Known.', voice_id: voice.body.id }, { token });
  // Not the session's own id: a generated DELETE of it would end the session the test runs with.
  known[JSON.stringify({ type: 'string', format: 'uuid' })] = [voice.body.id, synthesis.body.id];
}, 120_000);
afterAll(async () => {
  await prism?.close();
  await server?.close();
});

it('every answer is documented, every documented-valid request is accepted, every JSON body matches its schema', async () => {
  const problems: string[] = [];
  let count = 0;
  let prismRefused = 0; // requests broken on purpose that Prism saw as such: it checks for real
  for (const [template, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!template.startsWith('/api/v1/')) continue;
      const bodySchema = op.requestBody?.content['application/json']?.schema;
      // An upload (an import's file): any bytes are a valid body; a small bookmark file.
      const raw = op.requestBody?.content['application/octet-stream']
        ? '<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n</DL>\n'
        : undefined;
      const cases: Sent[] = [];
      for (let i = 0; i < 8; i++) {
        let path = template;
        const query: Record<string, string> = {};
        const headers: Record<string, string> = {};
        for (const p of op.parameters ?? []) {
          if (p.in === 'header' && /^(Range|If-Range)$/.test(p.name)) continue; // an ignored header cannot be refused
          if (p.schema['x-opaque']) continue; // only what the service handed out (a next_cursor) is valid
          if (!p.required && random() < 0.5) continue;
          // A position past the end of the log is refused (400, documented), like an unknown id is not_found: resume from the start.
          const value = /^(last_event_id|Last-Event-ID)$/.test(p.name) ? pick(['0', '1']) : String(generate(p.schema));
          if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(value));
          else if (p.in === 'query') query[p.name] = value;
          else headers[p.name] = value;
        }
        // `?version=` or `If-Match`, not both (the document cannot say so); the ticket is an alternative to the token.
        if (query.version && headers['If-Match']) delete headers['If-Match'];
        const versioned = op.parameters?.some((p) => p.name === 'If-Match');
        if (versioned && !query.version && !headers['If-Match'])
          query.version = String(generate(op.parameters!.find((p) => p.name === 'version')!.schema));
        delete query.ticket;
        const body = bodySchema ? generate(bodySchema) : undefined;
        const valid =
          (op.parameters ?? []).every((p) => {
            const v = p.in === 'query' ? query[p.name] : p.in === 'header' ? headers[p.name] : 'x';
            return (
              p.in === 'path' || v === undefined || documentSays(p.schema, p.schema.type === 'integer' ? Number(v) : v)
            );
          }) &&
          (!bodySchema || documentSays(bodySchema, body));
        cases.push({ method: method.toUpperCase(), path, query, headers, body, raw, valid });
        if (bodySchema && i < 3)
          for (const bad of breakings(bodySchema, body)) {
            if (!documentSays(bodySchema, bad))
              cases.push({ method: method.toUpperCase(), path, query, headers, body: bad, valid: false });
          }
      }
      for (const sent of cases) {
        // Logging out ends the session: a session of its own for that.
        const bearer = template.endsWith('/auth/logout')
          ? (await login(server.url, { username: 'conformance', password: 'a long enough password' })).access_token
          : token;
        const res = await send(op, sent, bearer);
        count++;
        const where = `${sent.method} ${sent.path} ${JSON.stringify(sent.query)} ${JSON.stringify(sent.headers)} ${JSON.stringify(sent.body)?.slice(0, 200)}`;
        const documented = op.responses[String(res.status)];
        if (!documented) problems.push(`undocumented ${res.status} for ${where}: ${res.text.slice(0, 200)}`);
        if (sent.valid && [400, 413, 415].includes(res.status))
          problems.push(`valid request refused (${res.status} ${res.text.slice(0, 300)}): ${where}`);
        // A request broken on purpose is a violation of course; its answer must still be documented.
        const all = violations(res.headers);
        if (!sent.valid && all.some((v) => v.location[0] === 'request')) prismRefused++;
        const reported = all.filter((v) => sent.valid || v.location[0] !== 'request');
        if (reported.length) problems.push(`Prism: ${JSON.stringify(reported).slice(0, 600)} for ${where}`);
        const schema = documented?.content?.['application/json']?.schema;
        if (schema && res.body !== undefined) {
          const validate = responseValidator(schema);
          if (!validate(res.body))
            problems.push(
              `${res.status} body does not match the document (${ajv.errorsText(validate.errors)}): ${JSON.stringify(res.body).slice(0, 300)} for ${where}`,
            );
        }
      }
    }
  }
  if (problems.length) console.log(`CONFORMANCE_SEED=${SEED}`);
  expect(problems).toEqual([]);
  expect(count).toBeGreaterThan(200);
  expect(prismRefused).toBeGreaterThan(50);
}, 600_000);

describe('what the document says, the server does', () => {
  const http = () => api(server.url);
  // The generated requests may have ended the session (DELETE /auth/sessions, a password change): a new one.
  beforeAll(async () => {
    token = (await login(server.url, { username: 'conformance', password: 'a long enough password' })).access_token;
  });

  it('Last-Event-ID is checked by its pattern, and the error names it (not an internal argument); empty means no position', async () => {
    const bad = await request(server.url, 'GET', '/api/v1/events', { token, headers: { 'last-event-id': 'abc' } });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.details)).toEqual(['Last-Event-ID']);
    expect(bad.text).not.toMatch(/\bafter\b/);
    const parameter = doc.paths['/api/v1/events'].get.parameters!.find((p) => p.name === 'Last-Event-ID')!;
    expect(parameter.schema.pattern).toBe('^(\\d{1,15})?$');
    const abort = new AbortController();
    const empty = await fetch(`${server.url}/api/v1/events`, {
      headers: { authorization: `Bearer ${token}`, 'last-event-id': '' },
      signal: abort.signal,
    });
    expect(empty.status).toBe(200);
    abort.abort();
  });

  it('a synthesis names voice_id or inline settings, exactly one (oneOf), with one message', async () => {
    expect(resolve(doc.components.schemas.SynthesisRequest).oneOf).toHaveLength(2);
    const voice = (await http().post('/api/v1/tts/voices', { name: 'OneOf', base_voice: 'f1' }, { token })).body.id;
    for (const body of [{ text: 'hi', voice_id: voice, speed: 2 }, { text: 'hi' }, { text: 'hi', language: 'en-us' }]) {
      const res = await http().post('/api/v1/tts/syntheses', body, { token });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual({ voice_id: [expect.stringContaining('exactly one')] });
    }
  });

  it('bodies may carry unknown fields (ignored), and the document does not forbid them', async () => {
    for (const name of ['LoginRequest', 'RefreshRequest', 'CreateVoiceRequest', 'SynthesisRequest']) {
      expect(doc.components.schemas[name].additionalProperties).not.toBe(false);
    }
    const res = await http().post(
      '/api/v1/tts/voices',
      { name: 'Extra', base_voice: 'f1', favourite_colour: 'blue' },
      { token },
    );
    expect(res.status).toBe(202);
  });

  it("the limits the server enforces are the document's", async () => {
    const { LoginRequest, CreateVoiceRequest } = doc.components.schemas;
    // Lengths after trimming: 64 (100) characters however much white space surrounds them, and not one more.
    const fits = (schema: Schema, length: number) => documentSays(schema, ` \t${'é'.repeat(length)}  `);
    expect([fits(LoginRequest.properties.username, 64), fits(LoginRequest.properties.username, 65)]).toEqual([
      true,
      false,
    ]);
    expect([fits(CreateVoiceRequest.properties.name, 100), fits(CreateVoiceRequest.properties.name, 101)]).toEqual([
      true,
      false,
    ]);
    expect(documentSays(CreateVoiceRequest.properties.name, '   ')).toBe(false);
    const padded = await http().post(
      '/api/v1/tts/voices',
      { name: `  ${'p'.repeat(100)}  `, base_voice: 'f1' },
      { token },
    );
    expect(padded.status).toBe(202);
    expect(CreateVoiceRequest.properties.base_voice['x-catalog'].href).toBe('/api/v1/tts/base-voices');
    const tooLong = await http().post('/api/v1/tts/voices', { name: 'n'.repeat(101), base_voice: 'f1' }, { token });
    expect(tooLong.body.details).toHaveProperty('name');
    // 100 code points is within the limit, however many UTF-16 units they take.
    const emoji = await http().post('/api/v1/tts/voices', { name: '😀'.repeat(100), base_voice: 'f1' }, { token });
    expect(emoji.status).toBe(202);
  });
});
