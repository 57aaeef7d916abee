// Webhooks end to end (CONTRACT.md "Admin: integrations"), on SQLite and MySQL: created over
// REST, fed by the event log, delivered to a local receiver by the process's delivery worker,
// verified with the independent `standardwebhooks` package; retries with the same webhook-id,
// order per endpoint, the delivery log, manual retry, rotation, the test event, the SSRF guard,
// no redirects, the timeout, giving up (webhook.disabled), and every answer against the OpenAPI document.
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { registry } from '../../lib/metrics';
import { openLog, EventLog, untilLogged } from '../helpers/event-log';
import { api, createUserAndLogin, login, request } from '../helpers/http';
import { OpenApiDocument, undocumented } from '../helpers/openapi';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { openStream } from '../helpers/sse';
import { until } from '../helpers/wait';
import { Receiver, startReceiver } from './receiver';

const PATH = '/api/v1/integrations/webhooks';
let server: TestServer;
let http: ReturnType<typeof api>;
let receiver: Receiver;
let log: EventLog;
let adminToken: string;
let doc: OpenApiDocument;
let users = 0;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({
    SYNTHESIS_CONCURRENCY: '0',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    WEBHOOK_POLL_MS: '20',
    WEBHOOK_RETRY_BASE_SECONDS: '1',
    WEBHOOK_RETRY_MAX_DELAY_SECONDS: '1',
    WEBHOOK_RETRY_SECONDS: '4',
    WEBHOOK_TIMEOUT_SECONDS: '1',
  });
  http = api(server.url);
  log = await openLog(server.config);
  adminToken = (await login(server.url, ADMIN)).access_token;
  doc = (await http.get('/api/v1/openapi.json')).body;
});
afterAll(async () => {
  await log?.close();
  await server?.close();
  await receiver?.close();
});

/** The answer, after checking it is one the document promises. */
function documented<T extends { status: number }>(method: string, template: string, res: T): T {
  expect(undocumented(doc, method, template, res as never)).toEqual([]);
  return res;
}

async function freshUser() {
  const user = await createUserAndLogin(server.url, adminToken, `hook${++users}`);
  return { id: user.id, token: user.token };
}

async function createWebhook(token: string, body: Record<string, unknown>) {
  const res = documented('post', PATH, await http.post(PATH, body, { token }));
  expect(res.status).toBe(202);
  return res.body as { id: string; secret: string };
}

const createVoice = async (token: string, name: string) => {
  const res = await http.post('/api/v1/tts/voices', { name, base_voice: 'f3' }, { token });
  expect(res.status).toBe(202);
  return res.body.id as string;
};

const attemptsOf = async (token: string, webhookId: string) => {
  const res = documented(
    'get',
    `${PATH}/{webhookId}/deliveries`,
    await http.get(`${PATH}/${webhookId}/deliveries?limit=100`, { token }),
  );
  expect(res.status).toBe(200);
  return res.body.items as Record<string, any>[];
};

const verify = (secret: string, r: { body: string; headers: Record<string, unknown> }) =>
  new StandardWebhook(secret).verify(r.body, r.headers as Record<string, string>);

test('create answers the secret once; the webhook reads back without it; bad input is 4xx', async () => {
  const user = await freshUser();
  const res = await http.post(
    PATH,
    { url: `${receiver.url}/a`, event_types: ['voice.*'], description: 'mine' },
    { token: user.token },
  );
  documented('post', PATH, res);
  expect(res.status).toBe(202);
  expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  expect(res.headers.get('location')).toBe(`${PATH}/${res.body.id}`);
  expect(res.headers.get('cache-control')).toBe('no-store');
  const got = documented('get', `${PATH}/{webhookId}`, await http.get(`${PATH}/${res.body.id}`, { token: user.token }));
  expect(got.body).toMatchObject({
    id: res.body.id,
    url: `${receiver.url}/a`,
    event_types: ['voice.*'],
    enabled: true,
    all_users: false,
    version: 1,
  });
  expect(JSON.stringify(got.body)).not.toContain('whsec_');
  const listed = documented('get', PATH, await http.get(PATH, { token: user.token }));
  expect(listed.body.items.map((w: { id: string }) => w.id)).toEqual([res.body.id]);

  const bad = async (body: unknown) => documented('post', PATH, await http.post(PATH, body, { token: user.token }));
  expect((await bad({ url: 'ftp://x/', event_types: ['*'] })).status).toBe(400);
  expect((await bad({ url: 'http://u:p@x.example/', event_types: ['*'] })).status).toBe(400);
  expect((await bad({ url: 'http://x.example/', event_types: ['voice.*.x'] })).status).toBe(400);
  expect((await bad({ url: 'http://x.example/', event_types: [] })).status).toBe(400);
  expect((await bad({ url: 'http://x.example/', event_types: ['*'], all_users: true })).status).toBe(403);
  const other = await freshUser();
  expect((await http.get(`${PATH}/${res.body.id}`, { token: other.token })).status).toBe(404);
});

