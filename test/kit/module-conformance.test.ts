// The module conformance suite: one table, a row for every module of the module list
// (subgraphs/index.ts), generated ones included (a module the table does not name gets the
// template's row, built from its routes). One server for the file. For each module:
// - another user's resource is `not_found` (get, change and delete), like an unknown id;
// - every GraphQL field it resolves declares what it needs (or is public), naming scopes of the
//   catalogue composed from the modules' definitions;
// - its per-user cap holds under 50 concurrent creates: exactly the cap is kept, every other
//   create is 409 `conflict` with `details: { limit, max, count }`;
// - a stale version gives the one conflict shape (`details.current_version`);
// - a deleted user's rows go, in batches (of 2 here: the kit's runner counts 2 or more for 3 rows);
// - every change (create, update, delete) emits an event, of a type the module declares with a
//   payload schema its payload matches (modules that declare their event types: lib/kit/typed-events.ts).
import { buildASTSchema, isObjectType, Kind, parse, type GraphQLSchema } from 'graphql';
import type { DataSource } from 'typeorm';
import { buildSubgraphSdls } from '../../bin/compose';
import { composeSupergraph } from '../../gateway/compose';
import { settingKinds } from '../../lib/config';
import { openDatabase } from '../../lib/database/open';
import { JOBS_TABLE } from '../../lib/kit/jobs';
import { backgroundJobBatches } from '../../lib/metrics';
import type { ModuleDefinition } from '../../lib/module';
import { isDeclared, isPublicField, scopeCatalogue } from '../../lib/scopes';
import type { RouteSpec } from '../../rest-facade/route-spec';
import { modules } from '../../subgraphs';
import { EventLog, loggedFor, openLog } from '../helpers/event-log';
import { ApiResponse, createUserAndLogin, login, request } from '../helpers/http';
import { ADMIN, startTestServer, TEST_DB, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

const CAP = 5;
const FIRED = 50;

/** How the suite meets one module: its owned resource over REST, its cap, its tables. */
interface Row {
  /** The collection's path below /api/v1; the resource is `${collection}/${id}`. */
  collection: string;
  /** The i-th create's body. */
  create: (i: number) => unknown;
  /** A create that is not JSON: the i-th create's raw body and its query (imports take the file itself). */
  rawCreate?: (i: number) => { query: string; body: string; contentType: string };
  /** A change's body (PATCH at `?version=N`); none: the resource is not changed, only deleted. */
  update?: unknown;
  /** Whether GET `${collection}/${id}` exists (API keys have none). */
  get?: boolean;
  /** Deleting names the version (`?version=N`). */
  versionedDelete?: boolean;
  /** Its per-user cap setting, set to CAP for the file; none: its cap is not configurable. */
  cap?: string;
  /** false: its rows go with the user in the producer's transaction, not in the kit's batches. */
  batched?: boolean;
  /** The module's tables holding a user's rows, and their owner column. */
  tables: { table: string; owner?: string }[];
  /**
   * The event types of a create, an update and a delete (a module with a trash: the move to it),
   * and any a delete writes after its own (`alsoDeleted`).
   */
  events: { created: string; updated?: string; deleted: string; alsoDeleted?: string[] };
}

const ROWS: Record<string, Row> = {
  auth: {
    collection: '/auth/api-keys',
    create: (i) => ({ name: `key ${i}`, scopes: ['notes:read'] }),
    get: false,
    versionedDelete: false,
    batched: false,
    cap: 'API_KEYS_PER_USER',
    tables: [{ table: 'api_keys', owner: 'user_id' }],
    events: { created: 'api_key.created', deleted: 'api_key.revoked', alsoDeleted: ['session.revoked'] },
  },
  tts: {
    collection: '/tts/voices',
    create: (i) => ({ name: `voice ${i}`, base_voice: 'f3' }),
    update: { name: 'renamed' },
    cap: 'VOICES_PER_USER',
    tables: [{ table: 'voices' }],
    events: { created: 'voice.created', updated: 'voice.updated', deleted: 'voice.deleted' },
  },
  hubs: {
    collection: '/hubs',
    create: (i) => ({ name: `hub ${i}` }),
    update: { name: 'renamed' },
    cap: 'HUBS_PER_USER',
    tables: [{ table: 'hubs' }],
    events: { created: 'hub.created', updated: 'hub.updated', deleted: 'hub.trashed' }, // a delete goes to the trash
  },
  integrations: {
    collection: '/integrations/webhooks',
    create: () => ({ url: 'http://127.0.0.1:9/hook', event_types: ['note.*'] }),
    update: { description: 'changed' },
    cap: 'WEBHOOKS_PER_USER',
    tables: [{ table: 'webhooks' }],
    events: { created: 'webhook.created', updated: 'webhook.updated', deleted: 'webhook.deleted' },
  },
  notes: {
    collection: '/notes',
    create: (i) => ({ title: `note ${i}`, body: 'text' }),
    update: { title: 'renamed' },
    cap: 'NOTES_PER_USER',
    tables: [{ table: 'notes' }],
    events: { created: 'note.created', updated: 'note.updated', deleted: 'note.trashed' }, // a delete goes to the trash
  },
  // Imports: the resource a user makes is an import job (the file sent raw); one export runs at a time, so not that.
  transfer: {
    collection: '/imports',
    create: () => undefined,
    rawCreate: (i) => ({
      query: '?format=netscape',
      contentType: 'text/html',
      body: `<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n<DT><A HREF="https://example.com/${i}">link ${i}</A>\n</DL><p>\n`,
    }),
    tables: [{ table: 'transfer_jobs' }],
    events: { created: 'import.created', deleted: 'import.deleted' },
  },
  vault: {
    collection: '/vault/rules',
    create: (i) => ({ name: `rule ${i}`, when: { kind: 'text' }, then: { tags: ['t'] } }),
    update: { name: 'renamed' },
    cap: 'VAULT_RULES_PER_USER',
    tables: [{ table: 'vault_rules' }],
    events: { created: 'vault.rule.created', updated: 'vault.rule.updated', deleted: 'vault.rule.deleted' },
  },
};

/**
 * The row of a module made by `npm run new-subgraph`, read from its routes and settings as the
 * template writes them: `create<Entity>` POSTs `{ title }` to the collection, `update<Entity>`
 * PATCHes it, its events are `<entity>.created|updated|deleted`, and its cap is the `…_PER_USER`
 * setting its fragment declares.
 */
function templateRow(m: ModuleDefinition): Row {
  const routes = m.routes?.routes ?? [];
  const create = routes.find((r: RouteSpec) => r.method === 'post' && /^create/.test(r.operationId));
  if (!create) throw new Error(`no row for the module ${m.name}, and no create route to build one from`);
  const entity = create.operationId.replace(/^create/, '');
  const snake = entity.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
  const cap = Object.keys(m.settings?.(settingKinds()) ?? {}).find((name) => name.endsWith('_PER_USER'));
  return {
    collection: create.path,
    create: (i) => ({ title: `${snake} ${i}` }),
    update: { title: 'renamed' },
    cap,
    tables: [{ table: `${snake}s` }],
    events: { created: `${snake}.created`, updated: `${snake}.updated`, deleted: `${snake}.deleted` },
  };
}

const table = modules.map((m) => ({ module: m, name: m.name, row: ROWS[m.name] ?? templateRow(m) }));

let server: TestServer;
let admin: string;
let log: EventLog;
const dbs = new Map<string, DataSource>();
let users = 0;

beforeAll(async () => {
  const caps = Object.fromEntries(table.flatMap(({ row }) => (row.cap ? [[row.cap, String(CAP)]] : [])));
  server = await startTestServer({
    ...caps,
    SUBGRAPHS: '',
    SYNTHESIS_CONCURRENCY: '0',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
    // A deleted user's rows go in several batches.
    JOBS_BATCH_ROWS: '2',
    NOTES_BATCH_ROWS: '2',
  });
  admin = (await login(server.url, ADMIN)).access_token;
  log = await openLog({ ...server.config, MIGRATIONS_RUN: false });
  for (const { name } of table)
    dbs.set(
      name,
      await openDatabase({ ...server.config, MIGRATIONS_RUN: false }, { name, entities: [], migrations: [] }),
    );
}, 180_000);

afterAll(async () => {
  for (const db of dbs.values()) await db.destroy();
  await log?.close();
  await server?.close();
});

const newUser = async (what: string) => createUserAndLogin(server.url, admin, `conf-${what}-${++users}`);
const send = (token: string, method: string, path: string, body?: unknown) =>
  request(server.url, method, `/api/v1${path}`, { token, body });
const versioned = (row: Row, path: string, version: number) =>
  row.versionedDelete === false ? path : `${path}?version=${version}`;

async function created(token: string, row: Row, i = 0): Promise<{ id: string }> {
  const raw = row.rawCreate?.(i);
  const res = raw
    ? await request(server.url, 'POST', `/api/v1${row.collection}${raw.query}`, {
        token,
        raw: raw.body,
        headers: { 'content-type': raw.contentType },
      })
    : await send(token, 'POST', row.collection, row.create(i));
  expect({ status: res.status, body: res.body }).toEqual({ status: expect.any(Number), body: expect.anything() });
  expect([200, 201, 202]).toContain(res.status);
  return res.body as { id: string };
}

const ownedRows = (name: string, row: Row, userId: string) =>
  Promise.all(
    row.tables.map(({ table: t, owner = 'owner_id' }) =>
      dbs
        .get(name)!
        .query(`SELECT COUNT(*) AS n FROM ${t} WHERE ${owner} = ?`, [userId])
        .then((r: { n: number | string }[]) => Number(r[0].n)),
    ),
  ).then((counts) => counts.reduce((a, b) => a + b, 0));

/** The module's cascade jobs not yet done (none where it has no job queue). */
const cascadesPending = (name: string) =>
  dbs
    .get(name)!
    .query(`SELECT COUNT(*) AS n FROM ${JOBS_TABLE} WHERE kind = ?`, [`${name}.user_deleted`])
    .then((r: { n: number | string }[]) => Number(r[0].n));

/** Batches the kit's runner committed for the module's cascade, in this process. */
const cascadeBatches = async (name: string) =>
  (await backgroundJobBatches.get()).values.find((v) => v.labels.kind === `${name}.user_deleted`)?.value ?? 0;

describe.each(table)('the $name module', ({ module, name, row }) => {
  it("answers another user's resource as not_found, like an unknown id", async () => {
    const owner = await newUser(`${name}-owner`);
    const other = await newUser(`${name}-other`);
    const { id } = await created(owner.token, row);
    const one = `${row.collection}/${id}`;
    const refusals: ApiResponse[] = [];
    if (row.get !== false) refusals.push(await send(other.token, 'GET', one));
    if (row.update) refusals.push(await send(other.token, 'PATCH', `${one}?version=1`, row.update));
    refusals.push(await send(other.token, 'DELETE', versioned(row, one, 1)));
    for (const res of refusals)
      expect({ status: res.status, error: res.body?.error }).toEqual({ status: 404, error: 'not_found' });
    // Still there for its owner.
    if (row.get !== false) expect((await send(owner.token, 'GET', one)).status).toBe(200);
  });

  (row.cap ? it : it.skip)(
    `holds its cap under ${FIRED} concurrent creates`,
    async () => {
      const { token, id: userId } = await newUser(`${name}-capped`);
      for (let i = 0; i < CAP - 1; i++) await created(token, row, i);
      const answers = await Promise.all(
        Array.from({ length: FIRED }, (_, i) => send(token, 'POST', row.collection, row.create(CAP + i))),
      );
      const accepted = answers.filter((a) => a.status >= 200 && a.status < 300);
      const refused = answers.filter((a) => a.status === 409);
      if (refused.length !== FIRED - 1)
        console.log(name, [...new Set(answers.map((a) => `${a.status} ${a.text.slice(0, 200)}`))]);
      expect({ accepted: accepted.length, refused: refused.length }).toEqual({ accepted: 1, refused: FIRED - 1 });
      for (const r of refused)
        expect(r.body).toMatchObject({ error: 'conflict', details: { limit: row.cap, max: CAP, count: CAP } });
      expect(await ownedRows(name, row, userId)).toBe(CAP);
    },
    120_000,
  );

  (row.update ? it : it.skip)('gives a stale version the one conflict shape', async () => {
    const { token } = await newUser(`${name}-stale`);
    const { id } = await created(token, row);
    const one = `${row.collection}/${id}`;
    expect((await send(token, 'PATCH', `${one}?version=1`, row.update)).status).toBe(202);
    for (const stale of [
      await send(token, 'PATCH', `${one}?version=1`, row.update),
      await send(token, 'DELETE', `${one}?version=1`),
    ])
      expect({ status: stale.status, body: stale.body }).toEqual({
        status: 409,
        body: expect.objectContaining({ error: 'conflict', details: expect.objectContaining({ current_version: 2 }) }),
      });
  });

  it(`removes a deleted user's rows${row.batched === false ? '' : ', in batches,'} and no one else's`, async () => {
    const doomed = await newUser(`${name}-doomed`);
    const keeper = await newUser(`${name}-keeper`);
    for (let i = 0; i < 3; i++) await created(doomed.token, row, i);
    await created(keeper.token, row);
    expect(await ownedRows(name, row, doomed.id)).toBe(3);
    // Counted from a quiet queue, so the batches seen are this user's: 3 rows at 2 a batch take 2.
    const batched = row.batched !== false;
    if (batched) await until(async () => (await cascadesPending(name)) === 0, `${name}: earlier cascades to finish`);
    const before = await cascadeBatches(name);
    expect((await send(admin, 'DELETE', `/admin/users/${doomed.id}?version=1`)).status).toBe(202);
    await until(async () => (await ownedRows(name, row, doomed.id)) === 0, `${name}: the deleted user's rows to go`);
    expect(await ownedRows(name, row, keeper.id)).toBe(1);
    if (batched) {
      await until(async () => (await cascadesPending(name)) === 0, `${name}: the cascade to finish`);
      expect((await cascadeBatches(name)) - before).toBeGreaterThanOrEqual(2);
    }
  }, 90_000);

  if (!module.events?.length)
    it.todo(`emits a typed event for every change (the ${name} module declares no event types yet)`);
  (module.events?.length ? it : it.skip)('emits a typed event for every change', async () => {
    const { token } = await newUser(`${name}-events`);
    const { id } = await created(token, row);
    const one = `${row.collection}/${id}`;
    let version = 1;
    if (row.update) {
      expect((await send(token, 'PATCH', `${one}?version=1`, row.update)).status).toBe(202);
      version = 2;
    }
    expect([200, 202, 204]).toContain((await send(token, 'DELETE', versioned(row, one, version))).status);
    const wanted = [
      row.events.created,
      ...(row.update ? [row.events.updated!] : []),
      row.events.deleted,
      ...(row.events.alsoDeleted ?? []),
    ];
    const events = await until(async () => {
      const logged = await loggedFor(log, id);
      return logged.length >= wanted.length ? logged : undefined;
    }, `${name}: the events of ${id}`);
    expect(events.map((e) => e.type)).toEqual(wanted);
    const declared = new Map((module.events ?? []).map((e) => [e.type, e]));
    for (const e of events) {
      const type = declared.get(e.type);
      expect({ type: e.type, declared: Boolean(type) }).toEqual({ type: e.type, declared: true });
      expect({ type: e.type, payload: type!.parse(e.payload) === null ? 'does not match' : 'matches' }).toEqual({
        type: e.type,
        payload: 'matches',
      });
    }
  });
});

// Composition reads no database: once, on SQLite.
(TEST_DB === 'sqlite' ? describe : describe.skip)('scope declarations, by module', () => {
  let schema: GraphQLSchema;
  beforeAll(async () => {
    const sdls = await buildSubgraphSdls([]);
    const supergraph = composeSupergraph(sdls.map((s) => ({ ...s, url: `http://${s.name}.invalid/graphql` })));
    schema = buildASTSchema(parse(supergraph, { noLocation: true }), { assumeValidSDL: true });
  }, 120_000);

  /** The graphs (`@join__field(graph:)`, else the type's `@join__type`) that resolve a field, in upper case. */
  function fieldsOf(graph: string): { type: string; field: string; scopes: string[] }[] {
    const out: { type: string; field: string; scopes: string[] }[] = [];
    const graphsOf = (directives: readonly { name: { value: string }; arguments?: readonly unknown[] }[] = []) =>
      directives.flatMap((d) => {
        if (d.name.value !== 'join__field' && d.name.value !== 'join__type') return [];
        const arg = (d.arguments as { name: { value: string }; value: { kind: string; value?: string } }[]).find(
          (a) => a.name.value === 'graph',
        );
        return arg?.value.kind === Kind.ENUM ? [arg.value.value!] : [];
      });
    const scopesOf = (directives: readonly { name: { value: string } }[] = []) =>
      JSON.stringify(directives)
        .match(/"value":"[a-z]+:[a-z]+"/g)
        ?.map((s) => s.slice(9, -1)) ?? [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('_') || /^(join|link)__/.test(type.name)) continue;
      const typeGraphs = [type.astNode, ...(type.extensionASTNodes ?? [])].flatMap((n) => graphsOf(n?.directives));
      const typeScopes = [type.astNode, ...(type.extensionASTNodes ?? [])].flatMap((n) => scopesOf(n?.directives));
      for (const field of Object.values(type.getFields())) {
        const fieldGraphs = graphsOf(field.astNode?.directives);
        const graphs = fieldGraphs.length ? fieldGraphs : typeGraphs;
        if (graphs.includes(graph))
          out.push({
            type: type.name,
            field: field.name,
            scopes: [...scopesOf(field.astNode?.directives), ...typeScopes],
          });
      }
    }
    return out;
  }

  it.each(table)('the $name module: every field it resolves declares its scopes (or is public)', ({ name }) => {
    const fields = fieldsOf(name.toUpperCase());
    expect(fields.length).toBeGreaterThan(0);
    const undeclared = fields
      .filter((f) => !isDeclared(schema, f.type, f.field) && !isPublicField(f.type, f.field))
      .map((f) => `${f.type}.${f.field}`);
    expect(undeclared).toEqual([]);
    const catalogue = new Set(scopeCatalogue().scopes);
    const unknown = fields.flatMap((f) =>
      f.scopes.filter((s) => !catalogue.has(s)).map((s) => `${f.type}.${f.field}: ${s}`),
    );
    expect(unknown).toEqual([]);
  });
});
