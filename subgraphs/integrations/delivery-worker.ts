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
import type { Dispatcher } from 'undici';
import { In, LessThan, LessThanOrEqual, MoreThan, type DataSource, type EntityManager } from 'typeorm';
import type { Config } from '../../lib/config';
import { affectedRows } from '../../lib/database/portable';
import { announceCommit, inTransaction } from '../../lib/database/transactions';
import type { Logger } from '../../lib/logger';
import { webhookDeliveries, webhookDeliveryLag, webhookEndpointsDisabled } from './metrics';
import { publish } from '../../lib/kit/typed-events';
import { WebhookDisabled } from './events';
import { Poller, startPoller } from '../../lib/poller';
import { guardedAgent, isBlockedAddress } from '../../lib/ssrf-guard';
import { WebhookAttempt } from './entities/webhook-attempt';
import { DeliveryState, WebhookDelivery } from './entities/webhook-delivery';
import { Webhook } from './entities/webhook';
import { NO_LEASE, webhookTopic } from './webhook-service';
import { listenAcross, wakesAcrossProcesses, workAdded } from '../../lib/wakeups';
import { signedHeaders } from './webhook-signing';

/** undici's request, loaded on first use (issue 44's idle memory). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const undiciRequest = () => (require('undici') as typeof import('undici')).request;

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

interface RecordOutcome {
  /** Another worker has the endpoint now, or its attempt was recorded some other way: stop serving it. */
  lost: boolean;
  head: WebhookDelivery | null;
}

interface RecordRequest {
  webhook: Webhook;
  delivery: WebhookDelivery;
  result: AttemptResult;
  resolve(outcome: RecordOutcome): void;
  reject(err: unknown): void;
}

/** At most this many attempts per transaction of records. */
const RECORD_BATCH = 100;
/** Endpoints whose next delivery one statement finds (nextWaitingOf()). */
const HEADS_PER_QUERY = 100;

