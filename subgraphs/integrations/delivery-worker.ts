// Webhook deliveries as leased jobs (as the syntheses are: subgraphs/tts/synthesis-worker.ts).
// The unit of a lease is the endpoint, not the delivery: a worker that wins an endpoint's lease
// (a compare-and-set on `lease_until`) sends its waiting deliveries one at a time, oldest event
// first, so there is one attempt in flight per endpoint and an undelivered event holds the later
// ones. Any process delivers; a process that dies leaves a lease that ends after
// WEBHOOK_LEASE_SECONDS, and another takes the endpoint over (at least once: the attempt it was
// making may be made again, with the same `webhook-id`). A slow endpoint holds only its own slot
// of WEBHOOK_CONCURRENCY: the others go on.
import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { request, type Dispatcher } from 'undici';
import { LessThan, LessThanOrEqual, type DataSource, type EntityManager } from 'typeorm';
import type { Config } from '../../lib/config';
import { affectedRows } from '../../lib/database/portable';
import { announceCommit, inTransaction } from '../../lib/database/transactions';
import type { Logger } from '../../lib/logger';
import { webhookDeliveries, webhookDeliveryLag, webhookEndpointsDisabled } from './metrics';
import { recordEvent } from '../../lib/outbox';
import { Poller, startPoller } from '../../lib/poller';
import { guardedAgent, isBlockedAddress } from '../../lib/ssrf-guard';
import { WebhookAttempt } from './entities/webhook-attempt';
import { DeliveryState, WebhookDelivery } from './entities/webhook-delivery';
import { Webhook } from './entities/webhook';
import { NO_LEASE } from './webhook-service';
import { signedHeaders } from './webhook-signing';

export type DeliveryConfig = Pick<
  Config,
  | 'WEBHOOK_CONCURRENCY'
  | 'WEBHOOK_TIMEOUT_SECONDS'
  | 'WEBHOOK_MAX_RESPONSE_BYTES'
  | 'WEBHOOK_RETRY_SECONDS'
  | 'WEBHOOK_RETRY_BASE_SECONDS'
  | 'WEBHOOK_RETRY_MAX_DELAY_SECONDS'
  | 'WEBHOOK_LEASE_SECONDS'
  | 'WEBHOOK_POLL_MS'
  | 'WEBHOOK_ALLOW_HOSTS'
  | 'WEBHOOK_LOG_RETENTION_SECONDS'
  | 'POLL_MAX_IDLE_MS'
>;

/** How often an endpoint being served is read again (a PATCH, a rotation, a disable take effect within it). */
const WEBHOOK_REREAD_MS = 5000;

interface AttemptResult {
  outcome: 'delivered' | 'failed' | 'timeout' | 'error' | 'blocked_address';
  status: number | null;
  error: string | null;
  durationMs: number;
}

/** Exponential with full jitter over the upper half: seconds, then minutes, then hours. */
export function backoffSeconds(attempt: number, base: number, max: number): number {
  const ceiling = Math.min(max, base * 2 ** Math.min(attempt - 1, 30));
  return ceiling / 2 + (Math.random() * ceiling) / 2;
}

/** Reads at most `max` bytes of the answer, then stops reading (the rest is never taken in). */
async function drainAtMost(body: Dispatcher.ResponseData['body'], max: number): Promise<void> {
  let read = 0;
  for await (const chunk of body) {
    read += (chunk as Buffer).length;
    if (read >= max) {
      body.destroy();
      return;
    }
  }
}

