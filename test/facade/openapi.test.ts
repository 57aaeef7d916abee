// The OpenAPI document and the GraphQL operations of the REST facade come from one source (the
// route table and its schemas): the document states the live configuration's limits and the
// error table's codes, names every operation, declares no defaults in request bodies; and every
// route's GraphQL operation is valid against the schema the gateway serves, checked here without
// running the routes.
// Run once, on SQLite (DATABASE_INCIDENTAL in jest.config.js): the server only answers the
// introspection query the operations are checked against.
import 'reflect-metadata';
import { buildClientSchema, getIntrospectionQuery, GraphQLSchema, parse, validate } from 'graphql';
import { loadConfig } from '../../lib/config';
import { ERROR_STATUS } from '../../lib/errors';
import { MAX_PAGE_SIZE as GRAPHQL_MAX_PAGE_SIZE } from '../../lib/paging';
import { configured, fillConfigured } from '../../rest-facade/configured';
import { graphqlOperation } from '../../rest-facade/graphql-mapping';
import { OpenApiDocument, openApiDocument } from '../../rest-facade/openapi';
import type { RouteSpec } from '../../rest-facade/route-spec';
import { MAX_PAGE_SIZE, PAGE_QUERY } from '../../rest-facade/route-parts';
import { routeTable } from '../../rest-facade/route-table';
import { JsonSchema, pageSchema } from '../../rest-facade/schemas';
import { compileValidator } from '../../rest-facade/validation';
import { facadeRoutes } from '../../subgraphs';
import { SpeechRequest } from '../../subgraphs/tts/openai/speech-openapi';
import { api } from '../helpers/http';
import { startTestServer, TestServer } from '../helpers/server';

const table = routeTable(facadeRoutes);
const { routes, mounted } = table;
const documentWith = (env: Record<string, string> = {}) => openApiDocument(table, loadConfig(env));
const doc = documentWith();

const operations = (d: OpenApiDocument) =>
  Object.entries(d.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, method, op })),
  );

const resolve = (schema: JsonSchema): JsonSchema =>
  typeof schema.$ref === 'string' ? doc.components.schemas[schema.$ref.split('/').pop()!] : schema;

/** Where a schema declares a `default`, through references (a property that is itself named "default" is no declaration). */
function defaultsIn(schema: unknown, at: string): string[] {
  if (Array.isArray(schema)) return schema.flatMap((s, i) => defaultsIn(s, `${at}[${i}]`));
  if (!schema || typeof schema !== 'object') return [];
  const s = resolve(schema as JsonSchema);
  return Object.entries(s).flatMap(([key, value]) => {
    if (key === 'default') return [at];
    if (key === 'properties')
      return Object.entries(value as object).flatMap(([name, p]) => defaultsIn(p, `${at}.${name}`));
    return typeof value === 'object' ? defaultsIn(value, `${at}/${key}`) : [];
  });
}

