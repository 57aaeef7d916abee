// A deleted user's webhooks (issue 40, the kit's cascade): the fan-out disables them at once when
// it reaches user.deleted in the log, and the job queue removes their attempts, deliveries and
// rows in batches (JOBS_BATCH_ROWS small here); another user's webhook is untouched.
import { In } from 'typeorm';
import type { DataSource } from 'typeorm';
import { openDatabase } from '../../lib/database/open';
import { KitJob } from '../../lib/kit/jobs';
import { integrationsSubgraph } from '../../subgraphs/integrations';
import { WebhookAttempt } from '../../subgraphs/integrations/entities/webhook-attempt';
import { WebhookDelivery } from '../../subgraphs/integrations/entities/webhook-delivery';
import { Webhook } from '../../subgraphs/integrations/entities/webhook';
import { api, createUserAndLogin, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';
import { Receiver, startReceiver } from './receiver';

const PATH = '/api/v1/integrations/webhooks';
let server: TestServer;
let http: ReturnType<typeof api>;
let receiver: Receiver;
let adminToken: string;
let db: DataSource;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({
    SYNTHESIS_CONCURRENCY: '0',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    WEBHOOK_POLL_MS: '20',
    JOBS_BATCH_ROWS: '2',
  });
  http = api(server.url);
  adminToken = (await login(server.url, ADMIN)).access_token;
  db = await openDatabase(
    { ...server.config, MIGRATIONS_RUN: false },
    { name: 'integrations', entities: integrationsSubgraph.entities, migrations: [] },
  );
});
afterAll(async () => {
  await db?.destroy();
  await server?.close();
  await receiver?.close();
});

async function userWithDeliveredHook(name: string, voices: number) {
  const user = await createUserAndLogin(server.url, adminToken, name);
  const hook = await http.post(
    PATH,
    { url: `${receiver.url}/${name}`, event_types: ['voice.*'] },
    { token: user.token },
  );
  expect(hook.status).toBe(202);
  for (let i = 0; i < voices; i++)
    expect(
      (await http.post('/api/v1/tts/voices', { name: `v${i}`, base_voice: 'f3' }, { token: user.token })).status,
    ).toBe(202);
  await until(
    async () => (await db.manager.countBy(WebhookAttempt, { webhookId: hook.body.id })) >= voices,
    'the deliveries',
  );
  return { ...user, hookId: hook.body.id as string };
}

it("removes a deleted user's webhooks with their deliveries and attempts, in batches, and no one else's", async () => {
  const doomed = await userWithDeliveredHook('hook-doomed', 5);
  const keeper = await userWithDeliveredHook('hook-keeper', 1);
  expect((await http.delete(`/api/v1/admin/users/${doomed.id}?version=1`, { token: adminToken })).status).toBe(202);
  await until(async () => !(await db.manager.countBy(Webhook, { id: doomed.hookId })), 'the webhook to go', 30_000);
  expect(await db.manager.countBy(WebhookDelivery, { webhookId: doomed.hookId })).toBe(0);
  expect(await db.manager.countBy(WebhookAttempt, { webhookId: doomed.hookId })).toBe(0);
  await until(async () => !(await db.manager.countBy(KitJob, { ownerId: doomed.id })), 'the job to end');
  const kept = await db.manager.findBy(Webhook, { id: In([keeper.hookId]) });
  expect(kept.map((w) => w.enabled)).toEqual([true]);
  expect(await db.manager.countBy(WebhookAttempt, { webhookId: keeper.hookId })).toBeGreaterThan(0);
}, 60_000);
