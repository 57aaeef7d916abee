// The integrations subgraph: webhooks (CONTRACT.md "Admin: integrations", docs/integrations.md).
// Owns the `integrations` database; reads the event log (the fan-out to webhooks) and never
// another subgraph's tables. Its REST routes (under /api/v1/integrations) are in routes.ts.
import path from 'node:path';
import { migrationsIn } from '../../lib/database/migrations-in';
import { EventConsumerPosition } from '../../lib/event-consumer';
import { JOB_ENTITIES } from '../../lib/kit/jobs';
import { jobQueue } from '../../lib/kit/user-cascade';
import { OutboxEvent } from '../../lib/outbox';
import type { SubgraphContext, SubgraphDefinition, SubgraphDeps } from '../../lib/subgraph';
import { UserReference } from '../../lib/user-reference';
import { WebhookDeliveryWorker } from './delivery-worker';
import { WebhookAttempt } from './entities/webhook-attempt';
import { WebhookDelivery } from './entities/webhook-delivery';
import { Webhook } from './entities/webhook';
import { UserCap } from '../../lib/kit/user-caps';
import { WebhookResolver } from './resolvers/webhook-resolver';
import { webhookFanOut } from './webhook-fanout';
import { registerUserCascade } from './user-cascade';
import { WebhookService } from './webhook-service';

function backgroundWork({ config, dataSource, events, logger }: SubgraphDeps) {
  // A deleted user's webhooks and their rows: the kit's queue, in batches (user-cascade.ts).
  const queue = jobQueue({ config, dataSource, logger });
  registerUserCascade(queue);
  const fanOut = webhookFanOut({
    queue,
    dataSource,
    log: events,
    intervalMs: config.EVENT_POLL_MS,
    maxIntervalMs: config.POLL_MAX_IDLE_MS,
    logger,
  });
  const worker = config.WEBHOOK_CONCURRENCY > 0 ? new WebhookDeliveryWorker(dataSource, config, logger) : undefined;
  return {
    async start() {
      queue.start();
      await fanOut.start();
      worker?.start();
    },
    async stop() {
      await fanOut.stop();
      await queue.stop();
      await worker?.stop();
    },
  };
}

export const integrationsSubgraph: SubgraphDefinition = {
  name: 'integrations',
  entities: [Webhook, WebhookDelivery, WebhookAttempt, UserCap, ...JOB_ENTITIES, OutboxEvent, EventConsumerPosition],
  migrations: migrationsIn(path.join(__dirname, 'migrations')),
  create(deps) {
    const { config, dataSource, events } = deps;
    const service = new WebhookService(dataSource, events, config);
    const work = backgroundWork(deps);
    return {
      resolvers: [new WebhookResolver(service)],
      orphanedTypes: [UserReference],
      references: {
        // Other subgraphs may point at one; only its owner sees it.
        Webhook: {
          __resolveReference: (ref: { id: string }, ctx: SubgraphContext) =>
            ctx.principal ? service.get(ctx.principal.userId, ref.id).catch(() => null) : null,
        },
      },
      start: () => work.start(),
      stop: () => work.stop(),
    };
  },
  // `npm run start:worker -- integrations`: fan-out and delivery only.
  async worker(deps) {
    const work = backgroundWork(deps);
    await work.start();
    return { stop: () => work.stop() };
  },
};
