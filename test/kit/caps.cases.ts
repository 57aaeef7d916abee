// Every per-user cap on the kit's guarded counter (lib/kit/user-caps.ts), on SQLite and MySQL:
// for each capped resource the cap is set small, the owner is brought to one under it, and 50
// creates are fired at once. Exactly one is accepted, every other gets the one refusal
// (409 `conflict`, or 429 for the pending cap, with `details: { limit, max, count }`), and what
// is stored equals the cap. A COUNT(*) before the insert let most of the 50 through on MySQL.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventLog, LoggedEvent } from '../../lib/event-log';
import { ApiResponse, createUserAndLogin, login, request } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

const CAP = 5;
const ITEMS_CAP = 4;
const PENDING_CAP = 3;
const BYTES_CAP = 1000;
const FIRED = 50;

let server: TestServer;
let admin: string;
let web: http.Server;
let base: string;
let log: EventLog;
/** Fetches held open by the web server: the vault items stay pending. */
const held: http.ServerResponse[] = [];

beforeAll(async () => {
  web = http.createServer((req, res) => {
    if (req.url?.startsWith('/hold')) return void held.push(res);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  server = await startTestServer({
    VAULT_ITEMS_PER_USER: String(ITEMS_CAP),
    VAULT_PENDING_PER_USER: String(PENDING_CAP),
    VAULT_FILE_BYTES_PER_USER: String(BYTES_CAP),
    VAULT_RULES_PER_USER: String(CAP),
    VAULT_FETCH_ALLOW_HOSTS: '127.0.0.1',
    VAULT_FETCH_TIMEOUT_MS: '600000',
    WEBHOOKS_PER_USER: String(CAP),
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    API_KEYS_PER_USER: String(CAP),
    ROLES_MAX: String(CAP),
    VOICES_PER_USER: String(CAP),
    NOTES_PER_USER: String(CAP),
    NOTE_FOLDERS_PER_USER: String(CAP),
    HUBS_PER_USER: String(CAP),
    HUB_MAX_NODES: String(CAP),
    HUB_MAX_EDGES: String(CAP),
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
  });
  admin = (await login(server.url, ADMIN)).access_token;
  log = await EventLog.open({ ...server.config, MIGRATIONS_RUN: false });
}, 120_000);

afterAll(async () => {
  for (const res of held) res.destroy();
  web?.closeAllConnections();
  await new Promise((resolve) => web?.close(resolve));
  await log?.close();
  await server?.close();
});

let n = 0;
const newUser = async () => (await createUserAndLogin(server.url, admin, `capped-${++n}`)).token;
const post = (token: string, path: string, body: unknown) => request(server.url, 'POST', path, { token, body });
const get = async (token: string, path: string) => {
  const res = await request(server.url, 'GET', path, { token });
  expect(res.status).toBe(200);
  return res.body;
};
const sized = (body: unknown[] | { items: unknown[] }) => (Array.isArray(body) ? body : body.items).length;
const accepted = (status: number) => status === 202;
const unique = () => `${Date.now()}-${Math.random().toString(36).slice(2)}`;

interface Case {
  name: string;
  limit: string;
  max: number;
  status?: 409 | 429;
  /** Makes what the creates need (a hub, nodes); answers the owner's token and a context. */
  setup?: (token: string) => Promise<string>;
  /** Runs with the owner's token: the i-th create. */
  create: (token: string, i: number, context: string) => Promise<ApiResponse>;
  /** What is stored now. */
  stored: (token: string, context: string) => Promise<number>;
  /** How many creates bring the owner to one under the cap (default max - 1). */
  before?: number;
  /** Waits after each create of the setup (e.g. for an item to leave pending). */
  settle?: (token: string, body: any) => Promise<void>;
  /** The owner is the administrator (a cap for everyone). */
  asAdmin?: boolean;
}

const vaultItems = (query = '') => `/api/v1/vault/items?limit=100&archived=all${query}`;
const settledItem = async (token: string, body: { id: string }) => {
  await until(async () => (await get(token, `/api/v1/vault/items/${body.id}`)).state !== 'pending', 'item to settle');
};
const fileOf = (bytes: number) => ({
  file: {
    name: `${unique()}.txt`,
    content_base64: Buffer.from(unique().padEnd(bytes, 'x').slice(0, bytes)).toString('base64'),
  },
});
const node = (i: number) => ({ type: 'text', text: `node ${i}`, x: i * 10, y: 0, width: 100, height: 50 });

const CASES: Case[] = [
  {
    name: 'vault items',
    limit: 'VAULT_ITEMS_PER_USER',
    max: ITEMS_CAP,
    create: (t) => post(t, '/api/v1/vault/items', { text: `a text ${unique()}` }),
    settle: settledItem,
    stored: async (t) => sized(await get(t, vaultItems())),
  },
  {
    name: 'vault file bytes',
    limit: 'VAULT_FILE_BYTES_PER_USER',
    max: BYTES_CAP,
    // 3 files of 300 bytes, then 50 of 100: one fits.
    before: 3,
    create: (t, i) => post(t, '/api/v1/vault/items', fileOf(i < 0 ? 300 : 100)),
    settle: settledItem,
    stored: async (t) =>
      (await get(t, vaultItems())).items.reduce(
        (sum: number, item: { size_bytes: number }) => sum + item.size_bytes,
        0,
      ),
  },
  {
    name: 'pending vault items',
    limit: 'VAULT_PENDING_PER_USER',
    max: PENDING_CAP,
    status: 429,
    create: (t) => post(t, '/api/v1/vault/items', { url: `${base}/hold/${unique()}` }),
    stored: async (t) => sized(await get(t, vaultItems('&state=pending'))),
  },
  {
    name: 'vault rules',
    limit: 'VAULT_RULES_PER_USER',
    max: CAP,
    create: (t, i) =>
      post(t, '/api/v1/vault/rules', { name: `rule ${i}`, when: { kind: 'text' }, then: { tags: ['t'] } }),
    stored: async (t) => sized(await get(t, '/api/v1/vault/rules')),
  },
  {
    name: 'webhooks',
    limit: 'WEBHOOKS_PER_USER',
    max: CAP,
    create: (t, i) => post(t, '/api/v1/integrations/webhooks', { url: `${base}/hook/${i}`, event_types: ['note.*'] }),
    stored: async (t) => sized(await get(t, '/api/v1/integrations/webhooks?limit=100')),
  },
  {
    name: 'API keys',
    limit: 'API_KEYS_PER_USER',
    max: CAP,
    create: (t, i) => post(t, '/api/v1/auth/api-keys', { name: `key ${i}`, scopes: ['notes:read'] }),
    stored: async (t) => sized(await get(t, '/api/v1/auth/api-keys?limit=100')),
  },
  {
    name: 'custom roles (ROLES_MAX)',
    limit: 'ROLES_MAX',
    max: CAP,
    asAdmin: true,
    create: (t, i) => post(t, '/api/v1/admin/roles', { name: `capped-${i + 1}`, scopes: ['notes:read'] }),
    stored: async (t) => {
      const body = await get(t, '/api/v1/admin/roles');
      return (Array.isArray(body) ? body : body.items).filter((r: { name: string }) => r.name.startsWith('capped-'))
        .length;
    },
  },
  {
    name: 'voices',
    limit: 'VOICES_PER_USER',
    max: CAP,
    create: (t, i) => post(t, '/api/v1/tts/voices', { name: `voice ${i}`, base_voice: 'f3' }),
    stored: async (t) => sized(await get(t, '/api/v1/tts/voices?limit=100')),
  },
  {
    name: 'notes',
    limit: 'NOTES_PER_USER',
    max: CAP,
    create: (t, i) => post(t, '/api/v1/notes', { title: `note ${i}`, body: 'text' }),
    stored: async (t) => sized(await get(t, '/api/v1/notes?limit=100')),
  },
  {
    name: 'note folders',
    limit: 'NOTE_FOLDERS_PER_USER',
    max: CAP,
    create: (t, i) => post(t, '/api/v1/notes/folders', { name: `folder ${i}` }),
    stored: async (t) => sized(await get(t, '/api/v1/notes/folders')),
  },
  {
    name: 'hubs',
    limit: 'HUBS_PER_USER',
    max: CAP,
    create: (t, i) => post(t, '/api/v1/hubs', { name: `hub ${i}` }),
    stored: async (t) => sized(await get(t, '/api/v1/hubs?limit=100')),
  },
  {
    name: 'hub nodes',
    limit: 'HUB_MAX_NODES',
    max: CAP,
    setup: async (t) => (await post(t, '/api/v1/hubs', { name: 'nodes' })).body.id,
    create: (t, i, hub) => post(t, `/api/v1/hubs/${hub}/nodes`, node(i)),
    stored: async (t, hub) => (await get(t, `/api/v1/hubs/${hub}`)).nodes.length,
  },
  {
    name: 'hub edges',
    limit: 'HUB_MAX_EDGES',
    max: CAP,
    setup: async (t) => {
      const hub = (await post(t, '/api/v1/hubs', { name: 'edges' })).body.id;
      const a = (await post(t, `/api/v1/hubs/${hub}/nodes`, node(1))).body.id;
      const b = (await post(t, `/api/v1/hubs/${hub}/nodes`, node(2))).body.id;
      return `${hub} ${a} ${b}`;
    },
    create: (t, i, context) => {
      const [hub, a, b] = context.split(' ');
      return post(t, `/api/v1/hubs/${hub}/edges`, { from_node: a, to_node: b, label: `edge ${i}` });
    },
    stored: async (t, context) => (await get(t, `/api/v1/hubs/${context.split(' ')[0]}`)).edges.length,
  },
];

describe.each(CASES)('$name: 50 concurrent creates at one under the cap', (c) => {
  it('accepts exactly one, refuses the rest with the one shape, and stores the cap', async () => {
    const token = c.asAdmin ? admin : await newUser();
    const context = (await c.setup?.(token)) ?? '';
    for (let i = 0; i < (c.before ?? c.max - 1); i++) {
      const res = await c.create(token, -1 - i, context);
      expect([res.status, res.body]).toEqual([202, expect.anything()]);
      await c.settle?.(token, res.body);
    }
    const answers = await Promise.all(Array.from({ length: FIRED }, (_, i) => c.create(token, i, context)));
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    expect(answers.filter((a) => accepted(a.status))).toHaveLength(1);
    const status = c.status ?? 409;
    for (const refused of answers.filter((a) => !accepted(a.status))) {
      expect([refused.status, refused.body]).toEqual([
        status,
        {
          error: status === 409 ? 'conflict' : 'rate_limit_exceeded',
          message: expect.any(String),
          details: { limit: c.limit, max: c.max, count: expect.any(Number) },
        },
      ]);
      if (status === 429) expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(await c.stored(token, context)).toBe(c.max);
  }, 120_000);
});

describe('hubs quick-add with capture: true', () => {
  it('is held to the pending cap: past it the vault refuses the capture (vault.capture.refused)', async () => {
    const token = await newUser();
    const hub = (await post(token, '/api/v1/hubs', { name: 'quick' })).body.id;
    const nodes: string[] = [];
    for (let i = 0; i < CAP; i++) {
      const res = await post(token, `/api/v1/hubs/${hub}/quick-add`, { url: `${base}/hold/quick-${i}`, capture: true });
      expect(res.status).toBe(202);
      nodes.push(res.body.id);
    }
    const outcomes = await until(async () => {
      const events = await log.dataSource.manager.find(LoggedEvent, {
        where: nodes.map((resourceId) => ({ resourceId, type: 'vault.capture.refused' })),
      });
      const captured = (await get(token, vaultItems())).items.length;
      return captured + events.length === CAP && { captured, refused: events };
    }, 'every quick-add capture to be captured or refused');
    expect(outcomes.captured).toBe(PENDING_CAP);
    expect(outcomes.refused.map((e) => JSON.parse(e.payload).reason)).toEqual(
      Array(CAP - PENDING_CAP).fill('rate_limit_exceeded'),
    );
    expect(sized(await get(token, vaultItems('&state=pending')))).toBe(PENDING_CAP);
  }, 120_000);
});
