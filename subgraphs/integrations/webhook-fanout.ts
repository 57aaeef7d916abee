// Events to webhooks: a consumer of the event log (lib/event-consumer.ts) that writes one
// delivery per matching webhook in the transaction that advances its position, so each event is
// fanned out exactly once however many processes run it. A user's webhooks get that user's events;
// a webhook with `allUsers` (admin:integrations) gets every user's audit events (those the auth
// subgraph writes). Disabled webhooks get nothing.
import { v7 as uuidv7 } from 'uuid';
import { Brackets, type DataSource, type EntityManager } from 'typeorm';
import { EventConsumer } from '../../lib/event-consumer';
import type { EventLog, LoggedEvent } from '../../lib/event-log';
import type { Logger } from '../../lib/logger';
import type { JobQueue } from '../../lib/kit/jobs';
import { forgetUser } from './user-cascade';
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

type Subscriber = Pick<Webhook, 'id' | 'eventTypes' | 'createdAt'>;

/** The enabled webhooks that may receive an event of this user (and source). */
function subscribers(m: EntityManager, userId: string | null, audit: boolean): Promise<Subscriber[]> {
  return m
    .createQueryBuilder(Webhook, 'w')
    .select(['w.id', 'w.eventTypes', 'w.createdAt'])
    .where('w.enabled = :enabled', { enabled: true })
    .andWhere(
      new Brackets((q) => {
        q.where('w.ownerId = :userId', { userId: userId ?? '' });
        if (audit) q.orWhere('w.allUsers = :all', { all: true });
      }),
    )
    .getMany();
}

/** Rows per INSERT: well under SQLite's bound variables and MySQL's packet size. */
const INSERT_ROWS = 500;

/**
 * A batch of events at once: one query for the webhooks per (user, audit or not) in the batch,
 * multi-row INSERTs of the deliveries, and one dueNow() at the end, so the endpoints' rows are
 * locked (by the UPDATE) only for the end of the transaction.
 */
async function fanOutBatch(m: EntityManager, events: LoggedEvent[], queue: JobQueue): Promise<void> {
  const now = new Date();
  const rows: Partial<WebhookDelivery>[] = [];
  const due = new Set<string>();
  const found = new Map<string, Promise<Subscriber[]>>();
  const flush = async () => {
    for (let i = 0; i < rows.length; i += INSERT_ROWS) await m.insert(WebhookDelivery, rows.slice(i, i + INSERT_ROWS));
    rows.length = 0;
    await dueNow(m, [...due]);
    due.clear();
  };
  for (const event of events) {
    if (event.type === 'user.deleted' && event.source === AUDIT_SOURCE) {
      // What was fanned out before it goes first, then the user's webhooks stop (their rows go in batches: user-cascade.ts).
      await flush();
      await forgetUser(m, queue, event.resourceId);
      found.clear();
      continue;
    }
    const audit = event.source === AUDIT_SOURCE;
    const key = `${event.userId ?? ''}|${audit}`;
    if (!found.has(key)) found.set(key, subscribers(m, event.userId, audit));
    // A webhook gets events from its creation on (a consumer catching up must not send it older ones).
    const webhooks = (await found.get(key)!).filter(
      (w) => w.createdAt <= event.occurredAt && w.eventTypes.some((p) => typeMatches(p, event.type)),
    );
    if (!webhooks.length) continue;
    const body = eventBody(event);
    for (const w of webhooks) {
      due.add(w.id);
      rows.push({
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
      });
    }
  }
  await flush();
}

export function webhookFanOut(options: {
  dataSource: DataSource;
  log: EventLog;
  intervalMs: number;
  maxIntervalMs: number;
  logger: Logger;
  queue: JobQueue;
}): EventConsumer {
  const { queue, ...consumer } = options;
  // Short transactions: from its dueNow() on, the fan-out holds its endpoints' rows until it commits, and workers letting an endpoint go wait for them.
  return new EventConsumer({
    name: 'integrations.webhooks',
    handle: (m, event) => fanOutBatch(m, [event], queue),
    handleBatch: (m, events) => fanOutBatch(m, events, queue),
    batch: 20,
    ...consumer,
  });
}
