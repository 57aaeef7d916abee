// The event log: one ordered table of every subgraph's events, in a database of its own
// (`events`). Subgraphs never write here directly: each writes its outbox in the same
// transaction as its change (lib/outbox.ts), and a relay in the subgraph's process moves the
// outbox rows here. Streams read the log by sequence number.
import {
  Column,
  DataSource,
  Entity,
  In,
  MigrationInterface,
  PrimaryColumn,
  QueryRunner,
  Table,
  TableIndex,
} from 'typeorm';
import type { Config } from './config';
import { openDatabase } from './database/open';
import { pingDatabase } from './database/ping';
import { columns, isUniqueViolation } from './database/portable';
import { CreateIdempotencyKeys1764000000000, IdempotencyRecord } from './idempotency';
import { anyRow } from './database/reads';
import type { Logger } from './logger';
import { eventRelayLag } from './metrics';
import { EventLogBackend, JetStreamBackend, LogPosition, TableBackend } from './event-backends';
import { EventSequence, LoggedEvent } from './event-log-entities';
import { clearWakeTransport, setWakeTransport } from './wakeups';
import { eventTableColumns, OutboxEvent } from './outbox';

export { EventSequence, LoggedEvent };
import { Poller, startPoller } from './poller';
import { freshShared } from './fresh-reads';
import { CLOCK_SKEW_MS, SESSION_REVOKED, SessionRevocations, USER_ENDED, USER_SCOPES_CHANGED } from './revocations';

export const EVENTS_DATABASE = 'events';

/**
 * Stream tickets already used: a ticket opens one stream, on whichever instance it is shown.
 * Kept until the ticket would have expired anyway.
 */
@Entity('spent_stream_tickets')
export class SpentStreamTicket {
  @PrimaryColumn({ name: 'ticket_id', type: 'varchar', length: 36 })
  ticketId!: string;

  @Column({ name: 'expires_at', type: 'datetime' })
  expiresAt!: Date;
}

