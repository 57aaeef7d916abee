// The delivery worker records the attempts of several endpoints in one transaction (issue 44);
// a batch whose conditions do not all hold (here a delivery whose attempt count changed under it,
// as a takeover or a retry by hand would change it) is rolled back and each attempt is recorded
// on its own, as before: the others are recorded, the changed one is left to whoever changed it.
import { v7 as uuidv7 } from 'uuid';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../lib/config';
import { openDatabase } from '../../lib/database/open';
import { createLogger } from '../../lib/logger';
import { integrationsSubgraph } from '../../subgraphs/integrations';
import { WebhookDeliveryWorker } from '../../subgraphs/integrations/delivery-worker';
import { WebhookAttempt } from '../../subgraphs/integrations/entities/webhook-attempt';
import { DeliveryState, WebhookDelivery } from '../../subgraphs/integrations/entities/webhook-delivery';
import { Webhook } from '../../subgraphs/integrations/entities/webhook';
import { newSecret } from '../../subgraphs/integrations/webhook-signing';
import { cleanupDatabases, isolatedEnv } from '../helpers/server';

interface Recorder {
  record(
    webhook: Webhook,
    delivery: WebhookDelivery,
    result: { outcome: 'delivered'; status: number; error: null; durationMs: number },
  ): Promise<{ lost: boolean; head: WebhookDelivery | null }>;
}

describe('webhook attempts recorded together', () => {
  const env = { ...isolatedEnv(), LOG_LEVEL: 'silent' };
  const config = loadConfig(env);
  let db: DataSource;

  beforeAll(async () => {
    db = await openDatabase(config, {
      name: 'integrations',
      entities: integrationsSubgraph.entities,
      migrations: integrationsSubgraph.migrations,
    });
  });
  afterAll(async () => {
    await db?.destroy();
    await cleanupDatabases(config);
  });

  /** An endpoint leased by `worker` with two waiting deliveries: the first and the one after it. */
  async function endpoint(worker: WebhookDeliveryWorker) {
    const now = new Date();
    const webhook = {
      id: uuidv7(),
      ownerId: uuidv7(),
      url: 'http://127.0.0.1:9/hook',
      eventTypes: ['*'],
      description: null,
      enabled: true,
      allUsers: false,
      disabledReason: null,
      version: 1,
      createdAt: now,
      updatedAt: now,
      secret: newSecret(),
      previousSecret: null,
      previousSecretUntil: null,
      nextDeliveryAt: now,
      leaseOwner: worker.id,
      leaseUntil: new Date(Date.now() + 60_000),
    };
    await db.manager.insert(Webhook, webhook);
    const deliveries = [1, 2].map((seq) => ({
      id: uuidv7(),
      webhookId: webhook.id,
      eventId: uuidv7(),
      eventType: 'thing.happened',
      eventSeq: seq,
      payload: '{}',
      state: DeliveryState.PENDING,
      attempts: 0,
      nextAttemptAt: now,
      occurredAt: now,
      createdAt: now,
    }));
    await db.manager.insert(WebhookDelivery, deliveries);
    return { webhook: webhook as Webhook, first: deliveries[0] as WebhookDelivery, second: deliveries[1] };
  }

  const delivered = { outcome: 'delivered' as const, status: 204, error: null, durationMs: 1 };

  it.each([false, true])(
    'records each attempt once, with the next delivery (one changed meanwhile: %s)',
    async (conflict) => {
      const worker = new WebhookDeliveryWorker(db, config, createLogger(config));
      const recorder = worker as unknown as Recorder;
      const endpoints = await Promise.all([1, 2, 3, 4].map(() => endpoint(worker)));
      if (conflict) await db.manager.update(WebhookDelivery, { id: endpoints[2].first.id }, { attempts: 5 });
      // The first starts a transaction at once; the three others wait for it and go in one batch.
      const outcomes = await Promise.all(endpoints.map((e) => recorder.record(e.webhook, e.first, delivered)));
      for (const [i, e] of endpoints.entries()) {
        const changed = conflict && i === 2;
        expect(outcomes[i]).toMatchObject(
          changed ? { lost: true, head: null } : { lost: false, head: { id: e.second.id } },
        );
        const row = await db.manager.findOneByOrFail(WebhookDelivery, { id: e.first.id });
        expect(row).toMatchObject(
          changed ? { state: DeliveryState.PENDING, attempts: 5 } : { state: DeliveryState.DELIVERED, attempts: 1 },
        );
        expect(await db.manager.countBy(WebhookAttempt, { deliveryId: e.first.id })).toBe(changed ? 0 : 1);
      }
    },
  );
});
