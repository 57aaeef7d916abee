// The webhooks' rules: who may create what, the secret (shown once), rotation, the test event,
// the delivery log and manual retry. Every change and its event are written in one transaction
// (the outbox, lib/outbox.ts); updates and deletes name the version they expect.
import { v7 as uuidv7 } from 'uuid';
import type { DataSource, EntityManager } from 'typeorm';
import type { Config } from '../../lib/config';
import { affectedRows } from '../../lib/database/portable';
import { persistedValue } from '../../lib/database/reads';
import { inTransaction } from '../../lib/database/transactions';
import { AppError, validationError } from '../../lib/errors';
import { UserCaps } from '../../lib/kit/user-caps';
import { lostAtVersion } from '../../lib/kit/versioned';
import type { EventLog } from '../../lib/event-log';
import { snakeKeys } from '../../lib/naming';
import { publish } from '../../lib/kit/typed-events';
import { WebhookCreated, WebhookDeleted, type WebhookPayload, WebhookSecretRotated, WebhookUpdated } from './events';
import { Page, pageOf, PageOrder } from '../../lib/paging';
import type { Principal } from '../../lib/tokens';
import { databaseTopic, workAdded } from '../../lib/wakeups';
import { WebhookAttempt } from './entities/webhook-attempt';
import { DeliveryState, WebhookDelivery } from './entities/webhook-delivery';
import { Webhook } from './entities/webhook';
import { EVENT_TYPE_PATTERN, newSecret } from './webhook-signing';
import { webhookUrlProblem } from './webhook-url';

/** Oldest first: ids are UUIDv7, in creation order. */
const ORDER: PageOrder<Webhook> = { keys: [{ property: 'id', kind: 'uuid' }], direction: 'ASC' };
/** The delivery log: newest attempt first. */
const ATTEMPT_ORDER: PageOrder<WebhookAttempt> = { keys: [{ property: 'id', kind: 'uuid' }], direction: 'DESC' };

export const WEBHOOK_TEST = 'webhook.test';
/** Before any lease: a free endpoint's lease_until. */
export const NO_LEASE = new Date(0);

export interface WebhookInput {
  url: string;
  eventTypes: string[];
  description?: string | null;
  allUsers?: boolean;
}

export interface WebhookChangesInput {
  url?: string;
  eventTypes?: string[];
  description?: string | null;
  enabled?: boolean;
}

/** Who may have a webhook take every user's audit events: `admin:integrations` (in the token as issued). */
export const mayAdministerIntegrations = (principal: Principal) => principal.scopes.includes('admin:integrations');

/** What webhook.* events carry: never the secret. */
const eventData = (w: Webhook): WebhookPayload =>
  snakeKeys<unknown>({
    webhookId: w.id,
    url: w.url,
    eventTypes: w.eventTypes,
    enabled: w.enabled,
    allUsers: w.allUsers,
    version: w.version,
  }) as WebhookPayload;

/** The one URL rule for REST and GraphQL (./webhook-url.ts). */
function checkUrl(url: string): void {
  const problem = webhookUrlProblem(url);
  if (problem) throw validationError({ url: [problem] });
}

function checkEventTypes(types: string[]): void {
  if (!types.length || types.length > 50) throw validationError({ eventTypes: ['give 1 to 50 types or patterns'] });
  const bad = types.filter((t) => t.length > 100 || !EVENT_TYPE_PATTERN.test(t));
  if (bad.length)
    throw validationError({
      eventTypes: [`not a type or pattern (a type, or one ending in .* or *): ${bad.slice(0, 3).join(', ')}`],
    });
}

/** The wake-up topic of the delivery workers of one integrations database (lib/wakeups.ts). */
export function webhookTopic(dataSource: DataSource): string {
  return databaseTopic('webhooks', dataSource);
}

/** Endpoints with waiting events are due now unless their head is due earlier (one statement for all). */
export async function dueNow(m: EntityManager, webhookIds: string | string[]): Promise<void> {
  const ids = Array.isArray(webhookIds) ? webhookIds : [webhookIds];
  if (!ids.length) return;
  // Every process's delivery worker is told once this commits (none polls on the stream).
  workAdded(m.connection, webhookTopic(m.connection));
  await m
    .createQueryBuilder()
    .update(Webhook)
    .set({ nextDeliveryAt: new Date() })
    .where('id IN (:...ids) AND (next_delivery_at IS NULL OR next_delivery_at > :now)', {
      ids,
      now: persistedValue(m.connection, Webhook, 'nextDeliveryAt', new Date()),
    })
    .execute();
}

