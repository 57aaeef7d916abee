// docs/api-examples.md: a request and its answer for every route of the facade's route table,
// made by this test against the one-process server (SQLite). Every run drives every route with a
// realistic request and checks that each answered the status its route declares; the document
// checked in must show every route, so a route added without an example fails here.
// Regenerate it with `npm run docs:api-examples` (this file with API_EXAMPLES_WRITE=1).
import fs from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import { routeTable } from '../../rest-facade/route-table';
import type { RouteSpec } from '../../rest-facade/route-spec';
import { facadeRoutes } from '../../subgraphs';
import { api, login } from '../helpers/http';
import { ADMIN, startTestServer, TEST_DB, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';
import {
  API_EXAMPLES_DOC,
  Example,
  moduleSections,
  renderExamples,
  exampleAnchor,
  MODULE_PAGES,
} from '../helpers/api-examples';

const WRITE = process.env.API_EXAMPLES_WRITE === '1';
const { routes } = routeTable(facadeRoutes);

// The examples do not depend on the database: SQLite only.
(TEST_DB === 'sqlite' ? describe : describe.skip)('docs/api-examples.md', () => {
  let server: TestServer;
  let receiver: http.Server;
  let hookUrl: string;
  const examples = new Map<string, Example>();

  beforeAll(async () => {
    // A webhook receiver on this machine, allowed by WEBHOOK_ALLOW_HOSTS, so that deliveries succeed.
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/notes`;
    server = await startTestServer({ WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  /** Sends a request and keeps it, with its answer, as the example of `operationId`. */
  async function show(
    operationId: string,
    method: string,
    url: string,
    options: { body?: unknown; raw?: Buffer; token?: string; headers?: Record<string, string> } = {},
  ) {
    const route = routes.find((r) => r.operationId === operationId);
    if (!route) throw new Error(`no route ${operationId}`);
    const template = new RegExp(`^/api/v1${route.path.replace(/:[A-Za-z]+/g, '[^/?]+')}(\\?.*)?$`);
    if (route.method.toUpperCase() !== method || !template.test(url))
      throw new Error(`${method} ${url} is not ${operationId} (${route.method.toUpperCase()} ${route.path})`);
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers,
      body: options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
    });
    const type = res.headers.get('content-type') ?? '';
    const bytes = Buffer.from(await res.arrayBuffer());
    const text = bytes.toString('utf8');
    const json = type.startsWith('application/json') && text ? JSON.parse(text) : undefined;
    if (!examples.has(operationId))
      examples.set(operationId, {
        operationId,
        method,
        url,
        requestHeaders: options.headers,
        requestBody: options.raw
          ? `(${options.raw.length} bytes: ${options.raw.toString('utf8').slice(0, 120)}…)`
          : options.body,
        status: res.status,
        headers: Object.fromEntries(res.headers),
        body: json ?? (/^text\//.test(type) ? text : `(${bytes.length} bytes of ${type})`),
      });
    return { status: res.status, body: json, text };
  }

  it('every route of the route table answers its declared status to a realistic request', async () => {
    const get = (url: string, token: string) => api(server.url).get(url, { token });
    const post = (url: string, body: unknown, token: string) => api(server.url).post(url, body, { token });

    // ---- auth: sessions ------------------------------------------------------------------
    const adminLogin = await show('login', 'POST', '/api/v1/auth/login', { body: ADMIN });
    const admin: string = adminLogin.body.access_token;
    const other = await login(server.url, ADMIN);
    await show('refreshSession', 'POST', '/api/v1/auth/refresh', { body: { refresh_token: other.refresh_token } });
    await show('getCurrentSession', 'GET', '/api/v1/auth/session', { token: admin });
    await show('getMe', 'GET', '/api/v1/auth/me', { token: admin });
    await show('getSession', 'GET', `/api/v1/auth/session/${adminLogin.body.session_id}`, { token: admin });
    await show('createStreamTicket', 'POST', '/api/v1/auth/stream-ticket', { token: admin });
    await show('listSessions', 'GET', '/api/v1/auth/sessions', { token: admin });
    await show('revokeSession', 'DELETE', `/api/v1/auth/sessions/${other.session_id}`, { token: admin });
    await login(server.url, ADMIN);
    await show('revokeOtherSessions', 'DELETE', '/api/v1/auth/sessions', { token: admin });
    const leaving = await login(server.url, ADMIN);
    await show('logout', 'POST', '/api/v1/auth/logout', { token: leaving.access_token });

    // ---- auth: users, roles, API keys ------------------------------------------------------
    const created = await show('createUser', 'POST', '/api/v1/admin/users', {
      body: { username: 'ada', password: 'correct horse battery staple' },
      token: admin,
    });
    const adaId: string = created.body.id;
    await show('listUsers', 'GET', '/api/v1/admin/users?limit=2', { token: admin });
    await show('createRole', 'POST', '/api/v1/admin/roles', {
      body: { name: 'editor', description: 'Writes notes and hubs', scopes: ['notes:read', 'notes:write'] },
      token: admin,
    });
    await show('listRoles', 'GET', '/api/v1/admin/roles', { token: admin });
    const role = await show('getRole', 'GET', '/api/v1/admin/roles/editor', { token: admin });
    await show('updateRole', 'PATCH', `/api/v1/admin/roles/editor?version=${role.body.version}`, {
      body: { scopes: ['notes:read', 'notes:write', 'hubs:read', 'hubs:write'] },
      token: admin,
    });
    let ada = await show('getUser', 'GET', `/api/v1/admin/users/${adaId}`, { token: admin });
    await show('setUserRoles', 'PUT', `/api/v1/admin/users/${adaId}/roles?version=${ada.body.version}`, {
      body: { roles: ['user', 'editor'] },
      token: admin,
    });
    await post(`/api/v1/admin/roles`, { name: 'reviewer', scopes: ['notes:read'] }, admin);
    const reviewer = await get('/api/v1/admin/roles/reviewer', admin);
    await show('deleteRole', 'DELETE', `/api/v1/admin/roles/reviewer?version=${reviewer.body.version}`, {
      token: admin,
    });
    await show('disableUser', 'POST', `/api/v1/admin/users/${adaId}/disable`, { token: admin });
    await show('enableUser', 'POST', `/api/v1/admin/users/${adaId}/enable`, { token: admin });
    await show('unlockUser', 'POST', `/api/v1/admin/users/${adaId}/unlock`, { token: admin });
    const user = (await login(server.url, { username: 'ada', password: 'correct horse battery staple' })).access_token;
    await show('changePassword', 'POST', '/api/v1/auth/password', {
      body: { current_password: 'correct horse battery staple', new_password: 'a new and longer passphrase' },
      token: user,
    });
    const ada2 = await login(server.url, { username: 'ada', password: 'a new and longer passphrase' });
    const token = ada2.access_token;
    const key = await show('createApiKey', 'POST', '/api/v1/auth/api-keys', {
      body: { name: 'backup script', scopes: ['notes:read', 'vault:read'], expires_in_days: 90 },
      token,
    });
    await show('listApiKeys', 'GET', '/api/v1/auth/api-keys', { token });
    await show('listAllApiKeys', 'GET', '/api/v1/admin/integrations/api-keys', { token: admin });
    await show('revokeApiKey', 'DELETE', `/api/v1/auth/api-keys/${key.body.id}`, { token });
    const key2 = await post('/api/v1/auth/api-keys', { name: 'old laptop', scopes: ['tts:read'] }, token);
    await show('adminRevokeApiKey', 'DELETE', `/api/v1/admin/integrations/api-keys/${key2.body.id}`, {
      token: admin,
    });

    // ---- tts -----------------------------------------------------------------------------
    await show('listBaseVoices', 'GET', '/api/v1/tts/base-voices', { token });
    const voice = await show('createVoice', 'POST', '/api/v1/tts/voices', {
      body: { name: 'Narrator', description: 'Calm, a little slow', base_voice: 'f3', language: 'en-gb', speed: 0.9 },
      token,
    });
    await show('listVoices', 'GET', '/api/v1/tts/voices', { token });
    const voiceNow = await show('getVoice', 'GET', `/api/v1/tts/voices/${voice.body.id}`, { token });
    await show('updateVoice', 'PATCH', `/api/v1/tts/voices/${voice.body.id}`, {
      body: { speed: 1.1 },
      headers: { 'if-match': `"${voiceNow.body.version}"` },
      token,
    });
    const synthesis = await show('createSynthesis', 'POST', '/api/v1/tts/syntheses', {
      body: { text: 'Hello there. This is a short test.', voice_id: voice.body.id },
      token,
    });
    await show('getSynthesisStatus', 'GET', '/api/v1/tts/status', { token });
    await until(async () => {
      const s = await get(`/api/v1/tts/syntheses/${synthesis.body.id}`, token);
      return s.body.state === 'succeeded' || undefined;
    }, 'the synthesis rendered');
    await show('getSynthesis', 'GET', `/api/v1/tts/syntheses/${synthesis.body.id}`, { token });
    await show('listSyntheses', 'GET', '/api/v1/tts/syntheses?limit=5', { token });
    await show('getSynthesisAudio', 'GET', `/api/v1/tts/syntheses/${synthesis.body.id}/audio?format=mp3`, {
      token,
    });
    await show('getSynthesisTimings', 'GET', `/api/v1/tts/syntheses/${synthesis.body.id}/timings`, { token });
    const long = await post(
      '/api/v1/tts/syntheses',
      { text: 'A long text to cancel. '.repeat(40), voice_id: voice.body.id },
      token,
    );
    await show('cancelSynthesis', 'DELETE', `/api/v1/tts/syntheses/${long.body.id}`, { token });
    const spare = await post('/api/v1/tts/voices', { name: 'Spare', base_voice: 'm1' }, token);
    await show('deleteVoice', 'DELETE', `/api/v1/tts/voices/${spare.body.id}?version=1`, { token });

    // ---- notes ---------------------------------------------------------------------------
    await show('createNoteFolder', 'POST', '/api/v1/notes/folders', {
      body: { name: 'Projects' },
      token,
    });
    const folders = await show('listNoteFolders', 'GET', '/api/v1/notes/folders', { token });
    const projects = folders.body.items.find((f: { name: string }) => f.name === 'Projects');
    await show('updateNoteFolder', 'PATCH', `/api/v1/notes/folders/${projects.id}?version=${projects.version}`, {
      body: { name: 'Work projects' },
      token,
    });
    const telescope = await show('createNote', 'POST', '/api/v1/notes', {
      body: {
        title: 'Telescope',
        body: 'An 8" Dobsonian. See [[Star party]].',
        tags: ['astronomy', 'gear'],
        folder_id: projects.id,
      },
      token,
    });
    const party = await post(
      '/api/v1/notes',
      { title: 'Star party', body: 'Bring the [[Telescope]].', tags: ['astronomy'] },
      token,
    );
    await show('listNotes', 'GET', '/api/v1/notes?tag=astronomy&limit=10', { token });
    const note = await show('getNote', 'GET', `/api/v1/notes/${telescope.body.id}`, { token });
    await show('updateNote', 'PATCH', `/api/v1/notes/${telescope.body.id}?version=${note.body.version}`, {
      body: { body: 'An 8" Dobsonian with a Telrad finder. See [[Star party]].' },
      token,
    });
    await show('listNoteBacklinks', 'GET', `/api/v1/notes/${telescope.body.id}/backlinks`, { token });
    await show('listNoteTags', 'GET', '/api/v1/notes/tags', { token });
    await show('renameNoteTag', 'POST', '/api/v1/notes/tags/rename', {
      body: { from: 'gear', to: 'equipment' },
      token,
    });
    await show('archiveNote', 'POST', `/api/v1/notes/${party.body.id}/archive?version=1`, { token });
    await show('unarchiveNote', 'POST', `/api/v1/notes/${party.body.id}/unarchive?version=2`, { token });
    const scratch = await post('/api/v1/notes', { title: 'Scratch', body: 'to delete' }, token);
    await show('deleteNote', 'DELETE', `/api/v1/notes/${scratch.body.id}?version=1`, { token });
    await show('restoreNote', 'POST', `/api/v1/trash/note/${scratch.body.id}/restore`, { token });
    await api(server.url).delete(`/api/v1/notes/${scratch.body.id}?version=3`, { token });
    const empty = await post('/api/v1/notes/folders', { name: 'Old' }, token);
    await show('deleteNoteFolder', 'DELETE', `/api/v1/notes/folders/${empty.body.id}?version=1`, { token });

    // ---- vault ---------------------------------------------------------------------------
    await show('createVaultRule', 'POST', '/api/v1/vault/rules', {
      body: {
        name: 'Astronomy texts',
        priority: 10,
        when: { kind: 'text', text_contains: ['telescope', 'nebula'] },
        then: { category: 'Astronomy', tags: ['sky'], favorite: true },
      },
      token,
    });
    const rules = await show('listVaultRules', 'GET', '/api/v1/vault/rules', { token });
    const ruleId: string = rules.body.items[0].id;
    const rule = await show('getVaultRule', 'GET', `/api/v1/vault/rules/${ruleId}`, { token });
    await show('updateVaultRule', 'PATCH', `/api/v1/vault/rules/${ruleId}?version=${rule.body.version}`, {
      body: { priority: 5, then: { category: 'Astronomy', tags: ['sky', 'night'], favorite: true } },
      token,
    });
    const text = await show('captureVaultItem', 'POST', '/api/v1/vault/items', {
      body: { text: 'The Orion Nebula is visible with a small telescope.', title: 'Orion', tags: ['winter'] },
      token,
    });
    const file = await post(
      '/api/v1/vault/items',
      {
        file: {
          name: 'packing-list.txt',
          media_type: 'text/plain',
          content_base64: Buffer.from('red torch\nstar chart\n').toString('base64'),
        },
      },
      token,
    );
    // Enriched in the background, each item once (its version then moves to 2).
    for (const id of [text.body.id, file.body.id])
      await until(async () => {
        const item = await get(`/api/v1/vault/items/${id}`, token);
        return item.body.state !== 'pending' || undefined;
      }, 'the item enriched');
    const item = await show('getVaultItem', 'GET', `/api/v1/vault/items/${text.body.id}`, { token });
    await show('listVaultItems', 'GET', '/api/v1/vault/items?limit=5', { token });
    await show('updateVaultItem', 'PATCH', `/api/v1/vault/items/${text.body.id}?version=${item.body.version}`, {
      body: { title: 'Orion Nebula', tags: ['winter', 'deep-sky'], favorite: true },
      token,
    });
    await show('classifyVaultItem', 'POST', `/api/v1/vault/items/${text.body.id}/classify`, { token });
    await show('getVaultItemContent', 'GET', `/api/v1/vault/items/${file.body.id}/content`, { token });
    await show('listVaultCategories', 'GET', '/api/v1/vault/categories', { token });
    await show('listVaultTags', 'GET', '/api/v1/vault/tags', { token });
    const link = await post('/api/v1/vault/items', { url: 'http://localhost:9/observing-guide' }, token);
    await show('refetchVaultItem', 'POST', `/api/v1/vault/items/${link.body.id}/refetch`, { token });
    await show('deleteVaultItem', 'DELETE', `/api/v1/vault/items/${file.body.id}?version=2`, { token });
    await show('deleteVaultRule', 'DELETE', `/api/v1/vault/rules/${ruleId}?version=${rule.body.version + 1}`, {
      token,
    });

    // ---- hubs ----------------------------------------------------------------------------
    const hub = await show('createHub', 'POST', '/api/v1/hubs', {
      body: { name: 'Observing plan', description: 'What to look at this winter' },
      token,
    });
    const hubId: string = hub.body.id;
    const textNode = await show('addHubNode', 'POST', `/api/v1/hubs/${hubId}/nodes`, {
      body: { type: 'text', text: '## Targets\n- M42\n- M45', x: 0, y: 0, width: 260, height: 140, color: '4' },
      token,
    });
    const noteNode = await post(
      `/api/v1/hubs/${hubId}/nodes`,
      { type: 'note', ref_id: telescope.body.id, x: 320, y: 0, width: 260, height: 140 },
      token,
    );
    const edge = await show('addHubEdge', 'POST', `/api/v1/hubs/${hubId}/edges`, {
      body: { from_node: textNode.body.id, to_node: noteNode.body.id, to_end: 'arrow', label: 'needs' },
      token,
    });
    await show('quickAddToHub', 'POST', `/api/v1/hubs/${hubId}/quick-add`, {
      body: { text: 'Check the weather forecast', near_node_id: textNode.body.id },
      token,
    });
    await show('listHubs', 'GET', '/api/v1/hubs', { token });
    const hubNow = await show('getHub', 'GET', `/api/v1/hubs/${hubId}`, { token });
    await show('updateHub', 'PATCH', `/api/v1/hubs/${hubId}?version=${hubNow.body.version}`, {
      body: { name: 'Winter observing plan' },
      token,
    });
    const node = await show('getHubNode', 'GET', `/api/v1/hubs/${hubId}/nodes/${textNode.body.id}`, { token });
    await show(
      'updateHubNode',
      'PATCH',
      `/api/v1/hubs/${hubId}/nodes/${textNode.body.id}?version=${node.body.version}`,
      { body: { x: 40, y: 20, label: 'Targets' }, token },
    );
    await show('getHubNodeContent', 'GET', `/api/v1/hubs/${hubId}/nodes/${noteNode.body.id}/content`, { token });
    await show('getHubNodeNeighbors', 'GET', `/api/v1/hubs/${hubId}/nodes/${textNode.body.id}/neighbors`, {
      token,
    });
    const canvas = await show('exportHubCanvas', 'GET', `/api/v1/hubs/${hubId}/canvas`, { token });
    await show('importHub', 'POST', '/api/v1/hubs/import', {
      body: { name: 'Observing plan (copy)', canvas: canvas.body },
      token,
    });
    await show('removeHubEdge', 'DELETE', `/api/v1/hubs/${hubId}/edges/${edge.body.id}`, { token });
    await show('removeHubNode', 'DELETE', `/api/v1/hubs/${hubId}/nodes/${noteNode.body.id}?version=1`, { token });
    const spareHub = await post('/api/v1/hubs', { name: 'Scratch' }, token);
    await show('deleteHub', 'DELETE', `/api/v1/hubs/${spareHub.body.id}?version=1`, { token });
    await show('restoreHub', 'POST', `/api/v1/trash/hub/${spareHub.body.id}/restore`, { token });
    await api(server.url).delete(`/api/v1/hubs/${spareHub.body.id}?version=3`, { token });

    // ---- the trash -----------------------------------------------------------------------
    await show('listTrash', 'GET', '/api/v1/trash?limit=10', { token });
    await show('restoreVaultItem', 'POST', `/api/v1/trash/vault_item/${file.body.id}/restore`, { token });
    await show('purgeNote', 'DELETE', `/api/v1/trash/note/${scratch.body.id}`, { token });
    await show('purgeHub', 'DELETE', `/api/v1/trash/hub/${spareHub.body.id}`, { token });
    const fileNow = await get(`/api/v1/vault/items/${file.body.id}`, token);
    await api(server.url).delete(`/api/v1/vault/items/${file.body.id}?version=${fileNow.body.version}`, { token });
    await show('purgeVaultItem', 'DELETE', `/api/v1/trash/vault_item/${file.body.id}`, { token });
    const leftover = await post('/api/v1/notes', { title: 'Leftover', body: 'for the trash' }, token);
    await api(server.url).delete(`/api/v1/notes/${leftover.body.id}?version=1`, { token });
    await show('emptyTrash', 'DELETE', '/api/v1/trash', { token });

    // ---- integrations: webhooks ----------------------------------------------------------
    const hook = await show('createWebhook', 'POST', '/api/v1/integrations/webhooks', {
      body: { url: hookUrl, event_types: ['note.created', 'note.updated'], description: 'Sync to my wiki' },
      token,
    });
    await show('listWebhooks', 'GET', '/api/v1/integrations/webhooks', { token });
    const hookNow = await show('getWebhook', 'GET', `/api/v1/integrations/webhooks/${hook.body.id}`, { token });
    await show(
      'updateWebhook',
      'PATCH',
      `/api/v1/integrations/webhooks/${hook.body.id}?version=${hookNow.body.version}`,
      { body: { event_types: ['note.created', 'note.updated', 'note.deleted'] }, token },
    );
    await show('rotateWebhookSecret', 'POST', `/api/v1/integrations/webhooks/${hook.body.id}/rotate-secret`, {
      token,
    });
    await show('testWebhook', 'POST', `/api/v1/integrations/webhooks/${hook.body.id}/test`, { token });
    const attempt = await until(async () => {
      const log = await get(`/api/v1/integrations/webhooks/${hook.body.id}/deliveries`, token);
      return log.body.items?.[0] as { delivery_id: string } | undefined;
    }, 'the delivery');
    await show('listWebhookDeliveries', 'GET', `/api/v1/integrations/webhooks/${hook.body.id}/deliveries`, {
      token,
    });
    await show(
      'retryWebhookDelivery',
      'POST',
      `/api/v1/integrations/webhooks/deliveries/${attempt.delivery_id}/retry`,
      {
        token,
      },
    );
    const spareHook = await post(
      '/api/v1/integrations/webhooks',
      { url: hookUrl, event_types: ['hub.created'] },
      token,
    );
    await show('deleteWebhook', 'DELETE', `/api/v1/integrations/webhooks/${spareHook.body.id}?version=1`, { token });

    // ---- the event stream ----------------------------------------------------------------
    examples.set('streamEvents', await streamExample(token));

    // ---- transfer: imports and exports ---------------------------------------------------
    const bookmarks = Buffer.from(
      '<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n<DT><H3>Reading</H3>\n<DL><p>\n' +
        '<DT><A HREF="https://example.org/moon" ADD_DATE="1700000000" TAGS="space">The Moon</A>\n</DL><p>\n</DL><p>\n',
    );
    const started = await show('startImport', 'POST', '/api/v1/imports?format=netscape', {
      raw: bookmarks,
      token,
      headers: { 'content-type': 'text/html' },
    });
    await until(
      async () => (await get(`/api/v1/imports/${started.body.id}`, token)).body.state === 'succeeded',
      'the import',
    );
    await show('getImport', 'GET', `/api/v1/imports/${started.body.id}`, { token });
    await show('listImports', 'GET', '/api/v1/imports?limit=5', { token });
    await show('cancelImport', 'DELETE', `/api/v1/imports/${started.body.id}`, { token });
    const exported = await show('startExport', 'POST', '/api/v1/exports', {
      body: { include: ['notes', 'hubs'] },
      token,
    });
    await until(
      async () => (await get(`/api/v1/exports/${exported.body.id}`, token)).body.state === 'succeeded',
      'the export',
    );
    await show('getExport', 'GET', `/api/v1/exports/${exported.body.id}`, { token });
    await show('downloadExport', 'GET', `/api/v1/exports/${exported.body.id}/download`, { token });
    await show('deleteExport', 'DELETE', `/api/v1/exports/${exported.body.id}`, { token });

    // ---- auth: what ends a user, last ----------------------------------------------------
    ada = await get(`/api/v1/admin/users/${adaId}`, admin);
    await show('deleteUser', 'DELETE', `/api/v1/admin/users/${adaId}?version=${ada.body.version}`, {
      token: admin,
    });

    const missing = routes.filter((r) => !examples.has(r.operationId)).map((r) => r.operationId);
    expect(missing).toEqual([]);
    const wrong = routes
      .filter((r) => examples.get(r.operationId)!.status !== r.status)
      .map((r) => {
        const e = examples.get(r.operationId)!;
        return `${r.operationId}: ${e.status} ${JSON.stringify(e.body).slice(0, 300)} (declares ${r.status})`;
      });
    expect(wrong).toEqual([]);

    if (WRITE) fs.writeFileSync(API_EXAMPLES_DOC, renderExamples(moduleSections(), examples));
  }, 300_000);

  /** The event stream (it does not end) until the frame of a note created meanwhile; then let go. */
  async function streamExample(token: string): Promise<Example> {
    const url = '/api/v1/events?types=note.created,note.deleted';
    const abort = new AbortController();
    const res = await fetch(`${server.url}${url}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    await api(server.url).post('/api/v1/notes', { title: 'Moon phases', body: 'Full moon on the 4th.' }, { token });
    let text = '';
    const reader = res.body!.getReader();
    const stop = setTimeout(() => abort.abort(), 10_000);
    try {
      while (!/event: note\.created\n.*\n\n/.test(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += Buffer.from(value).toString('utf8');
      }
    } catch {
      // given up waiting: the test below says what came
    } finally {
      clearTimeout(stop);
      abort.abort();
    }
    expect(text).toMatch(/event: note\.created/);
    return {
      operationId: 'streamEvents',
      method: 'GET',
      url,
      requestHeaders: { accept: 'text/event-stream' },
      status: res.status,
      headers: Object.fromEntries(res.headers),
      body: `${text.trimEnd()}\n\n… (the stream stays open)`,
    };
  }

  it('the checked-in document shows every route, and each module page links to its section', () => {
    const doc = fs.readFileSync(API_EXAMPLES_DOC, 'utf8');
    const absent = routes.filter((r: RouteSpec) => !doc.includes(`<a id="${exampleAnchor(r)}"></a>`));
    expect(absent.map((r) => `${r.operationId} (run npm run docs:api-examples)`)).toEqual([]);
    // Each page links to its sections, and each link's target is in the document (a section, or a route's anchor).
    const unlinked: string[] = [];
    for (const [page, anchors] of Object.entries(MODULE_PAGES)) {
      const text = fs.readFileSync(path.join(__dirname, '../..', page), 'utf8');
      for (const anchor of anchors)
        if (!text.includes(`api-examples.md#${anchor}`)) unlinked.push(`${page} → #${anchor}`);
      for (const [, anchor] of text.matchAll(/api-examples\.md#([\w-]+)/g))
        if (!doc.includes(`## ${anchor}\n`) && !doc.includes(`<a id="${anchor}"></a>`))
          unlinked.push(`${page}: no #${anchor}`);
    }
    expect(unlinked).toEqual([]);
    // Every module's section has a page that links to it.
    const linked = new Set(Object.values(MODULE_PAGES).flat());
    expect(
      moduleSections()
        .filter((s) => !linked.has(s.name))
        .map((s) => s.name),
    ).toEqual([]);
  });
});
