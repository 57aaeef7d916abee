// Where the event log's events are kept: one interface, two implementations (CONTRACT.md,
// "Beyond one machine"). EVENT_LOG_URL unset: the `events` database's table (TableBackend);
// `nats://host:port[,host:port…]`: a NATS JetStream stream (JetStreamBackend). Both hand out
// positions in append order with no gap a reader could skip past (the table's `seq`, the
// stream's sequence), so readers, SSE ids and resumes work alike on either. The shared suite
// test/events/event-log-backends.test.ts runs against both.
import crypto from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { In, MoreThan } from 'typeorm';
import { inTransaction, onCommit } from './database/transactions';
import type { Logger } from './logger';
import type { EventColumns } from './outbox';
import { LoggedEvent, EventSequence } from './event-log-entities';
import { rowReader } from './database/reads';
// Types only: the packages are loaded (import()) when EVENT_LOG_URL is set.
import type { ConsumerMessages, JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { ConnectionOptions, NatsConnection, Subscription } from '@nats-io/nats-core';

/** What an event is appended with: the columns every outbox row has. */
export type AppendedEvent = Pick<EventColumns, 'eventId' | 'type' | 'userId' | 'resourceId' | 'payload' | 'occurredAt'>;

export interface ReadFilter {
  userId?: string;
  types?: readonly string[];
}

export interface LogPosition {
  /** The newest position handed out. */
  lastSeq: number;
  /** Positions up to here are no longer kept: a resume from before it is refused (resync_required). */
  prunedThrough: number;
}

/** A reader with a durable position of its own in the log (JetStream: a durable consumer). */
export interface DurableReaderOptions {
  /** Unique per purpose, e.g. `tts.user-deleted`. */
  name: string;
  types?: readonly string[];
  /** Where a reader that the log does not know yet starts: after this position. */
  startAfter: () => Promise<number>;
  /**
   * Called with each event of its types in log order, one at a time; resolves once the reader's
   * own write is committed. The log then forgets it for this reader (JetStream: the ack); a crash
   * before that hands the event again, so `handle` must skip what it has done (positions).
   */
  handle: (event: LoggedEvent) => Promise<void>;
  logger?: Logger;
}

export interface DurableReader {
  stop(): Promise<void>;
}

export interface EventLogBackend {
  readonly kind: 'table' | 'jetstream';
  /**
   * Whether onAppend hears appends made by OTHER processes too (NATS messages). When false it
   * hears this process's commits only, and readers keep polling for other processes' appends.
   */
  readonly wakesAcrossProcesses: boolean;
  /** Appends the events not in the log yet (an event offered twice is kept once); how many were new. */
  append(source: string, events: AppendedEvent[]): Promise<number>;
  /** Events after `after`, oldest first, at most `limit`. */
  read(after: number, limit: number, filter?: ReadFilter): Promise<LoggedEvent[]>;
  position(): Promise<LogPosition>;
  /** Forgets events older than `before` (JetStream: the stream's max age does it; nothing here). */
  prune(before: Date): Promise<number>;
  /** `listener` runs after events were appended (see wakesAcrossProcesses). */
  onAppend(listener: () => void): () => void;
  /** The position before the first event appended at or after `time` (where a reader of recent events starts). */
  positionBefore?(time: Date): Promise<number>;
  /** Whether the backend answers within `timeoutMs` (readiness; the table's database is pinged by the log). */
  ping(timeoutMs: number): Promise<boolean>;
  /** JetStream only: readers whose positions the log keeps (durable consumers). */
  durableReader?(options: DurableReaderOptions): Promise<DurableReader>;
  close(): Promise<void>;
}

/** The `events` table of the `events` database: appends serialised by the sequence row's lock. */
export class TableBackend implements EventLogBackend {
  readonly kind = 'table' as const;
  readonly wakesAcrossProcesses = false;
  private readonly readSequence: (id: number) => Promise<EventSequence | null>;

  constructor(readonly dataSource: DataSource) {
    this.readSequence = rowReader(dataSource, EventSequence);
  }

  /**
   * The sequence row is locked by the UPDATE for the whole transaction, so appends are
   * serialised and numbers become visible in order.
   */
  async append(source: string, events: AppendedEvent[]): Promise<number> {
    if (!events.length) return 0;
    return inTransaction(this.dataSource, async (m: EntityManager) => {
      await m.query('UPDATE event_sequence SET last_seq = last_seq WHERE id = 1'); // takes the lock first
      const known = new Set(
        (
          await m.find(LoggedEvent, { select: { eventId: true }, where: { eventId: In(events.map((e) => e.eventId)) } })
        ).map((e) => e.eventId),
      );
      const fresh = events.filter((e) => !known.has(e.eventId));
      if (!fresh.length) return 0;
      const { lastSeq } = await m.findOneByOrFail(EventSequence, { id: 1 });
      await m.insert(
        LoggedEvent,
        fresh.map((e, i) => ({
          seq: lastSeq + 1 + i,
          eventId: e.eventId,
          type: e.type,
          userId: e.userId,
          resourceId: e.resourceId,
          payload: e.payload,
          occurredAt: e.occurredAt,
          source,
        })),
      );
      await m.update(EventSequence, { id: 1 }, { lastSeq: lastSeq + fresh.length });
      return fresh.length;
    });
  }

  read(after: number, limit: number, filter: ReadFilter = {}): Promise<LoggedEvent[]> {
    return this.dataSource.manager.find(LoggedEvent, {
      where: {
        seq: MoreThan(after),
        ...(filter.userId !== undefined ? { userId: filter.userId } : {}),
        ...(filter.types ? { type: In([...filter.types]) } : {}),
      },
      order: { seq: 'ASC' },
      take: limit,
    });
  }

  /** Asked by every poll of every stream and consumer: a fixed query (rowReader), not a TypeORM find. */
  async position(): Promise<LogPosition> {
    const row = await this.readSequence(1);
    if (!row) throw new Error('The event log has no sequence row: its migrations did not run.');
    return { lastSeq: row.lastSeq, prunedThrough: row.prunedThrough };
  }

  prune(before: Date): Promise<number> {
    return inTransaction(this.dataSource, async (m) => {
      const newest = await m
        .createQueryBuilder(LoggedEvent, 'e')
        .select('MAX(e.seq)', 'seq')
        .where('e.occurredAt < :before', { before })
        .getRawOne<{ seq: string | number | null }>();
      const through = Number(newest?.seq ?? 0);
      if (!through) return 0;
      const result = await m
        .createQueryBuilder()
        .delete()
        .from(LoggedEvent)
        .where('seq <= :through', { through })
        .execute();
      await m.query('UPDATE event_sequence SET pruned_through = ? WHERE id = 1 AND pruned_through < ?', [
        through,
        through,
      ]);
      return result.affected ?? 0;
    });
  }

  onAppend(listener: () => void): () => void {
    return onCommit(this.dataSource, listener);
  }

  ping(): Promise<boolean> {
    return Promise.resolve(true); // the `events` database: pinged by the log itself
  }

  async close(): Promise<void> {
    // The data source belongs to the EventLog, which closes it.
  }
}

// ---------------------------------------------------------------------------------------------
// JetStream

/** The `servers` of a `nats://host:port[,host:port…]` URL. */
export function natsServers(url: string): string[] {
  const rest = url.replace(/^nats:\/\//i, '');
  const hosts = rest.split('/')[0];
  return hosts
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
}

/** A subject token for a user id: as it is when it is a safe token, else a hash of it. */
export function userToken(userId: string): string {
  if (!userId) return '_';
  if (/^[A-Za-z0-9_-]{1,64}$/.test(userId)) return userId;
  return `h${crypto.createHash('sha256').update(userId).digest('hex').slice(0, 32)}`;
}

/** A subject's tokens for a type (`note.created` → `note.created`); anything odd is replaced. */
export function typeTokens(type: string): string {
  return type
    .split('.')
    .map((t) => t.replace(/[^A-Za-z0-9_-]/g, '_') || '_')
    .join('.');
}

interface WireEvent {
  eventId: string;
  type: string;
  userId: string;
  resourceId: string;
  payload: string;
  occurredAt: string;
  source: string;
}

function fromWire(seq: number, data: Uint8Array): LoggedEvent {
  const w = JSON.parse(Buffer.from(data).toString('utf8')) as WireEvent;
  return Object.assign(new LoggedEvent(), {
    seq,
    eventId: w.eventId,
    type: w.type,
    userId: w.userId,
    resourceId: w.resourceId,
    payload: w.payload,
    occurredAt: new Date(w.occurredAt),
    source: w.source,
  });
}

export interface JetStreamSettings {
  url: string;
  /** The stream's name; its subjects are `<stream>.<user>.<type…>`. */
  stream: string;
  retentionSeconds: number;
  dedupWindowSeconds: number;
  replicas: number;
  logger?: Logger;
}

/**
 * The log as a JetStream stream. Subjects are `<stream>.<user token>.<type tokens>`, so a user's
 * events and a type's events are each one subject filter. Appends publish with `Nats-Msg-Id` =
 * the event id: a relay that publishes again (it crashed before deleting its outbox rows) is
 * dropped by the stream's deduplication window. Every publish also reaches plain subscribers
 * of the subjects: that is the wake-up of readers in every process.
 */
export class JetStreamBackend implements EventLogBackend {
  readonly kind = 'jetstream' as const;
  readonly wakesAcrossProcesses = true;
  private readonly subject: string;
  private readonly listeners = new Set<() => void>();
  private wakeSub?: Subscription;
  private readonly readers = new Set<DurableReader>();

  private constructor(
    readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    readonly settings: JetStreamSettings,
  ) {
    this.subject = settings.stream;
  }

  static async connect(settings: JetStreamSettings): Promise<JetStreamBackend> {
    const { jetstream, jetstreamManager } = await import('@nats-io/jetstream');
    const connect = (await import('@nats-io/transport-node')).connect as (
      options: ConnectionOptions,
    ) => Promise<NatsConnection>;
    const nc = await connect({
      servers: natsServers(settings.url),
      name: 'event-log',
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
    });
    const jsm = await jetstreamManager(nc);
    const backend = new JetStreamBackend(nc, jetstream(nc), jsm, settings);
    await backend.ensureStream();
    return backend;
  }

  /** Creates the stream when it is missing; an existing one is left as its operator set it. */
  private async ensureStream(): Promise<void> {
    const { RetentionPolicy, StorageType, DiscardPolicy } = await import('@nats-io/jetstream');
    try {
      await this.jsm.streams.info(this.settings.stream);
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      await this.jsm.streams.add({
        name: this.settings.stream,
        subjects: [`${this.subject}.>`],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        discard: DiscardPolicy.Old,
        max_age: this.settings.retentionSeconds * 1e9,
        duplicate_window: this.settings.dedupWindowSeconds * 1e9,
        num_replicas: this.settings.replicas,
        allow_direct: true,
      });
    } catch (err) {
      // Made meanwhile by another process.
      await this.jsm.streams.info(this.settings.stream).catch(() => {
        throw err;
      });
    }
  }

  subjectOf(userId: string, type: string): string {
    return `${this.subject}.${userToken(userId)}.${typeTokens(type)}`;
  }

  async append(source: string, events: AppendedEvent[]): Promise<number> {
    let fresh = 0;
    // One at a time, in outbox order: the stream's order is the outbox's.
    for (const e of events) {
      const wire: WireEvent = {
        eventId: e.eventId,
        type: e.type,
        userId: e.userId,
        resourceId: e.resourceId,
        payload: e.payload,
        occurredAt: e.occurredAt.toISOString(),
        source,
      };
      const ack = await this.js.publish(this.subjectOf(e.userId, e.type), JSON.stringify(wire), {
        msgID: e.eventId,
      });
      if (!ack.duplicate) fresh++;
    }
    return fresh;
  }

  /**
   * Direct gets (the stream allows them) of the next message at or after a position on a subject:
   * the server filters by user and type, so a read costs one request per event it returns (plus
   * one per type asked for), and nothing is created on the server for it.
   */
  async read(after: number, limit: number, filter: ReadFilter = {}): Promise<LoggedEvent[]> {
    const { lastSeq } = await this.position();
    const user = filter.userId !== undefined ? userToken(filter.userId) : '*';
    const subjects = filter.types
      ? [...new Set(filter.types)].map((t) => `${this.subject}.${user}.${typeTokens(t)}`)
      : [filter.userId !== undefined ? `${this.subject}.${user}.>` : `${this.subject}.>`];
    const wanted = (e: LoggedEvent) =>
      (!filter.types || filter.types.includes(e.type)) && (filter.userId === undefined || e.userId === filter.userId);
    // One cursor per subject, merged by position.
    const cursors = subjects.map((subject) => ({
      subject,
      next: after + 1,
      head: undefined as LoggedEvent | null | undefined,
    }));
    const out: LoggedEvent[] = [];
    while (out.length < limit) {
      for (const c of cursors) {
        if (c.head !== undefined) continue;
        if (c.next > lastSeq) {
          c.head = null;
          continue;
        }
        const m = await this.jsm.direct.getMessage(this.settings.stream, { seq: c.next, next_by_subj: c.subject });
        c.head = m && m.seq <= lastSeq ? fromWire(m.seq, m.data) : null;
        if (c.head) c.next = c.head.seq + 1;
      }
      let first: (typeof cursors)[number] | undefined;
      for (const c of cursors) if (c.head && (!first || c.head.seq < first.head!.seq)) first = c;
      if (!first) break;
      const event = first.head!;
      first.head = undefined;
      if (wanted(event)) out.push(event); // a hashed user token's collision, or a type's odd characters
    }
    return out;
  }

  /** The position before the first event stored at or after `time` (a binary search by direct gets). */
  async positionBefore(time: Date): Promise<number> {
    const info = await this.jsm.streams.info(this.settings.stream);
    let lo = info.state.first_seq;
    let hi = info.state.last_seq;
    if (!hi || lo > hi) return hi;
    const at = async (seq: number) => {
      const m = await this.jsm.direct.getMessage(this.settings.stream, { seq, next_by_subj: `${this.subject}.>` });
      return m ? { seq: m.seq, time: new Date(m.time).getTime() } : null;
    };
    // The first stored at or after `time` lies in [lo, hi + 1].
    hi += 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const m = await at(mid);
      if (!m || m.time >= time.getTime()) hi = mid;
      else lo = m.seq + 1;
    }
    return lo - 1;
  }

  async position(): Promise<LogPosition> {
    const info = await this.jsm.streams.info(this.settings.stream);
    const state = info.state as { first_seq: number; last_seq: number };
    return { lastSeq: state.last_seq, prunedThrough: Math.max(0, state.first_seq - 1) };
  }

  /** The stream answers (its info) within `timeoutMs`. */
  async ping(timeoutMs: number): Promise<boolean> {
    if (this.nc.isClosed()) return false;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.jsm.streams.info(this.settings.stream).then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
      ]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  prune(): Promise<number> {
    return Promise.resolve(0); // the stream's max_age (EVENT_RETENTION_SECONDS) drops old events
  }

  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    if (!this.wakeSub) {
      this.wakeSub = this.nc.subscribe(`${this.subject}.>`, {
        callback: () => {
          for (const l of this.listeners) l();
        },
      });
    }
    return () => this.listeners.delete(listener);
  }

  /**
   * A durable consumer per reader: its position is the stream's sequence, kept by the server.
   * One event in flight at a time (max_ack_pending 1), so that events are handled in log order
   * even when several processes share the consumer; each is acknowledged after `handle` has
   * committed. Events of other types are acknowledged without a call.
   */
  async durableReader(options: DurableReaderOptions): Promise<DurableReader> {
    const { AckPolicy, DeliverPolicy } = await import('@nats-io/jetstream');
    const durable = consumerName(options.name);
    const stream = this.settings.stream;
    const types = options.types ? new Set(options.types) : undefined;
    try {
      await this.jsm.consumers.info(stream, durable);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const after = await options.startAfter();
      try {
        await this.jsm.consumers.add(stream, {
          durable_name: durable,
          ack_policy: AckPolicy.Explicit,
          max_ack_pending: 1,
          ack_wait: 30e9,
          filter_subject:
            types && types.size === 1 ? `${this.subject}.*.${typeTokens([...types][0])}` : `${this.subject}.>`,
          ...(after > 0
            ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: after + 1 }
            : { deliver_policy: DeliverPolicy.All }),
        });
      } catch (addErr) {
        await this.jsm.consumers.info(stream, durable).catch(() => {
          throw addErr;
        });
      }
    }
    const consumer = await this.js.consumers.get(stream, durable);
    let stopped = false;
    let messages: ConsumerMessages | undefined;
    const loop = (async () => {
      while (!stopped) {
        try {
          messages = await consumer.consume({ max_messages: 16 });
          for await (const m of messages) {
            if (stopped) break;
            const event = fromWire(m.seq, m.data);
            if (!types || types.has(event.type)) {
              try {
                await options.handle(event);
              } catch (err) {
                options.logger?.warn({ err, consumer: options.name, seq: m.seq }, 'event handler failed; retrying');
                m.nak(1000);
                continue;
              }
            }
            await m.ackAck().catch(() => m.ack());
          }
        } catch (err) {
          if (stopped) break;
          options.logger?.warn({ err, consumer: options.name }, 'event consumer interrupted; resuming');
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    })();
    const reader: DurableReader = {
      stop: async () => {
        stopped = true;
        this.readers.delete(reader);
        messages?.stop();
        await loop;
      },
    };
    this.readers.add(reader);
    return reader;
  }

  /**
   * Copies a table log into this stream once, keeping the events' ids and positions (the stream's
   * sequence = the table's `seq`), so that consumer positions and SSE ids carry over: an empty
   * stream is first moved to start where the table's kept events start; each event is published
   * with its id as Nats-Msg-Id and checked to land at its position. Run again, it copies only what the stream lacks. A stream that already
   * holds other events (relays ran on it first) is refused: positions could not carry over.
   */
  async copyFrom(
    table: EventLogBackend,
    progress?: (copied: number) => void,
  ): Promise<{ copied: number; skipped: number; from: number; through: number }> {
    const { lastSeq: tableLast, prunedThrough } = await table.position();
    const info = await this.jsm.streams.info(this.settings.stream);
    let streamLast = info.state.last_seq;
    if (info.state.messages === 0 && streamLast < prunedThrough) {
      await this.jsm.streams.purge(this.settings.stream, { seq: prunedThrough + 1 });
      streamLast = prunedThrough;
    }
    if (streamLast < prunedThrough)
      throw new Error(
        `The stream ${this.settings.stream} ends at ${streamLast}, before the table's first kept event (${prunedThrough + 1}): it holds other events; copy into a new stream (EVENT_LOG_STREAM).`,
      );
    const from = streamLast;
    let copied = 0;
    let skipped = 0;
    let after = streamLast;
    for (;;) {
      const batch = await table.read(after, 500);
      if (!batch.length) break;
      for (const e of batch) {
        const wire: WireEvent = {
          eventId: e.eventId,
          type: e.type,
          userId: e.userId,
          resourceId: e.resourceId,
          payload: e.payload,
          occurredAt: e.occurredAt.toISOString(),
          source: e.source,
        };
        const ack = await this.js.publish(this.subjectOf(e.userId, e.type), JSON.stringify(wire), {
          msgID: e.eventId,
        });
        if (ack.duplicate) skipped++;
        else if (ack.seq !== e.seq)
          throw new Error(
            `Event ${e.eventId} landed at position ${ack.seq} instead of ${e.seq}: something else publishes to the stream; stop the relays and copy into a new stream.`,
          );
        else copied++;
        after = e.seq;
      }
      progress?.(copied);
    }
    return { copied, skipped, from, through: Math.max(after, tableLast) };
  }

  /** Publishes a wake-up (new jobs…) to every process that listens for `topic`. */
  notify(topic: string): void {
    if (!this.nc.isClosed()) this.nc.publish(`${this.subject}-wake.${topic}`);
  }

  /** Runs `listener` on every wake-up of `topic` published by any process. */
  listen(topic: string, listener: () => void): () => void {
    const sub = this.nc.subscribe(`${this.subject}-wake.${topic}`, { callback: () => listener() });
    return () => sub.unsubscribe();
  }

  async close(): Promise<void> {
    for (const r of [...this.readers]) await r.stop();
    this.wakeSub?.unsubscribe();
    if (!this.nc.isClosed()) await this.nc.drain().catch(() => this.nc.close());
  }
}

/** A durable consumer's name from a reader's (`tts.user-deleted` → `tts_user-deleted`). */
export function consumerName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

function isNotFound(err: unknown): boolean {
  const e = err as { code?: unknown; api_error?: { code?: number }; message?: string };
  return e?.api_error?.code === 404 || e?.code === 404 || e?.code === '404' || /not found/i.test(e?.message ?? '');
}
