// Idempotency-Key on every POST command (CONTRACT.md "Limits"): the table below must name every
// signed-in POST route of the facade's route table, so a new module's POST route fails this test
// until it is listed; each is sent twice with one key and must answer the same twice with one effect.
import crypto from 'node:crypto';
import { loadConfig } from '../../lib/config';
import { IdempotencyStore } from '../../lib/idempotency';
import { LoggedEvent } from '../../lib/event-log';
import { MoreThan } from 'typeorm';
import { routeTable } from '../../rest-facade/route-table';
import { facadeRoutes } from '../../subgraphs';
import { EventLog, loggedFor, openLog, untilLogged } from '../helpers/event-log';
import { api, ApiResponse, createUserAndLogin, login, request } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

const { routes } = routeTable(facadeRoutes);

let server: TestServer;
let http: ReturnType<typeof api>;
let log: EventLog;
let adminToken: string;

beforeAll(async () => {
  server = await startTestServer({ SYNTHESIS_CONCURRENCY: '0' });
  http = api(server.url);
  log = await openLog(server.config);
  adminToken = (await login(server.url, ADMIN)).access_token;
});

afterAll(async () => {
  await log?.close();
  await server?.close();
});

let users = 0;
/** A fresh user and a session of theirs. */
async function freshUser() {
  const username = `idem${++users}_${crypto.randomBytes(3).toString('hex')}`;
  const user = await createUserAndLogin(server.url, adminToken, username);
  return { ...user.tokens, id: user.id, username };
}

/** A fresh user's webhook (at an address the guard refuses: nothing is sent anywhere). */
async function webhookOfFreshUser() {
  const token = (await freshUser()).access_token;
  const res = await http.post(
    '/api/v1/integrations/webhooks',
    { url: 'http://localhost:9/hook', event_types: ['nothing.here'] },
    { token },
  );
  return { token, id: res.body.id as string };
}

const textNode = (x: number) => ({ type: 'text', text: 'a node', x, y: 0, width: 100, height: 50 });

async function hubOfFreshUser() {
  const token = (await freshUser()).access_token;
  const res = await http.post('/api/v1/hubs', { name: 'a hub' }, { token });
  return { token, hubId: res.body.id as string };
}

interface Sample {
  path: string;
  body?: unknown;
  token: string;
  /** Waits until the first request's effects, background work included, are in the event log. */
  settle?: (first: ApiResponse) => Promise<unknown>;
  /**
   * The first request ends the caller's session (a logout): the repeat is refused as any request
   * with that token is (401), still with no second effect.
   */
  endsSession?: boolean;
}

/** A fresh user's note (tagged `old`), logged as created. */
async function noteOfFreshUser() {
  const token = (await freshUser()).access_token;
  const res = await http.post('/api/v1/notes', { title: 'a note', body: 'some text', tags: ['old'] }, { token });
  await untilLogged(log, res.body.id, 'note.created');
  return { token, id: res.body.id as string };
}

/** Waits until `resourceId` has `count` events of one of `types` in the log. */
const untilLoggedTimes = (resourceId: string, types: string[], count: number) =>
  until(
    async () => {
      const events = await loggedFor(log, resourceId);
      return events.filter((e) => types.includes(e.type)).length >= count || undefined;
    },
    `${count} of ${types.join(' / ')} for ${resourceId} in the event log`,
  );

const ENRICHED = ['vault.item.ready', 'vault.item.failed'];

/** A fresh user's vault item, enriched (or failed) already: nothing of it is still to come. */
async function vaultItemOfFreshUser(body: Record<string, unknown>) {
  const token = (await freshUser()).access_token;
  const res = await http.post('/api/v1/vault/items', body, { token });
  await untilLoggedTimes(res.body.id, ENRICHED, 1);
  return { token, id: res.body.id as string };
}