export class WebhookService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly log: EventLog,
    private readonly config: Pick<Config, 'WEBHOOKS_PER_USER' | 'WEBHOOK_SECRET_OVERLAP_SECONDS'>,
  ) {
    this.caps = new UserCaps(dataSource);
  }

  private readonly caps: UserCaps;

  async create(principal: Principal, fields: WebhookInput): Promise<{ webhook: Webhook; secret: string }> {
    checkUrl(fields.url);
    checkEventTypes(fields.eventTypes);
    if (fields.allUsers && !mayAdministerIntegrations(principal))
      throw new AppError('forbidden', "Only admin:integrations may receive every user's events.");
    const ownerId = principal.userId;
    const now = new Date();
    const secret = newSecret();
    const webhook = this.dataSource.manager.create(Webhook, {
      id: uuidv7(),
      ownerId,
      url: fields.url,
      eventTypes: [...new Set(fields.eventTypes)],
      description: fields.description?.trim() || null,
      enabled: true,
      allUsers: fields.allUsers ?? false,
      disabledReason: null,
      version: 1,
      createdAt: now,
      updatedAt: now,
      secret,
      previousSecret: null,
      previousSecretUntil: null,
      nextDeliveryAt: null,
      leaseOwner: null,
      leaseUntil: NO_LEASE,
    });
    const cap = {
      limit: 'WEBHOOKS_PER_USER',
      max: this.config.WEBHOOKS_PER_USER,
      what: `You have the most webhooks one may keep.`,
    };
    await this.caps.prepare(ownerId, [cap.limit]);
    return inTransaction(this.dataSource, async (m) => {
      await this.caps.take(m, ownerId, { cap });
      await m.insert(Webhook, webhook);
      await publish(m, WebhookCreated, {
        userId: ownerId,
        resourceId: webhook.id,
        data: eventData(webhook),
      });
      return { webhook, secret };
    });
  }

  /** Another user's webhook is `not_found`, exactly like an unknown id. */
  async get(ownerId: string, id: string): Promise<Webhook> {
    const item = await this.dataSource.manager.findOneBy(Webhook, { id, ownerId });
    if (!item) throw new AppError('not_found', 'No such webhook.');
    return item;
  }

  list(ownerId: string, limit: number, cursor?: string | null): Promise<Page<Webhook>> {
    const query = this.dataSource.manager
      .createQueryBuilder(Webhook, 'item')
      .where('item.ownerId = :ownerId', { ownerId });
    return pageOf(query, ORDER, limit, cursor);
  }

  /** The statement checks the version (`UPDATE … WHERE id AND owner AND version`): of concurrent updates at one version, one wins. */
  async update(ownerId: string, id: string, version: number, changes: WebhookChangesInput): Promise<Webhook> {
    if (changes.url !== undefined) checkUrl(changes.url);
    if (changes.eventTypes !== undefined) checkEventTypes(changes.eventTypes);
    const set: Partial<Webhook> = { version: version + 1, updatedAt: new Date() };
    if (changes.url !== undefined) set.url = changes.url;
    if (changes.eventTypes !== undefined) set.eventTypes = [...new Set(changes.eventTypes)];
    if (changes.description !== undefined) set.description = changes.description?.trim() || null;
    if (changes.enabled !== undefined) {
      set.enabled = changes.enabled;
      if (changes.enabled) set.disabledReason = null;
    }
    const updated = await inTransaction(this.dataSource, async (m) => {
      const result = await m.update(Webhook, { id, ownerId, version }, set);
      if (affectedRows(result) !== 1) return null;
      // Enabled again: what waited while it was disabled is sent now, in order.
      if (changes.enabled) await dueNow(m, id);
      const item = await m.findOneByOrFail(Webhook, { id, ownerId });
      await publish(m, WebhookUpdated, { userId: ownerId, resourceId: id, data: eventData(item) });
      return item;
    });
    return updated ?? lostAtVersion('webhook', version, () => this.get(ownerId, id));
  }

  /** Like update: of concurrent deletes at the right version exactly one affects the row. Its deliveries and log go with it. */
  async delete(ownerId: string, id: string, version: number): Promise<Webhook> {
    const item = await this.get(ownerId, id);
    const won =
      item.version === version &&
      (await inTransaction(this.dataSource, async (m) => {
        if (affectedRows(await m.delete(Webhook, { id, ownerId, version })) !== 1) return false;
        await this.caps.release(m, ownerId, 'WEBHOOKS_PER_USER');
        await m.delete(WebhookDelivery, { webhookId: id });
        await m.delete(WebhookAttempt, { webhookId: id });
        await publish(m, WebhookDeleted, { userId: ownerId, resourceId: id, data: eventData(item) });
        return true;
      }));
    return won ? item : lostAtVersion('webhook', version, () => this.get(ownerId, id));
  }

  /** A new secret; the old one signs alongside it for WEBHOOK_SECRET_OVERLAP_SECONDS (receivers switch meanwhile). */
  async rotateSecret(ownerId: string, id: string): Promise<{ webhook: Webhook; secret: string }> {
    const secret = newSecret();
    return inTransaction(this.dataSource, async (m) => {
      const item = await m.findOneBy(Webhook, { id, ownerId });
      if (!item) throw new AppError('not_found', 'No such webhook.');
      const result = await m.update(
        Webhook,
        { id, ownerId, version: item.version },
        {
          secret,
          previousSecret: item.secret,
          previousSecretUntil: new Date(Date.now() + this.config.WEBHOOK_SECRET_OVERLAP_SECONDS * 1000),
          version: item.version + 1,
          updatedAt: new Date(),
        },
      );
      if (affectedRows(result) !== 1) throw new AppError('conflict', 'The webhook changed meanwhile; try again.');
      const webhook = { ...item, version: item.version + 1 };
      await publish(m, WebhookSecretRotated, {
        userId: ownerId,
        resourceId: id,
        data: eventData(webhook),
      });
      return { webhook, secret };
    });
  }

  /** Queues a `webhook.test` event for this webhook alone, after whatever waits for it already. */
  async sendTest(ownerId: string, id: string): Promise<WebhookDelivery> {
    const webhook = await this.get(ownerId, id);
    const { lastSeq } = await this.log.position();
    const now = new Date();
    const eventId = uuidv7();
    const delivery = this.dataSource.manager.create(WebhookDelivery, {
      id: uuidv7(),
      webhookId: webhook.id,
      eventId,
      eventType: WEBHOOK_TEST,
      eventSeq: lastSeq,
      payload: JSON.stringify({
        webhook_id: webhook.id,
        type: WEBHOOK_TEST,
        id: webhook.id,
        occurred_at: now.toISOString(),
        event_id: eventId,
        user_id: ownerId,
      }),
      state: DeliveryState.PENDING,
      attempts: 0,
      nextAttemptAt: now,
      occurredAt: now,
      createdAt: now,
    });
    await inTransaction(this.dataSource, async (m) => {
      await m.insert(WebhookDelivery, delivery);
      await dueNow(m, webhook.id);
    });
    return delivery;
  }

  /** The delivery log of one webhook, newest attempt first. */
  async attempts(
    ownerId: string,
    webhookId: string,
    limit: number,
    cursor?: string | null,
  ): Promise<Page<WebhookAttempt>> {
    await this.get(ownerId, webhookId);
    const query = this.dataSource.manager
      .createQueryBuilder(WebhookAttempt, 'a')
      .where('a.webhookId = :webhookId', { webhookId });
    return pageOf(query, ATTEMPT_ORDER, limit, cursor);
  }

  /**
   * Sends a delivery again (delivered or given up or waiting): at once, with the same
   * `webhook-id`, and a new retry period. An endpoint disabled stays disabled (enable it first).
   */
  async retry(ownerId: string, deliveryId: string): Promise<WebhookDelivery> {
    return inTransaction(this.dataSource, async (m) => {
      const delivery = await m.findOneBy(WebhookDelivery, { id: deliveryId });
      const webhook = delivery && (await m.findOneBy(Webhook, { id: delivery.webhookId, ownerId }));
      if (!delivery || !webhook) throw new AppError('not_found', 'No such delivery.');
      const now = new Date();
      await m.update(
        WebhookDelivery,
        { id: deliveryId },
        { state: DeliveryState.PENDING, nextAttemptAt: now, createdAt: now },
      );
      await dueNow(m, webhook.id);
      return { ...delivery, state: DeliveryState.PENDING, nextAttemptAt: now, createdAt: now };
    });
  }
}