describe('the OpenAPI document', () => {
  it("lists the error table's codes, every one of them, as ErrorObject.error", () => {
    const codes = (doc.components.schemas.ErrorObject.properties as Record<string, JsonSchema>).error.enum as string[];
    expect([...codes].sort()).toEqual(Object.keys(ERROR_STATUS).sort());
    expect(codes).toContain('range_not_satisfiable'); // what the audio route's 416 answers
  });

  it('names every operation with an operationId of its own, stable and readable', () => {
    const ids = operations(doc).map(({ where, op }) => [where, op.operationId]);
    expect(ids.filter(([, id]) => typeof id !== 'string' || !/^[a-z][A-Za-z]+$/.test(id))).toEqual([]);
    expect(new Set(ids.map(([, id]) => id)).size).toBe(ids.length);
    // Generated SDKs name their methods after these: renaming one breaks its callers.
    expect(Object.fromEntries(ids)).toMatchObject({
      'POST /api/v1/tts/voices': 'createVoice',
      'GET /api/v1/tts/voices': 'listVoices',
      'GET /api/v1/tts/voices/{voiceId}': 'getVoice',
      'PATCH /api/v1/tts/voices/{voiceId}': 'updateVoice',
      'DELETE /api/v1/tts/voices/{voiceId}': 'deleteVoice',
      'POST /api/v1/auth/login': 'login',
      'GET /api/v1/events': 'streamEvents',
      'POST /v1/audio/speech': 'createSpeech',
      'GET /health/live': 'getLiveness',
      'GET /api/v1/health/live': 'getLivenessUnderApi',
    });
  });

  it('declares no default in PATCH bodies, nor in any request body (generated clients would always send it)', () => {
    // JSON bodies (an upload's body is the raw file: application/octet-stream, no schema of fields).
    const bodies = operations(doc).filter(({ op }) => op.requestBody?.content['application/json']);
    expect(bodies.map(({ method }) => method)).toContain('patch');
    const found = bodies.flatMap(({ where, op }) =>
      defaultsIn(op.requestBody!.content['application/json'].schema, where),
    );
    expect(found).toEqual([]);
    // The check finds one where there is one.
    expect(defaultsIn({ type: 'object', properties: { speed: { type: 'number', default: 1 } } }, 'PATCH x')).toEqual([
      'PATCH x.speed',
    ]);
  });

  it('states the limits of the configuration it is served with', () => {
    const text = (d: OpenApiDocument) => JSON.stringify(d);
    const synthesize = (d: OpenApiDocument) => d.paths['/api/v1/tts/syntheses'].post.description as string;
    expect(synthesize(doc)).toContain('At most 10 of your syntheses');
    expect(text(doc)).not.toContain('{{config:');

    const other = documentWith({
      SYNTHESIS_QUEUE_PER_USER: '7',
      STREAM_TICKET_TTL_SECONDS: '45',
      BODY_LIMIT_BYTES: String(1 << 20),
      EVENT_RETENTION_SECONDS: String(2 * 86_400),
      ACCESS_TOKEN_TTL_SECONDS: '1800',
      GRAPHQL_MAX_DEPTH: '9',
      LOGIN_MAX_FAILURES_PER_USER: '4',
      EVENT_STREAMS_PER_USER: '3',
    });
    expect(synthesize(other)).toContain('At most 7 of your syntheses');
    expect(other.paths['/api/v1/auth/stream-ticket'].post.description).toContain('valid for 45 s');
    expect(other.paths['/api/v1/auth/login'].post.description).toContain('4 failed attempts');
    expect(other.paths['/api/v1/events'].get.description).toMatch(/2 days.*At most 3 streams/);
    expect(other.info.description).toMatch(/1 MiB.*depth 9/);
    const tokens = other.components.schemas.TokenSet.properties as Record<string, JsonSchema>;
    expect([tokens.access_token.description, tokens.expires_in.example]).toEqual([
      'JWT access token, valid for 30 minutes',
      1800,
    ]);
    expect(text(other)).not.toContain('{{config:');
  });

  it('writes configured values in words a reader expects', () => {
    const config = loadConfig({
      EVENT_RETENTION_SECONDS: String(7 * 86_400),
      BODY_LIMIT_BYTES: String(256 * 1024),
      GRAPHQL_MAX_TOKENS: '10000',
      SYNTHESIS_MAX_AUDIO_SECONDS: '90',
    });
    const fill = (text: string) => fillConfigured(text, config);
    expect(fill(`kept ${configured('EVENT_RETENTION_SECONDS', 'duration')}`)).toBe('kept 7 days');
    expect(fill(configured('BODY_LIMIT_BYTES', 'bytes'))).toBe('256 KiB');
    expect(fill(configured('GRAPHQL_MAX_TOKENS'))).toBe('10,000');
    expect(fill(configured('SYNTHESIS_MAX_AUDIO_SECONDS', 'duration'))).toBe('90 seconds');
    expect(fill(configured('GRAPHQL_MAX_TOKENS', 'number'))).toBe(10000);
  });

  it('states lengths after trimming as the server checks them', () => {
    const validate = compileValidator(routes.find((r) => r.operationId === 'login')!);
    const problems = (username: string) =>
      validate({ params: {}, query: {}, body: { username, password: 'long enough' } });
    expect(problems(`  ${'u'.repeat(64)} \n`)).toBeNull();
    expect(problems(` ${'u'.repeat(65)} `)).toEqual({ username: [expect.stringMatching(/64/)] });
    const pattern = new RegExp(
      (doc.components.schemas.LoginRequest.properties as Record<string, JsonSchema>).username.pattern as string,
      'u',
    );
    expect([
      pattern.test(`  ${'u'.repeat(64)} \n`),
      pattern.test(` ${'u'.repeat(65)} `),
      pattern.test('   '),
      pattern.test('a'),
    ]).toEqual([true, false, false, true]);
  });

  it("compiles every route's request schemas (compiled on a route's first request, not at start)", () => {
    const failures = [...routes, { operationId: 'createSpeech', body: SpeechRequest } as RouteSpec].flatMap((route) => {
      try {
        compileValidator(route)({ params: {}, query: {}, body: {} });
        return [];
      } catch (err) {
        return [`${route.operationId}: ${(err as Error).message}`];
      }
    });
    expect(failures).toEqual([]);
  });

  it('pages every list the same way: one page query, one page schema', () => {
    expect(MAX_PAGE_SIZE).toBe(GRAPHQL_MAX_PAGE_SIZE);
    const lists = routes.filter((r) => (r.response.properties as Record<string, unknown> | undefined)?.next_cursor);
    expect(lists.map((r) => r.operationId).sort()).toEqual([
      'listAllApiKeys',
      'listApiKeys',
      'listHubs',
      'listImports',
      'listNoteBacklinks',
      'listNotes',
      'listSessions',
      'listSyntheses',
      'listTrash',
      'listUsers',
      'listVaultItems',
      'listVoices',
      'listWebhookDeliveries',
      'listWebhooks',
    ]);
    for (const route of lists) {
      const properties = route.query!.schema.properties as Record<string, JsonSchema>;
      expect([route.operationId, properties.limit, properties.cursor]).toEqual([
        route.operationId,
        ...Object.values(PAGE_QUERY.schema.properties as object),
      ]);
      const item = (route.response.properties as Record<string, JsonSchema>).items.items as JsonSchema;
      expect(route.response).toEqual(pageSchema(item));
    }
  });
});