/** One request per signed-in POST route (operationId), made fresh for each run. */
const SAMPLES: Record<string, () => Promise<Sample>> = {
  logout: async () => ({ path: '/api/v1/auth/logout', token: (await freshUser()).access_token, endsSession: true }),
  createStreamTicket: async () => ({ path: '/api/v1/auth/stream-ticket', token: (await freshUser()).access_token }),
  changePassword: async () => ({
    path: '/api/v1/auth/password',
    body: { current_password: 'a long enough password', new_password: 'another long password' },
    token: (await freshUser()).access_token,
  }),
  createUser: async () => ({
    path: '/api/v1/admin/users',
    body: { username: `made${++users}`, password: 'a long enough password' },
    token: adminToken,
  }),
  ...Object.fromEntries(
    (['disable', 'enable', 'unlock'] as const).map((action) => [
      `${action}User`,
      async () => {
        const { id } = await freshUser();
        return { path: `/api/v1/admin/users/${id}/${action}`, token: adminToken };
      },
    ]),
  ),
  createHub: async () => ({ path: '/api/v1/hubs', body: { name: 'h' }, token: (await freshUser()).access_token }),
  startExport: async () => {
    const token = (await freshUser()).access_token;
    return {
      path: '/api/v1/exports',
      body: { include: ['voices'] },
      token,
      // Its end (export.finished) comes later: waited for before the repeat.
      settle: async (first: ApiResponse) =>
        void (await until(
          async () => (await http.get(`/api/v1/exports/${first.body.id}`, { token })).body.state === 'succeeded',
          'the export',
        )),
    };
  },
  importHub: async () => ({
    path: '/api/v1/hubs/import',
    body: { name: 'imported', canvas: { nodes: [], edges: [] } },
    token: (await freshUser()).access_token,
  }),
  addHubNode: async () => {
    const { token, hubId } = await hubOfFreshUser();
    return { path: `/api/v1/hubs/${hubId}/nodes`, body: textNode(0), token };
  },
  addHubEdge: async () => {
    const { token, hubId } = await hubOfFreshUser();
    const [a, b] = await Promise.all(
      [0, 200].map(
        async (x) => (await http.post(`/api/v1/hubs/${hubId}/nodes`, textNode(x), { token })).body.id as string,
      ),
    );
    return { path: `/api/v1/hubs/${hubId}/edges`, body: { from_node: a, to_node: b }, token };
  },
  quickAddToHub: async () => {
    const { token, hubId } = await hubOfFreshUser();
    return { path: `/api/v1/hubs/${hubId}/quick-add`, body: { text: 'quick' }, token };
  },
  createApiKey: async () => ({
    path: '/api/v1/auth/api-keys',
    body: { name: 'script', scopes: ['tts:read'] },
    token: (await freshUser()).access_token,
  }),
  createWebhook: async () => ({
    path: '/api/v1/integrations/webhooks',
    body: { url: 'http://localhost:9/hook', event_types: ['nothing.here'] },
    token: (await freshUser()).access_token,
  }),
  rotateWebhookSecret: async () => {
    const { token, id } = await webhookOfFreshUser();
    return { path: `/api/v1/integrations/webhooks/${id}/rotate-secret`, token };
  },
  testWebhook: async () => {
    const { token, id } = await webhookOfFreshUser();
    return { path: `/api/v1/integrations/webhooks/${id}/test`, token };
  },
  retryWebhookDelivery: async () => {
    const { token, id } = await webhookOfFreshUser();
    await http.post(`/api/v1/integrations/webhooks/${id}/test`, undefined, { token });
    // The address is blocked (no WEBHOOK_ALLOW_HOSTS here): its one attempt is logged at once.
    const attempt = await until(async () => {
      const log = await http.get(`/api/v1/integrations/webhooks/${id}/deliveries`, { token });
      return log.body.items?.[0] as { delivery_id: string } | undefined;
    }, 'the attempt');
    return { path: `/api/v1/integrations/webhooks/deliveries/${attempt.delivery_id}/retry`, token };
  },
  createVoice: async () => ({
    path: '/api/v1/tts/voices',
    body: { name: `v${++users}`, base_voice: 'f3' },
    token: (await freshUser()).access_token,
  }),
  createSynthesis: async () => ({
    path: '/api/v1/tts/syntheses',
    body: { text: 'Hello there.', base_voice: 'f3' },
    token: (await freshUser()).access_token,
  }),
  createRole: async () => ({
    path: '/api/v1/admin/roles',
    body: { name: `role${++users}_${crypto.randomBytes(2).toString('hex')}`, scopes: ['notes:read'] },
    token: adminToken,
  }),
  createNoteFolder: async () => ({
    path: '/api/v1/notes/folders',
    body: { name: 'a folder' },
    token: (await freshUser()).access_token,
    settle: (first) => untilLogged(log, first.body.id, 'note_folder.created'),
  }),
  createNote: async () => ({
    path: '/api/v1/notes',
    body: { title: 'a note', body: 'some text' },
    token: (await freshUser()).access_token,
    settle: (first) => untilLogged(log, first.body.id, 'note.created'),
  }),
  renameNoteTag: async () => {
    const { token, id } = await noteOfFreshUser();
    return {
      path: '/api/v1/notes/tags/rename',
      body: { from: 'old', to: 'new' },
      token,
      // The rename runs in the background: the note's change is its one effect.
      settle: () => untilLogged(log, id, 'note.updated'),
    };
  },
  archiveNote: async () => {
    const { token, id } = await noteOfFreshUser();
    return {
      path: `/api/v1/notes/${id}/archive?version=1`,
      token,
      settle: () => untilLogged(log, id, 'note.archived'),
    };
  },
  unarchiveNote: async () => {
    const { token, id } = await noteOfFreshUser();
    await http.post(`/api/v1/notes/${id}/archive?version=1`, undefined, { token });
    await untilLogged(log, id, 'note.archived');
    return {
      path: `/api/v1/notes/${id}/unarchive?version=2`,
      token,
      settle: () => untilLogged(log, id, 'note.unarchived'),
    };
  },
  // ---- the trash: a restore repeated answers the first answer, not not_found -------------
  restoreNote: async () => {
    const { token, id } = await noteOfFreshUser();
    await http.delete(`/api/v1/notes/${id}?version=1`, { token });
    await untilLogged(log, id, 'note.trashed');
    return {
      path: `/api/v1/trash/note/${id}/restore`,
      token,
      settle: () => untilLogged(log, id, 'note.restored'),
    };
  },
  restoreVaultItem: async () => {
    const { token, id } = await vaultItemOfFreshUser({ text: 'A text about telescopes.' });
    const { version } = (await http.get(`/api/v1/vault/items/${id}`, { token })).body as { version: number };
    await http.delete(`/api/v1/vault/items/${id}?version=${version}`, { token });
    await untilLogged(log, id, 'vault.item.trashed');
    return {
      path: `/api/v1/trash/vault_item/${id}/restore`,
      token,
      settle: () => untilLogged(log, id, 'vault.item.restored'),
    };
  },
  restoreHub: async () => {
    const { token, hubId } = await hubOfFreshUser();
    await http.delete(`/api/v1/hubs/${hubId}?version=1`, { token });
    await untilLogged(log, hubId, 'hub.trashed');
    return {
      path: `/api/v1/trash/hub/${hubId}/restore`,
      token,
      settle: () => untilLogged(log, hubId, 'hub.restored'),
    };
  },
  captureVaultItem: async () => ({
    path: '/api/v1/vault/items',
    body: { text: 'A text about telescopes.', title: 'a text' },
    token: (await freshUser()).access_token,
    // Enrichment follows in the background.
    settle: (first) => untilLoggedTimes(first.body.id, ENRICHED, 1),
  }),
  refetchVaultItem: async () => {
    // Only links are fetched again: one at an address the guard refuses, so nothing is fetched.
    const { token, id } = await vaultItemOfFreshUser({ url: 'http://localhost:9/page' });
    return {
      path: `/api/v1/vault/items/${id}/refetch`,
      token,
      settle: () => untilLoggedTimes(id, ENRICHED, 2),
    };
  },
  classifyVaultItem: async () => {
    const { token, id } = await vaultItemOfFreshUser({ text: 'A text about telescopes.' });
    // Enrichment may have classified it once already.
    const classified = (await loggedFor(log, id, 'vault.item.classified')).length;
    return {
      path: `/api/v1/vault/items/${id}/classify`,
      token,
      settle: () => untilLoggedTimes(id, ['vault.item.classified'], classified + 1),
    };
  },
  createVaultRule: async () => ({
    path: '/api/v1/vault/rules',
    body: { name: 'texts', when: { kind: 'text' }, then: { category: 'reading' } },
    token: (await freshUser()).access_token,
    settle: (first) => untilLogged(log, first.body.id, 'vault.rule.created'),
  }),
};