/** A condition of a batch of records did not hold: it is rolled back and each is recorded alone. */
class BatchConflict extends Error {}

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
  /** With wake-ups across processes: set for the earliest retry or lease end known (watchDueTimes()). */
  private dueTimer?: NodeJS.Timeout;
  /** Attempts waiting to be recorded, and whether a transaction of records is running (record()). */
  private readonly toRecord: RecordRequest[] = [];
  private recording = false;

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
    const topic = webhookTopic(this.dataSource);
    // New deliveries are committed in this database: this process's fan-out wakes it at once. With
    // wake-ups across processes (EVENT_LOG_URL), every dueNow() and every retry scheduled in any
    // process tells every worker, and a timer set for the earliest due time known wakes it for a
    // retry or a lease that ends: no poll while idle. Without them, it polls with back-off.
    this.poller = startPoller({
      name: 'webhook delivery',
      intervalMs: this.config.WEBHOOK_POLL_MS,
      maxIntervalMs: this.config.POLL_MAX_IDLE_MS,
      wakeOn: this.dataSource,
      wakeWith: (wake) => listenAcross(topic, wake),
      idlePoll: !wakesAcrossProcesses(),
      work: () => this.claimThenWatch(),
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
    clearTimeout(this.dueTimer);
    await this.poller?.stop();
    await Promise.all(this.serving.values());
  }

  /**
   * claimEndpoints(); then, when the worker does not poll (wake-ups cross processes) and has a free
   * slot, a timer for the earliest time something becomes due that no wake-up announces: an
   * endpoint's next retry (its next_delivery_at ahead) or the end of a lease another worker holds
   * (it may have died). Nothing waiting anywhere: no timer, and no query until the next wake-up.
   */
  private async claimThenWatch(): Promise<boolean> {
    const found = await this.claimEndpoints();
    if (found || this.stopped || !wakesAcrossProcesses()) return found;
    if (this.serving.size >= this.config.WEBHOOK_CONCURRENCY) return found; // a slot that frees wakes it
    const now = new Date();
    const { manager } = this.dataSource;
    const retry = await manager.findOne(Webhook, {
      select: { id: true, nextDeliveryAt: true },
      where: { enabled: true, nextDeliveryAt: MoreThan(now) },
      order: { nextDeliveryAt: 'ASC' },
    });
    const lease = await manager.findOne(Webhook, {
      select: { id: true, leaseUntil: true },
      where: { enabled: true, leaseUntil: MoreThan(now) },
      order: { leaseUntil: 'ASC' },
    });
    const times = [retry?.nextDeliveryAt, lease?.leaseUntil].filter((t): t is Date => !!t).map((t) => t.getTime());
    clearTimeout(this.dueTimer);
    if (times.length) {
      const inMs = Math.max(0, Math.min(...times) - Date.now()) + 50;
      this.dueTimer = setTimeout(() => this.poller?.wake(), Math.min(inMs, 2 ** 31 - 1));
      this.dueTimer.unref();
    }
    return found;
  }

  /**
   * Leases endpoints with a due delivery, up to the free slots; true when it took any. The
   * compare-and-set is one UPDATE over all the candidates and one SELECT of those this worker won
   * (not a round trip per endpoint: the 64th no longer waits for 63 others).
   */
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
    const candidates = due
      .map(({ id }) => id)
      .filter((id) => !this.serving.has(id))
      .slice(0, free);
    if (!candidates.length) return false;
    const leasedAt = Date.now();
    const won = await this.dataSource.manager.update(
      Webhook,
      { id: In(candidates), leaseUntil: LessThan(now) },
      { leaseOwner: this.id, leaseUntil: this.leaseEnd() },
    );
    if (affectedRows(won) === 0) return false; // other workers took them all
    // The rows this worker now holds: what serve() starts from (the others took the rest).
    const webhooks = await this.dataSource.manager.findBy(Webhook, { id: In(candidates), leaseOwner: this.id });
    // And their first deliveries, all at once.
    const heads = webhooks.length
      ? await this.nextWaitingOf(
          webhooks.map((w) => w.id),
          this.dataSource.manager,
        )
      : new Map<string, WebhookDelivery>();
    let took = false;
    for (const webhook of webhooks) {
      const { id } = webhook;
      if (this.serving.has(id)) continue;
      this.renewedAt.set(id, leasedAt);
      took = true;
      const serving = this.serve(id, webhook, heads.get(id) ?? null)
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
  private async serve(webhookId: string, leased: Webhook, first: WebhookDelivery | null): Promise<void> {
    const { manager } = this.dataSource;
    const readWebhook = () => manager.findOneBy(Webhook, { id: webhookId, leaseOwner: this.id });
    let released = false;
    try {
      let webhook: Webhook | null = leased;
      let readAt = Date.now();
      let head = first;
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
      const res = await undiciRequest()(webhook.url, {
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
   * Records an attempt. The attempts that other endpoints finish while a transaction of records
   * is running wait for it and are then recorded together, in one transaction (recordBatch): at
   * hundreds of deliveries a second, one commit per attempt and one pooled connection per slot
   * were what held the deliveries back (issue 44).
   */
  private record(webhook: Webhook, delivery: WebhookDelivery, result: AttemptResult): Promise<RecordOutcome> {
    return new Promise<RecordOutcome>((resolve, reject) => {
      this.toRecord.push({ webhook, delivery, result, resolve, reject });
      if (this.recording) return;
      this.recording = true;
      void this.recordQueued();
    });
  }

  private async recordQueued(): Promise<void> {
    try {
      while (this.toRecord.length) await this.recordBatch(this.toRecord.splice(0, RECORD_BATCH));
    } finally {
      this.recording = false;
    }
  }

  /**
   * Attempts of different endpoints (one each: one attempt in flight per endpoint) in one
   * transaction: the leases due for renewal in one UPDATE, the delivered deliveries in one UPDATE per
   * previous attempt count, each failure's own retry time, the attempts in one INSERT, and each
   * endpoint's next delivery in one SELECT. Every row is changed under the same conditions as
   * recordOne()'s; when one does not hold (a lease lost, a delivery retried by hand meanwhile) or
   * the transaction fails, nothing of the batch is kept and each attempt is recorded on its own, as
   * before. An attempt that gives up (and disables its endpoint) is always recorded on its own.
   */
  private async recordBatch(batch: RecordRequest[]): Promise<void> {
    const plans = batch.map((request) => ({ request, ...this.plan(request.delivery, request.result) }));
    const alone = plans.filter((p) => p.givesUp);
    const together = plans.filter((p) => !p.givesUp);
    if (together.length < 2) alone.push(...together);
    else {
      try {
        const heads = await inTransaction(
          this.dataSource,
          async (m) => {
            const renewing = together.filter((p) => p.renew).map((p) => p.request.webhook.id);
            if (renewing.length) {
              const renewed = await m.update(
                Webhook,
                { id: In(renewing.sort()), leaseOwner: this.id },
                { leaseUntil: this.leaseEnd() },
              );
              if (affectedRows(renewed) !== renewing.length) throw new BatchConflict();
            }
            const delivered = new Map<number, string[]>();
            for (const p of together) {
              const { delivery } = p.request;
              if (p.delivered) {
                delivered.set(delivery.attempts, [...(delivered.get(delivery.attempts) ?? []), delivery.id]);
                continue;
              }
              const changed = await m.update(
                WebhookDelivery,
                { id: delivery.id, state: DeliveryState.PENDING, attempts: delivery.attempts },
                { attempts: p.attempt, nextAttemptAt: p.retryAt },
              );
              if (affectedRows(changed) !== 1) throw new BatchConflict();
            }
            for (const [attempts, ids] of delivered) {
              const changed = await m.update(
                WebhookDelivery,
                { id: In(ids.sort()), state: DeliveryState.PENDING, attempts },
                { state: DeliveryState.DELIVERED, attempts: attempts + 1, nextAttemptAt: null },
              );
              if (affectedRows(changed) !== ids.length) throw new BatchConflict();
            }
            await m.insert(
              WebhookAttempt,
              together.map((p) => this.attemptRow(p.request.webhook, p.request.delivery, p.request.result, p)),
            );
            return this.nextWaitingOf(
              together.map((p) => p.request.webhook.id),
              m,
            );
          },
          { announce: false },
        );
        const renewedAt = Date.now();
        for (const p of together) {
          if (p.renew) this.renewedAt.set(p.request.webhook.id, renewedAt);
          this.recorded(p.request.delivery, p.request.result, p.delivered);
          p.request.resolve({ lost: false, head: heads.get(p.request.webhook.id) ?? null });
        }
      } catch (err) {
        if (!(err instanceof BatchConflict))
          this.logger.warn({ err }, 'recording webhook attempts together failed; recording them one by one');
        alone.push(...together);
      }
    }
    for (const { request } of alone) {
      try {
        request.resolve(await this.recordOne(request.webhook, request.delivery, request.result));
      } catch (err) {
        request.reject(err);
      }
    }
  }

  /** What an attempt's outcome means: its number, its retry time, whether it gives up, whether the lease is renewed. */
  private plan(delivery: WebhookDelivery, result: AttemptResult) {
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
    // The lease is renewed once half of it has passed, not on every attempt: until then no other
    // worker can take the endpoint, and most attempts then leave the endpoint's row alone (no lock
    // shared with the fan-out's dueNow(), one statement fewer). A process that stalled past its
    // lease renews here and finds it lost.
    const renewedAt = this.renewedAt.get(delivery.webhookId) ?? 0;
    const renew = Date.now() - renewedAt >= (this.config.WEBHOOK_LEASE_SECONDS * 1000) / 2;
    return { attempt, now, delivered, retryAt, gone, givesUp, renew };
  }

  /** The attempt's row in the delivery log. */
  private attemptRow(
    webhook: Webhook,
    delivery: WebhookDelivery,
    result: AttemptResult,
    plan: { attempt: number; now: Date; delivered: boolean; givesUp: boolean; retryAt: Date },
  ): Partial<WebhookAttempt> {
    return {
      id: uuidv7(),
      webhookId: webhook.id,
      deliveryId: delivery.id,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      attempt: plan.attempt,
      outcome: result.outcome,
      status: result.status,
      durationMs: result.durationMs,
      error: result.error,
      nextAttemptAt: plan.delivered || plan.givesUp ? null : plan.retryAt,
      createdAt: plan.now,
    };
  }

  /** The metrics of a recorded attempt. */
  private recorded(delivery: WebhookDelivery, result: AttemptResult, delivered: boolean): void {
    webhookDeliveries.inc({ outcome: result.outcome });
    if (delivered) webhookDeliveryLag.observe(Math.max(0, (Date.now() - delivery.occurredAt.getTime()) / 1000));
  }

  /**
   * The attempt in the log, the delivery's new state, and the endpoint's next due time, in one
   * transaction. Past the retry period the delivery is given up and the endpoint disabled.
   */
  private async recordOne(
    webhook: Webhook,
    delivery: WebhookDelivery,
    result: AttemptResult,
  ): Promise<{ lost: boolean; head: WebhookDelivery | null }> {
    const plan = this.plan(delivery, result);
    const { attempt, delivered, retryAt, gone, givesUp, renew } = plan;
    const now = plan.now;
    const reason = gone ? 'gone' : 'failing';
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
        await m.insert(WebhookAttempt, this.attemptRow(webhook, delivery, result, plan));
        if (givesUp) {
          await m.update(Webhook, { id: webhook.id }, { enabled: false, disabledReason: reason, updatedAt: now });
          await publish(m, WebhookDisabled, {
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
    this.recorded(delivery, result, delivered);
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
    // A retry ahead: every worker sets its timer for it (claimThenWatch()).
    if (head?.nextAttemptAt) workAdded(m.connection, webhookTopic(m.connection));
    return head;
  }

  /** The endpoint's oldest waiting delivery (the next to send: order per endpoint). */
  private nextWaiting(webhookId: string, m: EntityManager): Promise<WebhookDelivery | null> {
    return m.findOne(WebhookDelivery, {
      where: { webhookId, state: DeliveryState.PENDING },
      order: { eventSeq: 'ASC', id: 'ASC' },
    });
  }

  /**
   * Each endpoint's oldest waiting delivery, as nextWaiting() finds it, for many endpoints in two
   * statements: the ids (a UNION of one indexed LIMIT 1 per endpoint), then the rows.
   */
  private async nextWaitingOf(webhookIds: string[], m: EntityManager): Promise<Map<string, WebhookDelivery>> {
    const q = (name: string) => m.connection.driver.escape(name);
    const table = m.connection.getMetadata(WebhookDelivery).tablePath;
    const branch = (i: number) =>
      `SELECT ${q('id')} FROM (SELECT ${q('id')} FROM ${q(table)} WHERE ${q('webhook_id')} = ? AND ${q('state')} = ? ` +
      `ORDER BY ${q('event_seq')}, ${q('id')} LIMIT 1) ${q(`h${i}`)}`;
    const rows: { id: string }[] = [];
    // At most HEADS_PER_QUERY endpoints a statement (SQLite allows 500 terms in a compound SELECT).
    for (let i = 0; i < webhookIds.length; i += HEADS_PER_QUERY) {
      const ids = webhookIds.slice(i, i + HEADS_PER_QUERY);
      rows.push(
        ...(await m.query<{ id: string }[]>(
          ids.map((_, k) => branch(k)).join(' UNION ALL '),
          ids.flatMap((id) => [id, DeliveryState.PENDING]),
        )),
      );
    }
    const heads = new Map<string, WebhookDelivery>();
    if (!rows.length) return heads;
    for (const d of await m.findBy(WebhookDelivery, { id: In(rows.map((r) => r.id)) })) heads.set(d.webhookId, d);
    return heads;
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