test('REST and GraphQL refuse the same URLs: IPv6 and numeric shorthand literals (issue 41, finding 10)', async () => {
  const user = await freshUser();
  const create = 'mutation ($url: String!) { createWebhook(url: $url, eventTypes: ["*"]) { id } }';
  const refused = [
    'http://[::1]/',
    'http://[::7f00:1]:8080/',
    'http://2130706434/',
    'http://0x7f.2/',
    'http://127.2/',
    'http://0177.0.0.1/',
    'http://127.1:8080/x',
    'http://u:p@x.example/',
    'ftp://x.example/',
  ];
  for (const url of refused) {
    const rest = documented('post', PATH, await http.post(PATH, { url, event_types: ['*'] }, { token: user.token }));
    expect({ url, status: rest.status }).toEqual({ url, status: 400 });
    const gql = await http.graphql(create, { url }, user.token);
    expect({ url, code: gql.body.errors?.[0]?.extensions?.code }).toEqual({ url, code: 'validation_error' });
  }
  const made = await http.graphql(create, { url: `${receiver.url}/gql` }, user.token);
  expect(made.body.errors).toBeUndefined();
  const id = made.body.data.createWebhook.id;
  const change = await http.graphql(
    'mutation ($id: ID!, $url: String) { updateWebhook(id: $id, version: 1, url: $url) { id } }',
    { id, url: 'http://0x7f.2/' },
    user.token,
  );
  expect(change.body.errors?.[0]?.extensions?.code).toBe('validation_error');
  const patched = documented(
    'patch',
    `${PATH}/{webhookId}`,
    await request(server.url, 'PATCH', `${PATH}/${id}?version=1`, {
      token: user.token,
      body: { url: 'http://127.2/' },
    }),
  );
  expect(patched.status).toBe(400);
});

test("delivers the owner's matching events, signed per Standard Webhooks, the body as the stream shows it", async () => {
  const user = await freshUser();
  const other = await freshUser();
  const hook = await createWebhook(user.token, { url: `${receiver.url}/signed`, event_types: ['voice.*'] });
  const stream = await openStream(`${server.url}/api/v1/events`, { token: user.token });
  await createVoice(other.token, 'not mine');
  const voiceId = await createVoice(user.token, 'mine');
  await http.post('/api/v1/tts/syntheses', { text: 'Hi.', base_voice: 'f3' }, { token: user.token }); // synthesis.*: not asked for
  const [frame] = await stream.waitFor((f) => f.event === 'voice.created');
  stream.close();
  const [delivery] = await until(() => receiver.at('/signed').length >= 1 && receiver.at('/signed'), 'the delivery');
  expect(verify(hook.secret, delivery)).toEqual(frame.data);
  expect(JSON.parse(delivery.body)).toEqual(frame.data);
  expect(delivery.headers['webhook-id']).toBe(frame.data.event_id);
  expect(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
  expect(delivery.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  expect(delivery.headers['content-type']).toBe('application/json');
  expect(frame.data.id).toBe(voiceId);
  // Another secret does not verify it.
  expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, delivery)).toThrow();
  const [attempt] = await until(async () => {
    const delivered = (await attemptsOf(user.token, hook.id)).filter((a) => a.outcome === 'delivered');
    return delivered.length ? delivered : undefined;
  }, 'the log');
  expect(attempt).toMatchObject({
    event_id: frame.data.event_id,
    event_type: 'voice.created',
    attempt: 1,
    status: 204,
    error: null,
    next_attempt_at: null,
  });
  // Nothing else arrives: a sentinel of the same user's, after the synthesis, is the next delivery.
  await createVoice(user.token, 'sentinel');
  await until(() => receiver.at('/signed').length >= 2, 'the sentinel');
  expect(receiver.at('/signed').map((r) => JSON.parse(r.body).type)).toEqual(['voice.created', 'voice.created']);
  expect(registry.getSingleMetric('webhook_deliveries_total')).toBeDefined();
  expect(await registry.getSingleMetricAsString('webhook_deliveries_total')).toMatch(/outcome="delivered"} [1-9]/);
});