/**
 * The position of the log once everything committed so far is in it: a sentinel written last by
 * each subgraph is logged (relays append in commit order). Returns the sentinels' ids too.
 */
async function settled(): Promise<{ seq: number; sentinels: string[] }> {
  const voice = await http.post('/api/v1/tts/voices', { name: `s${++users}`, base_voice: 'f3' }, { token: adminToken });
  const user = await http.post(
    '/api/v1/admin/users',
    { username: `sentinel${++users}`, password: 'a long enough password' },
    { token: adminToken },
  );
  await untilLogged(log, voice.body.id, 'voice.created');
  await untilLogged(log, user.body.id, 'user.created');
  return { seq: (await log.position()).lastSeq, sentinels: [voice.body.id, user.body.id] };
}

const answerOf = (res: ApiResponse) => ({ status: res.status, body: res.body, location: res.headers.get('location') });

// Uploads take no Idempotency-Key (their body is streamed in pieces; rest-facade/openapi.ts).
const postRoutes = routes.filter((r) => r.method === 'post' && r.auth && !r.stream && !r.download && !r.upload);

test('every signed-in POST route of the route table has a sample here', () => {
  expect(postRoutes.length).toBeGreaterThan(0);
  expect(postRoutes.map((r) => r.operationId).filter((id) => !SAMPLES[id])).toEqual([]);
});