describe("every route's GraphQL operation", () => {
  let server: TestServer;
  let schema: GraphQLSchema;

  beforeAll(async () => {
    // The schema the facade's operations run against: the composed supergraph with what is served beside it (events).
    server = await startTestServer();
    const introspection = await api(server.url).post('/graphql', { query: getIntrospectionQuery() });
    expect(introspection.body.errors).toBeUndefined();
    schema = buildClientSchema(introspection.body.data);
  });
  afterAll(() => server?.close());

  const problems = (query: string) => validate(schema, parse(query)).map((e) => e.message);

  it('is valid against the composed schema: fields, arguments and variable types', () => {
    const operationsOf = (route: RouteSpec) => [
      graphqlOperation(route).query,
      ...(route.download ? [route.download.chunk] : []),
      ...(route.download?.stream ? [route.download.stream.query] : []),
    ];
    const invalid = routes
      .flatMap((route) => operationsOf(route).map((query) => [route.operationId, query, problems(query)] as const))
      .filter(([, , p]) => p.length);
    expect(invalid).toEqual([]);
    // The endpoints beside /api/v1 send the operations they declare.
    expect(mounted.map((m) => m.path)).toContain('/v1/audio/speech');
    const invalidMounted = mounted
      .flatMap((m) => m.operations.map((query) => [m.path, query, problems(query)] as const))
      .filter(([, , p]) => p.length);
    expect(invalidMounted).toEqual([]);
  });

  it('is checked for real: a REST name that is no GraphQL field, or a wrong argument type, is found', () => {
    const voice = routes.find((r) => r.operationId === 'getVoice')!;
    const misnamed = { ...voice, response: { type: 'object', properties: { id: {}, voice_name: {} } } };
    expect(problems(graphqlOperation(misnamed).query)).toEqual([expect.stringMatching(/voiceName/)]);
    const mistyped = { ...voice, graphql: { ...voice.graphql, args: { id: { type: 'Int!', value: () => 1 } } } };
    expect(problems(graphqlOperation(mistyped).query)).toEqual([expect.stringMatching(/\$id/)]);
  });
});