test('a failing endpoint is retried with the same webhook-id; later events wait behind the first, in order', async () => {
  const user = await freshUser();
  const hook = await createWebhook(user.token, { url: `${receiver.url}/flaky`, event_types: ['voice.created'] });
  receiver.answer('/flaky', (n) => ({ status: n <= 2 ? 503 : 200 }));
  for (const name of ['one', 'two', 'three']) await createVoice(user.token, name);
  await until(() => receiver.at('/flaky').length >= 5, 'five requests', 20_000);
  const seen = receiver.at('/flaky').map((r) => [JSON.parse(r.body).name, r.headers['webhook-id']]);
  // Two failures of the first, then the first, second and third in order.
  expect(seen.map(([name]) => name)).toEqual(['one', 'one', 'one', 'two', 'three']);
  expect(new Set(seen.slice(0, 3).map(([, id]) => id)).size).toBe(1);
  const gaps = receiver
    .at('/flaky')
    .slice(0, 3)
    .map((r, i, all) => (i ? r.at - all[i - 1].at : 0));
  expect(gaps[1]).toBeGreaterThanOrEqual(400); // backed off (1 s with jitter over its upper half)
  const attempts = await until(async () => {
    const a = await attemptsOf(user.token, hook.id);
    return a.length >= 5 && a;
  }, 'the log');
  expect(attempts.map((a) => [a.attempt, a.outcome, a.status])).toEqual([
    [1, 'delivered', 200],
    [1, 'delivered', 200],
    [3, 'delivered', 200],
    [2, 'failed', 503],
    [1, 'failed', 503],
  ]);
  expect(attempts[4].next_attempt_at).not.toBeNull();

  // Manual retry of a delivered one: sent again, same webhook-id.
  const first = attempts[4];
  const retried = documented(
    'post',
    `${PATH}/deliveries/{deliveryId}/retry`,
    await http.post(`${PATH}/deliveries/${first.delivery_id}/retry`, undefined, { token: user.token }),
  );
  expect(retried.status).toBe(202);
  expect(retried.headers.get('location')).toBe(`${PATH}/${hook.id}/deliveries`);
  await until(() => receiver.at('/flaky').length >= 6, 'the retry');
  expect(receiver.at('/flaky')[5].headers['webhook-id']).toBe(first.event_id);
  const other = await freshUser();
  expect(
    (await http.post(`${PATH}/deliveries/${first.delivery_id}/retry`, undefined, { token: other.token })).status,
  ).toBe(404);
});

test('the test event, and a rotated secret signing alongside the old one', async () => {
  const user = await freshUser();
  const hook = await createWebhook(user.token, { url: `${receiver.url}/rotate`, event_types: ['nothing.matches'] });
  const rotated = documented(
    'post',
    `${PATH}/{webhookId}/rotate-secret`,
    await http.post(`${PATH}/${hook.id}/rotate-secret`, undefined, { token: user.token }),
  );
  expect(rotated.status).toBe(202);
  expect(rotated.body.secret).not.toBe(hook.secret);
  const test = documented(
    'post',
    `${PATH}/{webhookId}/test`,
    await http.post(`${PATH}/${hook.id}/test`, undefined, { token: user.token }),
  );
  expect(test.status).toBe(202);
  const [delivery] = await until(() => receiver.at('/rotate').length >= 1 && receiver.at('/rotate'), 'the test event');
  expect(JSON.parse(delivery.body)).toMatchObject({ type: 'webhook.test', id: hook.id, user_id: user.id });
  expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(2);
  expect(verify(rotated.body.secret, delivery)).toMatchObject({ type: 'webhook.test' });
  expect(verify(hook.secret, delivery)).toMatchObject({ type: 'webhook.test' });
});