export class WebhookDeliveryWorker {
  readonly id = randomUUID();
  private poller?: Poller;
  private readonly serving = new Map<string, Promise<void>>();
  /** When this worker last took or renewed each endpoint's lease it serves. */
  private readonly renewedAt = new Map<string, number>();
  private readonly agent: Dispatcher;
  private stopped = false;
  private retention?: NodeJS.Timeout;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: DeliveryConfig,
    private readonly logger: Logger,
    agent?: Dispatcher,
  ) {
    this.agent =
      agent ??
      guardedAgent({ allowHosts: config.WEBHOOK_ALLOW_HOSTS, connectTimeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000 });
  }

  start(): void {
    this.poller = startPoller({
      name: 'webhook delivery',
      intervalMs: this.config.WEBHOOK_POLL_MS,
      maxIntervalMs: this.config.POLL_MAX_IDLE_MS,
      // New deliveries are committed in this database: this process's fan-out wakes it at once.
      wakeOn: this.dataSource,
      work: () => this.claimEndpoints(),
      logger: this.logger,
    });
    this.retention = setInterval(() => void this.prune(), 10 * 60_000);
    this.retention.unref();
  }

  wake(): void {
    this.poller?.wake();
  }

  /** Stops taking endpoints and waits for the attempts in flight (each ends within its timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.retention);
    await this.poller?.stop();
    await Promise.all(this.serving.values());
  }

  /** Leases endpoints with a due delivery, up to the free slots; true when it took any. */
  async claimEndpoints(): Promise<boolean> {
    const free = this.config.WEBHOOK_CONCURRENCY - this.serving.size;
    if (free <= 0 || this.stopped) return false;
    const now = new Date();
    const due = await this.dataSource.manager.find(Webhook, {
      select: { id: true },
      where: { enabled: true, nextDeliveryAt: LessThanOrEqual(now), leaseUntil: LessThan(now) },
      order: { nextDeliveryAt: 'ASC' },
      take: free * 2,
    });
    let took = false;
    for (const { id } of due) {
      if (this.serving.size >= this.config.WEBHOOK_CONCURRENCY) break;
      if (this.serving.has(id)) continue;
      const leasedAt = Date.now();
      const won = await this.dataSource.manager.update(
        Webhook,
        { id, leaseUntil: LessThan(now) },
        { leaseOwner: this.id, leaseUntil: this.leaseEnd() },
      );
      if (affectedRows(won) !== 1) continue; // another worker took it
      this.renewedAt.set(id, leasedAt);
      took = true;
      const serving = this.serve(id)
        .catch((err: unknown) => this.logger.warn({ err, webhookId: id }, 'webhook delivery failed; retrying'))
        .finally(() => {
          this.serving.delete(id);
          this.poller?.wake();
        });
      this.serving.set(id, serving);
    }
    return took;
  }

  private leaseEnd(): Date {
    return new Date(Date.now() + this.config.WEBHOOK_LEASE_SECONDS * 1000);
  }

  /** Sends the endpoint's due deliveries in order while its lease is held, then lets it go. */
  private async serve(webhookId: string): Promise<void> {
    const { manager } = this.dataSource;
    const readWebhook = () => manager.findOneBy(Webhook, { id: webhookId, leaseOwner: this.id });
    let released = false;
    try {
      let webhook = await readWebhook();
      let readAt = Date.now();
      let head = await manager.findOne(WebhookDelivery, {
        where: { webhookId, state: DeliveryState.PENDING },
        order: { eventSeq: 'ASC', id: 'ASC' },
      });
      while (!this.stopped) {
        // Its address, secret and switch as changed meanwhile (a PATCH, a rotation): read again now and then.
        if (Date.now() - readAt > WEBHOOK_REREAD_MS) {
          webhook = await readWebhook();
          readAt = Date.now();
        }
        if (!webhook?.enabled) return;
        if (!head || !head.nextAttemptAt || head.nextAttemptAt.getTime() > Date.now()) {
          // Let go: the endpoint's row first, then its next due time from what waits now (see
          // reschedule()), in one transaction; the lease ends with it.
          released = await inTransaction(this.dataSource, async (m) => {
            const mine = await m.update(
              Webhook,
              { id: webhookId, leaseOwner: this.id },
              { leaseOwner: null, leaseUntil: NO_LEASE },
            );
            if (affectedRows(mine) !== 1) return true; // another worker has it: its schedule
            await this.reschedule(webhookId, m);
            return true;
          });
          return;
        }
        const result = await this.attempt(webhook, head);
        const next = await this.record(webhook, head, result);
        if (next.lost) return; // another worker has it now (this process stalled past the lease)
        head = next.head;
      }
    } finally {
      this.renewedAt.delete(webhookId);
      if (!released)
        await manager.update(
          Webhook,
          { id: webhookId, leaseOwner: this.id },
          { leaseOwner: null, leaseUntil: NO_LEASE },
        );
    }
  }

  /** One POST, signed; nothing sent to a blocked address; no redirect followed; at most 64 KiB read. */
  private async attempt(webhook: Webhook, delivery: WebhookDelivery): Promise<AttemptResult> {
    const secrets =
      webhook.previousSecret && webhook.previousSecretUntil && webhook.previousSecretUntil.getTime() > Date.now()
        ? [webhook.secret, webhook.previousSecret]
        : [webhook.secret];
    const timeoutMs = this.config.WEBHOOK_TIMEOUT_SECONDS * 1000;
    const start = Date.now();
    const took = () => Date.now() - start;
    try {
      const res = await request(webhook.url, {
        method: 'POST',
        headers: { ...signedHeaders(secrets, delivery.eventId, delivery.payload), 'user-agent': 'webhooks' },
        body: delivery.payload,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      await drainAtMost(res.body, this.config.WEBHOOK_MAX_RESPONSE_BYTES);
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return {
        outcome: ok ? 'delivered' : 'failed',
        status: res.statusCode,
        error: ok ? null : res.statusCode >= 300 && res.statusCode < 400 ? 'redirects are not followed' : null,
        durationMs: took(),
      };
    } catch (err) {
      if (isBlockedAddress(err))
        return {
          outcome: 'blocked_address',
          status: null,
          // An operator reading the log learns which setting lets an internal receiver through.
          error: `${(err as Error).message.slice(0, 400)}; an internal host is allowed by listing it in WEBHOOK_ALLOW_HOSTS`,
          durationMs: took(),
        };
      const e = err as { name?: string; code?: string; message?: string };
      const timedOut =
        e.name === 'TimeoutError' ||
        e.name === 'AbortError' ||
        e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
        e.code === 'UND_ERR_BODY_TIMEOUT' ||
        e.code === 'UND_ERR_CONNECT_TIMEOUT';
      return {
        outcome: timedOut ? 'timeout' : 'error',
        status: null,
        error: (timedOut
          ? `no answer within ${this.config.WEBHOOK_TIMEOUT_SECONDS} s`
          : (e.code ?? e.message ?? 'error')
        ).slice(0, 500),
        durationMs: took(),
      };
    }
  }

  /**
   * The attempt in the log, the delivery's new state, and the endpoint's next due time, in one
   * transaction. Past the retry period the delivery is given up and the endpoint disabled.
   */
  private async record(
    webhook: Webhook,
    delivery: WebhookDelivery,
    result: AttemptResult,
  ): Promise<{ lost: boolean; head: WebhookDelivery | null }> {
    const attempt = delivery.attempts + 1;
    const now = new Date();
    const delivered = result.outcome === 'delivered';
    const delay = backoffSeconds(
      attempt,
      this.config.WEBHOOK_RETRY_BASE_SECONDS,
      this.config.WEBHOOK_RETRY_MAX_DELAY_SECONDS,
    );
    const retryAt = new Date(now.getTime() + delay * 1000);
    // 410 Gone: the receiver says the endpoint is no more, so it is disabled at once rather than
    // retried (the Standard Webhooks recommendation).
    const gone = result.status === 410;
    const givesUp =
      !delivered &&
      (gone || retryAt.getTime() > delivery.createdAt.getTime() + this.config.WEBHOOK_RETRY_SECONDS * 1000);
    const reason = gone ? 'gone' : 'failing';
    // The lease is renewed once half of it has passed, not on every attempt: until then no other
    // worker can take the endpoint, and most attempts then leave the endpoint's row alone (no lock
    // shared with the fan-out's dueNow(), one statement fewer). A process that stalled past its
    // lease renews here and finds it lost.
    const renewedAt = this.renewedAt.get(webhook.id) ?? 0;
    const renew = Date.now() - renewedAt >= (this.config.WEBHOOK_LEASE_SECONDS * 1000) / 2;
    const next = await inTransaction(
      this.dataSource,
      async (m) => {
        let lost = false;
        if (renew) {
          const renewed = await m.update(
            Webhook,
            { id: webhook.id, leaseOwner: this.id },
            { leaseUntil: this.leaseEnd() },
          );
          lost = affectedRows(renewed) !== 1;
          if (!lost) this.renewedAt.set(webhook.id, Date.now());
        }
        const changed = await m.update(
          WebhookDelivery,
          { id: delivery.id, state: DeliveryState.PENDING, attempts: delivery.attempts },
          delivered
            ? { state: DeliveryState.DELIVERED, attempts: attempt, nextAttemptAt: null }
            : givesUp
              ? { state: DeliveryState.FAILED, attempts: attempt, nextAttemptAt: null }
              : { attempts: attempt, nextAttemptAt: retryAt },
        );
        if (affectedRows(changed) !== 1) return { lost: true, head: null }; // retried by hand or taken over meanwhile: theirs now
        await m.insert(WebhookAttempt, {
          id: uuidv7(),
          webhookId: webhook.id,
          deliveryId: delivery.id,
          eventId: delivery.eventId,
          eventType: delivery.eventType,
          attempt,
          outcome: result.outcome,
          status: result.status,
          durationMs: result.durationMs,
          error: result.error,
          nextAttemptAt: delivered || givesUp ? null : retryAt,
          createdAt: now,
        });
        if (givesUp) {
          await m.update(Webhook, { id: webhook.id }, { enabled: false, disabledReason: reason, updatedAt: now });
          await recordEvent(m, {
            type: 'webhook.disabled',
            userId: webhook.ownerId,
            resourceId: webhook.id,
            data: { webhook_id: webhook.id, url: webhook.url, reason, last_event_id: delivery.eventId },
          });
        }
        // Lost: the worker that has the endpoint now keeps its schedule.
        if (lost) return { lost: true, head: null };
        if (givesUp) {
          await this.reschedule(webhook.id, m);
          return { lost: true, head: null };
        }
        // While leased, next_delivery_at stays as it was when the endpoint was claimed (due: a worker
        // taking over after a crash finds it at once); it is set when the lease is let go (serve()).
        return { lost: false, head: await this.nextWaiting(webhook.id, m) };
        // Not announced: an attempt's record adds nothing for this process's pollers (the delivery
        // poller, the outbox relay) to find, and waking them on each of hundreds a second costs
        // a query each; the disabling's event is announced below.
      },
      { announce: false },
    );
    if (givesUp) announceCommit(this.dataSource);
    webhookDeliveries.inc({ outcome: result.outcome });
    if (delivered) webhookDeliveryLag.observe(Math.max(0, (Date.now() - delivery.occurredAt.getTime()) / 1000));
    if (givesUp) {
      webhookEndpointsDisabled.inc();
      this.logger.warn(
        { webhookId: webhook.id, reason },
        gone
          ? 'webhook disabled: its receiver answered 410 Gone'
          : 'webhook disabled: its deliveries failed for the retry period',
      );
    }
    return next;
  }

  /**
   * The endpoint is due when its oldest waiting delivery is; null when none waits. Run after a
   * write to the endpoint's row in the same transaction: a fan-out adding a delivery meanwhile
   * waits for that row and then sets it due itself.
   */
  private async reschedule(webhookId: string, m: EntityManager): Promise<WebhookDelivery | null> {
    const head = await this.nextWaiting(webhookId, m);
    await m.update(Webhook, { id: webhookId }, { nextDeliveryAt: head?.nextAttemptAt ?? null });
    return head;
  }

  /** The endpoint's oldest waiting delivery (the next to send: order per endpoint). */
  private nextWaiting(webhookId: string, m: EntityManager): Promise<WebhookDelivery | null> {
    return m.findOne(WebhookDelivery, {
      where: { webhookId, state: DeliveryState.PENDING },
      order: { eventSeq: 'ASC', id: 'ASC' },
    });
  }

  /** The delivery log and finished deliveries older than WEBHOOK_LOG_RETENTION_SECONDS go. */
  async prune(): Promise<void> {
    const before = new Date(Date.now() - this.config.WEBHOOK_LOG_RETENTION_SECONDS * 1000);
    try {
      await this.dataSource.manager.delete(WebhookAttempt, { createdAt: LessThan(before) });
      for (const state of [DeliveryState.DELIVERED, DeliveryState.FAILED])
        await this.dataSource.manager.delete(WebhookDelivery, { state, createdAt: LessThan(before) });
    } catch (err) {
      this.logger.warn({ err }, 'pruning the webhook delivery log failed');
    }
  }
}
