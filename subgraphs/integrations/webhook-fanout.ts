// Events to webhooks: a consumer of the event log (lib/event-consumer.ts) that writes one
// delivery per matching webhook in the transaction that advances its position, so each event is
// fanned out exactly once however many processes run it. A user's webhooks get that user's events;
// a webhook with `allUsers` (admin:integrations) gets every user's audit events (those the auth
// subgraph writes). Disabled webhooks get nothing.
import { v7 as uuidv7 } from 'uuid';
import { Brackets, In, type DataSource, type EntityManager } from 'typeorm';
import { EventConsumer } from '../../lib/event-consumer';
import type { EventLog, LoggedEvent } from '../../lib/event-log';
import type { Logger } from '../../lib/logger';
import { WebhookAttempt } from './entities/webhook-attempt';
import { DeliveryState, WebhookDelivery } from './entities/webhook-delivery';
import { Webhook } from './entities/webhook';
import { dueNow } from './webhook-service';
import { typeMatches } from './webhook-signing';

/** The subgraph whose events are the audit trail. */
const AUDIT_SOURCE = 'auth';

/** The body: the event as the event stream's `data:` shows it. */
export function eventBody(event: LoggedEvent): string {
  return JSON.stringify({
    ...(JSON.parse(event.payload) as Record<string, unknown>),
    type: event.type,
    id: event.resourceId,
    occurred_at: event.occurredAt.toISOString(),
    event_id: event.eventId,
    user_id: event.userId,
  });
}

/** A deleted user's webhooks go, with their deliveries and log (the auth subgraph's user.deleted). */
async function forgetUser(m: EntityManager, userId: string): Promise<void> {
  const hooks = await m.find(Webhook, { select: { id: true }, where: { ownerId: userId } });
  if (!hooks.length) return;
  const ids = hooks.map((h) => h.id);
  await m.delete(WebhookAttempt, { webhookId: In(ids) });
  await m.delete(WebhookDelivery, { webhookId: In(ids) });
  await m.delete(Webhook, { id: In(ids) });
}

async function fanOut(m: EntityManager, event: LoggedEvent): Promise<void> {
  if (event.type === 'user.deleted' && event.source === AUDIT_SOURCE) {
    await forgetUser(m, event.resourceId);
    return;
  }
  const query = m
    .createQueryBuilder(Webhook, 'w')
    .select(['w.id', 'w.eventTypes', 'w.createdAt'])
    .where('w.enabled = :enabled', { enabled: true })
    .andWhere(
      new Brackets((q) => {
        q.where('w.ownerId = :userId', { userId: event.userId ?? '' });
        if (event.source === AUDIT_SOURCE) q.orWhere('w.allUsers = :all', { all: true });
      }),
    );
  // A webhook gets events from its creation on (a consumer catching up must not send it older ones).
  const webhooks = (await query.getMany()).filter(
    (w) => w.createdAt <= event.occurredAt && w.eventTypes.some((p) => typeMatches(p, event.type)),
  );
  if (!webhooks.length) return;
  const now = new Date();
  const body = eventBody(event);
  await m.insert(
    WebhookDelivery,
    webhooks.map((w) => ({
      id: uuidv7(),
      webhookId: w.id,
      eventId: event.eventId,
      eventType: event.type,
      eventSeq: event.seq,
      payload: body,
      state: DeliveryState.PENDING,
      attempts: 0,
      nextAttemptAt: now,
      occurredAt: event.occurredAt,
      createdAt: now,
    })),
  );
  await dueNow(
    m,
    webhooks.map((w) => w.id),
  );
}

export function webhookFanOut(options: {
  dataSource: DataSource;
  log: EventLog;
  intervalMs: number;
  maxIntervalMs: number;
  logger: Logger;
}): EventConsumer {
  // Short transactions: the fan-out holds its endpoints' rows until it commits, and workers recording attempts wait for them.
  return new EventConsumer({ name: 'integrations.webhooks', handle: fanOut, batch: 20, ...options });
}