test('an endpoint at a blocked address gets nothing; redirects are not followed; a slow answer is a timeout', async () => {
  const user = await freshUser();
  const port = new URL(receiver.url).port;
  // `localhost` is not in WEBHOOK_ALLOW_HOSTS (127.0.0.1 is, as written): the guard refuses it.
  const blocked = await createWebhook(user.token, {
    url: `http://localhost:${port}/blocked`,
    event_types: ['webhook.test'],
  });
  receiver.answer('/redirect', () => ({ status: 307, location: '/target' }));
  const redirect = await createWebhook(user.token, { url: `${receiver.url}/redirect`, event_types: ['webhook.test'] });
  receiver.answer('/slow', () => ({ delayMs: 3000 }));
  const slow = await createWebhook(user.token, { url: `${receiver.url}/slow`, event_types: ['webhook.test'] });
  receiver.answer('/big', () => ({ status: 200, bodyBytes: 10 * 1024 * 1024 }));
  const big = await createWebhook(user.token, { url: `${receiver.url}/big`, event_types: ['webhook.test'] });
  for (const h of [blocked, redirect, slow, big])
    await http.post(`${PATH}/${h.id}/test`, undefined, { token: user.token });
  const firstOf = (id: string) => until(async () => (await attemptsOf(user.token, id)).at(-1), `an attempt of ${id}`);
  const refused = await firstOf(blocked.id);
  expect(refused).toMatchObject({ outcome: 'blocked_address', status: null });
  expect(refused.error).toContain('WEBHOOK_ALLOW_HOSTS'); // the setting that allows an internal host
  expect(receiver.at('/blocked')).toHaveLength(0);
  expect(await firstOf(redirect.id)).toMatchObject({
    outcome: 'failed',
    status: 307,
    error: 'redirects are not followed',
  });
  expect(receiver.at('/target')).toHaveLength(0);
  const timedOut = await firstOf(slow.id);
  expect(timedOut).toMatchObject({ outcome: 'timeout', status: null });
  expect(timedOut.duration_ms).toBeLessThan(2500);
  // 10 MiB answered: delivered after reading at most WEBHOOK_MAX_RESPONSE_BYTES.
  expect(await firstOf(big.id)).toMatchObject({ outcome: 'delivered', status: 200 });
});

test('a receiver answering 410 Gone disables the endpoint at once (reason gone), without retrying', async () => {
  const user = await freshUser();
  receiver.answer('/gone', () => ({ status: 410 }));
  const hook = await createWebhook(user.token, { url: `${receiver.url}/gone`, event_types: ['voice.*'] });
  const started = Date.now();
  await createVoice(user.token, 'first');
  await createVoice(user.token, 'second'); // held behind the first, kept for when it is enabled again
  const disabled = await untilLogged(log, hook.id, 'webhook.disabled');
  // At once: the retry period is 4 s here, and the first retry would come after 1 s.
  expect(Date.now() - started).toBeLessThan(3000);
  expect(JSON.parse(disabled.payload)).toMatchObject({ webhook_id: hook.id, reason: 'gone' });
  const got = await http.get(`${PATH}/${hook.id}`, { token: user.token });
  expect(got.body).toMatchObject({ enabled: false, disabled_reason: 'gone' });
  const attempts = await attemptsOf(user.token, hook.id);
  expect(attempts).toHaveLength(1);
  expect(attempts[0]).toMatchObject({ outcome: 'failed', status: 410, next_attempt_at: null });
  await new Promise((resolve) => setTimeout(resolve, 1500)); // past when a retry would have come
  expect(receiver.at('/gone')).toHaveLength(1);
});