export class CreateSpentStreamTickets1736000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'spent_stream_tickets',
        columns: [c.uuid('ticket_id', { isPrimary: true }), c.timestamp('expires_at')],
        indices: [{ columnNames: ['expires_at'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('spent_stream_tickets');
  }
}

/** Events of one type by position: what the revocation set reads (lib/revocations.ts). */
export class IndexEventTypes1737000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createIndex(
      'events',
      new TableIndex({ name: 'IDX_events_type_seq', columnNames: ['type', 'seq'] }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('events', 'IDX_events_type_seq');
  }
}

export class CreateEventLog1734000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    const bigint = (name: string, extra = {}) => ({ name, type: 'bigint', ...extra });
    await queryRunner.createTable(
      new Table({
        name: 'events',
        columns: [bigint('seq', { isPrimary: true }), ...eventTableColumns(queryRunner), c.string('source', 64)],
        indices: [
          { columnNames: ['user_id', 'seq'] },
          { columnNames: ['resource_id'] },
          { columnNames: ['occurred_at'] },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'event_sequence',
        columns: [c.int('id', { isPrimary: true }), bigint('last_seq'), bigint('pruned_through')],
      }),
    );
    await queryRunner.query('INSERT INTO event_sequence (id, last_seq, pruned_through) VALUES (1, 0, 0)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('event_sequence');
    await queryRunner.dropTable('events');
  }
}

/** The event log's database: opened by every process that relays or streams, migrated under the same lock. */
export const eventLogSpec = {
  name: EVENTS_DATABASE,
  entities: [LoggedEvent, EventSequence, SpentStreamTicket, IdempotencyRecord],
  migrations: [
    CreateEventLog1734000000000,
    CreateSpentStreamTickets1736000000000,
    IndexEventTypes1737000000000,
    CreateIdempotencyKeys1764000000000,
  ],
};

export class EventLog {
  private readonly revocations: SessionRevocations;

  private constructor(
    readonly dataSource: DataSource,
    /** Where the events are kept: the `events` table, or a JetStream stream (EVENT_LOG_URL). */
    readonly backend: EventLogBackend,
    config: Pick<Config, 'EVENT_POLL_MS' | 'ACCESS_TOKEN_TTL_SECONDS' | 'STREAM_TICKET_TTL_SECONDS'>,
  ) {
    // A revocation matters while a token of its session may still be valid (lib/revocations.ts).
    const keepMs = Math.max(config.ACCESS_TOKEN_TTL_SECONDS, config.STREAM_TICKET_TTL_SECONDS) * 1000 + CLOCK_SKEW_MS;
    this.revocations = new SessionRevocations(backend, { maxAgeMs: config.EVENT_POLL_MS, keepMs });
  }

  /**
   * The `events` database (stream tickets, idempotency records, and the table log) and the log's
   * backend: the table unless EVENT_LOG_URL names NATS servers.
   */
  static async open(config: Config, logger?: Logger): Promise<EventLog> {
    const dataSource = await openDatabase(config, eventLogSpec, logger);
    try {
      const backend = config.EVENT_LOG_URL
        ? await JetStreamBackend.connect({
            url: config.EVENT_LOG_URL,
            stream: config.EVENT_LOG_STREAM,
            retentionSeconds: config.EVENT_RETENTION_SECONDS,
            dedupWindowSeconds: config.EVENT_LOG_DEDUP_WINDOW_SECONDS,
            replicas: config.EVENT_LOG_REPLICAS,
            logger,
          })
        : new TableBackend(dataSource);
      if (backend instanceof JetStreamBackend) setWakeTransport(backend);
      return new EventLog(dataSource, backend, config);
    } catch (err) {
      await dataSource.destroy();
      throw err;
    }
  }

  /**
   * Appends events that are not in the log yet (at-least-once relays may offer one twice).
   */
  async append(source: string, events: OutboxEvent[]): Promise<number> {
    if (!events.length) return 0;
    const appended = await this.backend.append(source, events);
    // In the log now (appended here or before): this process refuses those sessions at once.
    this.revocations.appended(events.filter((e) => e.type === SESSION_REVOKED).map((e) => e.resourceId));
    this.revocations.appendedScopeChanges(
      events
        .filter((e) => e.type === USER_SCOPES_CHANGED)
        .map((e) => ({
          userId: e.resourceId,
          scopes: (JSON.parse(e.payload) as { scopes?: string[] }).scopes ?? [],
          changedAt: e.occurredAt,
        })),
    );
    this.revocations.appendedUserEnds(
      events.filter((e) => USER_ENDED.includes(e.type)).map((e) => ({ userId: e.resourceId, at: e.occurredAt })),
    );
    return appended;
  }

  /** Events after `seq`, oldest first; only `userId`'s when given. */
  read(after: number, limit: number, userId?: string): Promise<LoggedEvent[]> {
    return this.backend.read(after, limit, userId !== undefined ? { userId } : {});
  }

  /** `listener` runs after events were appended: in this process, or in any with EVENT_LOG_URL. */
  onAppend(listener: () => void): () => void {
    return this.backend.onAppend(listener);
  }

  /**
   * Whether a session was revoked: how processes that cannot read the auth database refuse the
   * tokens of a revoked session. Kept at least as long as an access token lives (config). Every
   * request to a subgraph other than auth asks this: answered from a set read from the log at
   * most EVENT_POLL_MS ago (lib/revocations.ts), not by a query each.
   */
  sessionRevoked(sessionId: string): Promise<boolean> {
    return this.revocations.isRevoked(sessionId);
  }

  /**
   * The caller's scopes: the token's (`own`, as issued) unless the log holds a newer change for
   * the user (`user.scopes_changed`), read with the revocations. Throws when the log cannot be
   * read (the caller answers service_unavailable: fail closed).
   */
  scopesOf(userId: string, issuedAt: number, own: ReadonlySet<string>): Promise<ReadonlySet<string>> {
    return this.revocations.scopesOf(userId, issuedAt, own);
  }

  /** When the user's newest scope change this process knows of happened (ms; read with scopesOf). */
  knownScopeChangeAt(userId: string): number | undefined {
    return this.revocations.knownScopeChangeAt(userId);
  }

  /**
   * Whether a token exchanged for an API key is overtaken (the key revoked, its owner disabled,
   * deleted or given other scopes since it was issued), read with the revocations
   * (lib/revocations.ts): how the edge's key cache drops it (lib/api-keys.ts).
   */
  keyTokenOvertaken(userId: string, keyId: string, issuedAt: number): Promise<boolean> {
    return this.revocations.keyTokenOvertaken(userId, keyId, issuedAt);
  }

  /** How many revocations this process holds in memory. */
  get revocationsHeld(): number {
    return this.revocations.size;
  }

  /** Marks a stream ticket used; false when it already was (by this or any other instance). */
  async spendTicket(ticketId: string, expiresAt: Date): Promise<boolean> {
    try {
      await this.dataSource.manager.insert(SpentStreamTicket, { ticketId, expiresAt });
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  }

  /**
   * The newest position, and up to where old events are no longer kept. Read once for the
   * process's streams and consumers that ask at the same moment (a commit wakes them all), never
   * from before the call (lib/fresh-reads.ts).
   */
  readonly position: () => Promise<LogPosition> = freshShared(() => this.backend.position());

  /** Recent answers of typesBetween, by range: events up to a position read are committed and never change. */
  private readonly typesByRange = new Map<string, Promise<Set<string>>>();

  /**
   * The types of the table log's events after `after` up to `end` (a position read): every consumer
   * of a process woken by one commit asks for the same range, and one read answers them all.
   */
  typesBetween(after: number, end: number): Promise<Set<string>> {
    const key = `${after} ${end}`;
    let types = this.typesByRange.get(key);
    if (!types) {
      types = this.dataSource.manager
        .createQueryBuilder(LoggedEvent, 'e')
        .select('DISTINCT e.type', 'type')
        .where('e.seq > :after AND e.seq <= :end', { after, end })
        .getRawMany<{ type: string }>()
        .then((rows) => new Set(rows.map((r) => r.type)));
      // A failed read is not kept; of the rest, the last few ranges.
      types.catch(() => this.typesByRange.delete(key));
      this.typesByRange.set(key, types);
      if (this.typesByRange.size > 16) this.typesByRange.delete(this.typesByRange.keys().next().value!);
    }
    return types;
  }

  /** Deletes events older than `before`; remembers how far, so that a resume from there can be refused. */
  prune(before: Date): Promise<number> {
    return this.backend.prune(before);
  }

  /** Forgets used stream tickets that have expired (they are refused by their expiry now). */
  async pruneSpentTickets(now = new Date()): Promise<void> {
    await this.dataSource.manager
      .createQueryBuilder()
      .delete()
      .from(SpentStreamTicket)
      .where('expires_at < :now', { now })
      .execute();
  }

  /** For readiness: the `events` database answers, and so does the backend (the NATS servers). */
  async ready(timeoutMs = 2000): Promise<boolean> {
    const [db, backend] = await Promise.all([pingDatabase(this.dataSource, timeoutMs), this.backend.ping(timeoutMs)]);
    return db && backend;
  }

  async close(): Promise<void> {
    if (this.backend instanceof JetStreamBackend) clearWakeTransport(this.backend);
    await this.backend.close();
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

/** Moves a subgraph's outbox into the log: read a batch, append it, then delete it from the outbox. */
export class OutboxRelay {
  private poller?: Poller;
  private readonly anyQueued: () => Promise<boolean>;

  constructor(
    private readonly source: string,
    private readonly outbox: DataSource,
    private readonly log: EventLog,
    private readonly intervalMs: number,
    private readonly logger?: Logger,
    /** The longest pause between looks while the outbox stays empty (POLL_MAX_IDLE_MS). */
    private readonly maxIntervalMs = intervalMs,
  ) {
    this.anyQueued = anyRow(outbox, OutboxEvent);
  }

  /**
   * At once after this process commits a transaction on the outbox's database; otherwise (rows
   * written by another process on the same database) every `intervalMs`, backing off to
   * `maxIntervalMs` while the outbox stays empty.
   */
  start(): void {
    this.poller = startPoller({
      name: 'outbox relay',
      intervalMs: this.intervalMs,
      maxIntervalMs: this.maxIntervalMs,
      work: () => this.drain(),
      wakeOn: this.outbox,
      // On NATS, every process that writes an outbox runs its relay, woken by its own commits; a
      // process that died leaves its rows to the next relay that runs (at its start, or a commit).
      idlePoll: !this.log.backend.wakesAcrossProcesses,
      logger: this.logger,
    });
  }

  /**
   * Relays until the outbox is empty; true when there was something. Deleting (not a cursor)
   * means rows committed late are never skipped.
   */
  async drain(): Promise<boolean> {
    if (!(await this.anyQueued())) return false; // most polls: a fixed query instead of a find
    for (;;) {
      const batch = await this.outbox.manager.find(OutboxEvent, { order: { seq: 'ASC' }, take: 500 });
      if (!batch.length) return true;
      const appended = await this.log.append(this.source, batch);
      if (appended) {
        const now = Date.now();
        for (const e of batch)
          eventRelayLag.observe({ source: this.source }, Math.max(0, now - e.occurredAt.getTime()) / 1000);
      }
      await this.outbox.manager.delete(OutboxEvent, { seq: In(batch.map((e) => e.seq)) });
      if (batch.length < 500) return true;
    }
  }

  async stop(): Promise<void> {
    await this.poller?.stop();
  }
}

/** Prunes events older than the retention now and then (any instance may; it is idempotent). */
export function startPruning(
  log: EventLog,
  retentionSeconds: number,
  logger?: Logger,
  everyMs = 10 * 60_000,
): () => void {
  const prune = () =>
    Promise.all([log.prune(new Date(Date.now() - retentionSeconds * 1000)), log.pruneSpentTickets()])
      .then(([n]) => n)
      .then(
        (n) => n && logger?.info({ pruned: n }, 'old events pruned'),
        (err) => logger?.warn({ err }, 'event pruning failed; retrying later'),
      );
  void prune();
  const timer = setInterval(() => void prune(), everyMs).unref();
  return () => clearInterval(timer);
}