describe.each(postRoutes.map((r) => [r.operationId, r] as const))('%s', (operationId) => {
  test('a repeat with the same key answers the first answer, with no second effect', async () => {
    const sample = await SAMPLES[operationId]();
    const key = crypto.randomUUID();
    const send = () =>
      http.post(sample.path, sample.body, { token: sample.token, headers: { 'idempotency-key': key } });
    const first = await send();
    expect(first.status).toBeLessThan(300);
    await sample.settle?.(first);
    const before = await settled();
    const again = await send();
    if (sample.endsSession) expect([again.status, again.body.error]).toEqual([401, 'unauthorized']);
    else expect(answerOf(again)).toEqual(answerOf(first));
    const after = await settled();
    const between = await log.dataSource.manager.find(LoggedEvent, {
      where: { seq: MoreThan(before.seq) },
      order: { seq: 'ASC' },
    });
    // Only the second sentinels were written: the repeat did nothing.
    expect(
      between
        .filter((e) => e.seq <= after.seq)
        .map((e) => e.resourceId)
        .sort(),
    ).toEqual([...after.sentinels].sort());
  });
});

test('another body with the same key is 409 idempotency_key_reused; the same body still replays', async () => {
  const { access_token: token } = await freshUser();
  const key = crypto.randomUUID();
  const headers = { 'idempotency-key': key };
  const first = await http.post('/api/v1/tts/voices', { name: 'one', base_voice: 'f3' }, { token, headers });
  expect(first.status).toBe(202);
  const other = await http.post('/api/v1/tts/voices', { name: 'two', base_voice: 'f3' }, { token, headers });
  expect(other.status).toBe(409);
  expect(other.body).toMatchObject({ error: 'conflict', details: { reason: 'idempotency_key_reused' } });
  // Another route with the key is another body too.
  const elsewhere = await http.post('/api/v1/auth/stream-ticket', undefined, { token, headers });
  expect(elsewhere.status).toBe(409);
  const same = await http.post('/api/v1/tts/voices', { base_voice: 'f3', name: 'one' }, { token, headers });
  expect(answerOf(same)).toEqual(answerOf(first));
  const voices = await http.get('/api/v1/tts/voices', { token });
  expect(voices.body.items.map((v: { name: string }) => v.name)).toEqual(['one']);
});

test('keys are per user: another user with the same key runs their own request', async () => {
  const [a, b] = [await freshUser(), await freshUser()];
  const headers = { 'idempotency-key': 'shared-key' };
  const body = { name: 'mine', base_voice: 'f3' };
  const first = await http.post('/api/v1/tts/voices', body, { token: a.access_token, headers });
  const second = await http.post('/api/v1/tts/voices', body, { token: b.access_token, headers });
  expect([first.status, second.status]).toEqual([202, 202]);
  expect(second.body.id).not.toBe(first.body.id);
});

test('retries racing the first request: one effect, and each answer is the first answer or 409 with Retry-After', async () => {
  const { access_token: token } = await freshUser();
  const headers = { 'idempotency-key': crypto.randomUUID() };
  const body = { name: 'raced', base_voice: 'f3' };
  const answers = await Promise.all(
    Array.from({ length: 6 }, () => http.post('/api/v1/tts/voices', body, { token, headers })),
  );
  const created = answers.filter((a) => a.status === 202);
  expect(created.length).toBeGreaterThanOrEqual(1);
  for (const a of created) expect(answerOf(a)).toEqual(answerOf(created[0]));
  for (const a of answers.filter((x) => x.status !== 202)) {
    expect(a.status).toBe(409);
    expect(a.body.details).toEqual({ reason: 'idempotency_key_in_use' });
    expect(a.headers.get('retry-after')).toBe('1');
  }
  const voices = await http.get('/api/v1/tts/voices', { token });
  expect(voices.body.items).toHaveLength(1);
});