test('deliveries failing for the retry period disable the endpoint with webhook.disabled; enabling resumes', async () => {
  const user = await freshUser();
  receiver.answer('/down', () => ({ status: 500 }));
  const hook = await createWebhook(user.token, { url: `${receiver.url}/down`, event_types: ['voice.*'] });
  await createWebhook(user.token, { url: `${receiver.url}/witness`, event_types: ['voice.*'] });
  await createVoice(user.token, 'lost');
  await createVoice(user.token, 'waiting'); // held behind the first
  const disabled = await untilLogged(log, hook.id, 'webhook.disabled');
  expect(JSON.parse(disabled.payload)).toMatchObject({ webhook_id: hook.id, reason: 'failing' });
  const got = await http.get(`${PATH}/${hook.id}`, { token: user.token });
  expect(got.body).toMatchObject({ enabled: false, disabled_reason: 'failing' });
  const attempts = await attemptsOf(user.token, hook.id);
  expect(attempts[0]).toMatchObject({ outcome: 'failed', next_attempt_at: null });
  expect(attempts.length).toBeGreaterThanOrEqual(2);
  expect(new Set(receiver.at('/down').map((r) => JSON.parse(r.body).name))).toEqual(new Set(['lost']));
  expect(await registry.getSingleMetricAsString('webhook_endpoints_disabled_total')).toMatch(/ [1-9]/);
  // Disabled: a new event is not queued for it (fanned out once the witness, enabled, has it).
  await createVoice(user.token, 'while disabled');
  await until(
    () => receiver.at('/witness').some((r) => JSON.parse(r.body).name === 'while disabled'),
    'the fan-out of the event',
  );
  receiver.answer('/down', () => ({ status: 200 }));
  const patched = documented(
    'patch',
    `${PATH}/{webhookId}`,
    await request(server.url, 'PATCH', `${PATH}/${hook.id}?version=${got.body.version}`, {
      token: user.token,
      body: { enabled: true },
    }),
  );
  expect(patched.status).toBe(202);
  // What waited behind the given-up one is sent once enabled; then the next event after enabling.
  const sent = receiver.at('/down').length;
  await until(() => receiver.at('/down').length > sent, 'the waiting event');
  await createVoice(user.token, 'after');
  await until(() => receiver.at('/down').length > sent + 1, 'the event after');
  expect(
    receiver
      .at('/down')
      .slice(sent)
      .map((r) => JSON.parse(r.body).name),
  ).toEqual(['waiting', 'after']);
});

test("an admin's all_users webhook gets every user's audit events; a user's does not get another's", async () => {
  const hook = await createWebhook(adminToken, {
    url: `${receiver.url}/audit`,
    event_types: ['session.*'],
    all_users: true,
  });
  const user = await freshUser(); // logs in: session.created of that user
  await until(
    () => receiver.at('/audit').find((r) => JSON.parse(r.body).user_id === user.id),
    "the other user's session.created",
  );
  expect(hook.secret).toMatch(/^whsec_/);
});

test('deleting removes the webhook; the document lists every route', async () => {
  const user = await freshUser();
  const hook = await createWebhook(user.token, { url: `${receiver.url}/gone`, event_types: ['*'] });
  const deleted = await request(server.url, 'DELETE', `${PATH}/${hook.id}?version=1`, { token: user.token });
  documented('delete', `${PATH}/{webhookId}`, deleted);
  expect(deleted.status).toBe(202);
  expect((await http.get(`${PATH}/${hook.id}`, { token: user.token })).status).toBe(404);
  const ids = Object.values(doc.paths).flatMap((p: any) => Object.values(p).map((op: any) => op.operationId));
  expect(ids).toEqual(
    expect.arrayContaining([
      'listWebhooks',
      'getWebhook',
      'createWebhook',
      'updateWebhook',
      'deleteWebhook',
      'rotateWebhookSecret',
      'testWebhook',
      'listWebhookDeliveries',
      'retryWebhookDelivery',
    ]),
  );
});