test('a request still running: 409 with Retry-After; a claim whose process died is taken over after its lock', async () => {
  const store = new IdempotencyStore(log.dataSource, { IDEMPOTENCY_TTL_SECONDS: 60, IDEMPOTENCY_LOCK_SECONDS: 1 });
  const op = { query: 'mutation { x }', variables: { a: 1 } };
  const first = await store.claim('user-1', 'k1', op);
  expect(first.kind).toBe('run');
  const racing = await store.claim('user-1', 'k1', op);
  expect(racing).toMatchObject({ kind: 'refused', error: { code: 'conflict', retryAfter: 1 } });
  // The first never records (its process died): after the lock, a retry runs it.
  const later = await (async () => {
    for (;;) {
      const c = await store.claim('user-1', 'k1', op);
      if (c.kind !== 'refused') return c;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  expect(later.kind).toBe('run');
  if (later.kind === 'run') await store.record(later, { data: { x: 'done' } });
  expect(await store.claim('user-1', 'k1', { ...op })).toEqual({ kind: 'replay', answer: { data: { x: 'done' } } });
  // Transient answers are not kept: the key is free again.
  const second = await store.claim('user-1', 'k2', op);
  if (second.kind === 'run')
    await store.record(second, { errors: [{ message: 'later', extensions: { code: 'service_unavailable' } }] });
  expect((await store.claim('user-1', 'k2', op)).kind).toBe('run');
});

test('answers are stored encrypted: the key and the answer are not in the table', async () => {
  const { access_token: token } = await freshUser();
  const key = `plain-${crypto.randomUUID()}`;
  const res = await http.post('/api/v1/auth/stream-ticket', undefined, { token, headers: { 'idempotency-key': key } });
  expect(res.status).toBe(202);
  const rows: { key_hash: string; answer: string }[] = await log.dataSource.query(
    'SELECT key_hash, answer FROM idempotency_keys',
  );
  const dump = JSON.stringify(rows);
  expect(dump).not.toContain(key);
  expect(dump).not.toContain(res.body.ticket);
  expect(rows.some((r) => r.answer)).toBe(true);
});

test('a malformed key is 400; queries and anonymous commands ignore the header', async () => {
  const { access_token: token } = await freshUser();
  const bad = await http.post(
    '/api/v1/tts/voices',
    { name: 'x', base_voice: 'f3' },
    {
      token,
      headers: { 'idempotency-key': 'a'.repeat(256) },
    },
  );
  expect(bad.status).toBe(400);
  expect(bad.body.details).toHaveProperty('idempotency_key');
  const headers = { 'idempotency-key': 'login-key' };
  const a = await http.post('/api/v1/auth/login', ADMIN, { headers });
  const b = await http.post('/api/v1/auth/login', ADMIN, { headers });
  expect([a.status, b.status]).toEqual([202, 202]);
  expect(b.body.session_id).not.toBe(a.body.session_id);
});

describe('a replay answers only a caller that a first request would answer (issue 41 finding 3)', () => {
  const createKey = (token: string, key: string) =>
    http.post(
      '/api/v1/auth/api-keys',
      { name: 'script', scopes: ['notes:write'] },
      { token, headers: { 'idempotency-key': key } },
    );
  /**
   * The first answer, then the caller loses its right, then the same request with the key: refused
   * within the revocation bound (the gateway reads the event log as every subgraph but auth does).
   */
  async function replayAfter(lose: (user: Awaited<ReturnType<typeof freshUser>>) => Promise<unknown>, status: number) {
    const user = await freshUser();
    const key = crypto.randomUUID();
    const first = await createKey(user.access_token, key);
    expect(first.status).toBe(202);
    await lose(user);
    const again = await until(
      async () => {
        const res = await createKey(user.access_token, key);
        return res.status === status && res;
      },
      `the replay refused with ${status}`,
      5000,
    );
    // Never the first answer, whose secret is a live key.
    expect(again.text).not.toContain(first.body.key);
    return again;
  }
  const untilRefused = (token: string, status: number) =>
    until(async () => (await http.get('/api/v1/auth/me', { token })).status === status, `/auth/me to answer ${status}`);

  test('after a logout: 401', async () => {
    const again = await replayAfter(async (user) => {
      expect((await http.post('/api/v1/auth/logout', undefined, { token: user.access_token })).status).toBe(202);
      await untilRefused(user.access_token, 401);
    }, 401);
    expect(again.body.error).toBe('unauthorized');
  });

  test('after the user is disabled: 401', async () => {
    const again = await replayAfter(async (user) => {
      const disabled = await http.post(`/api/v1/admin/users/${user.id}/disable`, undefined, { token: adminToken });
      expect(disabled.status).toBeLessThan(300);
      await untilRefused(user.access_token, 401);
    }, 401);
    expect(again.body.error).toBe('unauthorized');
  });

  test('after losing account:write: 403', async () => {
    const role = `noacct${++users}`;
    const made = await http.post('/api/v1/admin/roles', { name: role, scopes: ['notes:read'] }, { token: adminToken });
    expect(made.status).toBeLessThan(300);
    const again = await replayAfter(async (user) => {
      const version = (await http.get(`/api/v1/admin/users/${user.id}`, { token: adminToken })).body.version;
      const put = await request(server.url, 'PUT', `/api/v1/admin/users/${user.id}/roles?version=${version}`, {
        body: { roles: [role] },
        token: adminToken,
      });
      expect(put.status).toBeLessThan(300);
      // notes:read is left, account:write is gone.
      await until(async () => {
        const me = await http.get('/api/v1/auth/me', { token: user.access_token });
        return me.status === 200 && !me.body.scopes.includes('account:write');
      }, 'the scope change to apply');
    }, 403);
    expect(again.body.error).toBe('forbidden');
  });

  test('at /graphql too: after a logout the replay is unauthorized', async () => {
    const user = await freshUser();
    const key = crypto.randomUUID();
    const CREATE = 'mutation { createVoice(name: "gone", baseVoice: "f3") { id name } }';
    const send = () =>
      http.post('/graphql', { query: CREATE }, { token: user.access_token, headers: { 'idempotency-key': key } });
    const first = await send();
    expect(first.body.data.createVoice.name).toBe('gone');
    await http.post('/api/v1/auth/logout', undefined, { token: user.access_token });
    await untilRefused(user.access_token, 401);
    const again = await until(
      async () => {
        const res = await send();
        return res.body.errors?.[0]?.extensions?.code === 'unauthorized' && res;
      },
      'the replay refused',
      5000,
    );
    expect(again.body.data ?? null).toBeNull();
  });
});

describe('GraphQL mutations at /graphql', () => {
  const CREATE = 'mutation ($name: String!) { createVoice(name: $name, baseVoice: "f3") { id name } }';
  const gql = (token: string, key: string, name: string) =>
    http.post('/graphql', { query: CREATE, variables: { name } }, { token, headers: { 'idempotency-key': key } });

  test('a repeat answers the first answer; another body is refused; so is a repeat while it runs', async () => {
    const { access_token: token } = await freshUser();
    const key = crypto.randomUUID();
    const first = await gql(token, key, 'g1');
    expect(first.body.data.createVoice.name).toBe('g1');
    const again = await gql(token, key, 'g1');
    expect(again.body).toEqual(first.body);
    const other = await gql(token, key, 'g2');
    expect(other.body.errors[0].extensions).toMatchObject({
      code: 'conflict',
      details: { reason: 'idempotency_key_reused' },
    });
    const voices = await http.get('/api/v1/tts/voices', { token });
    expect(voices.body.items).toHaveLength(1);
  });

  test('a key used through REST and GraphQL is one key of the user', async () => {
    const { access_token: token } = await freshUser();
    const key = crypto.randomUUID();
    expect(
      (
        await http.post(
          '/api/v1/tts/voices',
          { name: 'r', base_voice: 'f3' },
          { token, headers: { 'idempotency-key': key } },
        )
      ).status,
    ).toBe(202);
    const viaGraphQL = await gql(token, key, 'r');
    expect(viaGraphQL.body.errors[0].extensions.details).toEqual({ reason: 'idempotency_key_reused' });
  });
});

test('the settings have defaults', () => {
  const config = loadConfig({});
  expect([config.IDEMPOTENCY_TTL_SECONDS, config.IDEMPOTENCY_LOCK_SECONDS]).toEqual([86_400, 60]);
});
