// The event log: one ordered table of every subgraph's events, in a database of its own
// (`events`). Subgraphs never write here directly: each writes its outbox in the same
// transaction as its change (lib/outbox.ts), and a relay in the subgraph's process moves the
// outbox rows here. Streams read the log by sequence number.
import {
  Column,
  DataSource,
  Entity,
  EntityManager,
  Index,
  In,
  MigrationInterface,
  MoreThan,
  PrimaryColumn,
  QueryRunner,
  Table,
  TableIndex,
} from 'typeorm';
import type { Config } from './config';
import { openDatabase } from './database/open';
import { columns, isUniqueViolation } from './database/portable';
import { CreateIdempotencyKeys1764000000000, IdempotencyRecord } from './idempotency';
import { anyRow, rowReader } from './database/reads';
import { inTransaction } from './database/transactions';
import type { Logger } from './logger';
import { eventRelayLag } from './metrics';
import { EventColumns, eventTableColumns, OutboxEvent } from './outbox';
import { Poller, startPoller } from './poller';
import { CLOCK_SKEW_MS, SESSION_REVOKED, SessionRevocations, USER_ENDED, USER_SCOPES_CHANGED } from './revocations';

export const EVENTS_DATABASE = 'events';

/** BIGINT comes back from MySQL as a string; positions stay well inside a double's integers. */
const bigintNumber = { to: (v: number) => v, from: (v: string | number) => Number(v) };

@Entity('events')
@Index(['userId', 'seq'])
@Index(['resourceId'])
@Index(['type', 'seq'])
export class LoggedEvent extends EventColumns {
  /** The stream position: assigned in commit order, so a reader at `seq > n` never skips one. */
  @PrimaryColumn({ type: 'bigint', transformer: bigintNumber })
  seq!: number;

  /** The subgraph that wrote it. */
  @Column({ type: 'varchar', length: 64 })
  source!: string;
}

/** One row: the last sequence number handed out, and up to where old events were pruned. */
@Entity('event_sequence')
export class EventSequence {
  @PrimaryColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'last_seq', type: 'bigint', transformer: bigintNumber })
  lastSeq!: number;

  @Column({ name: 'pruned_through', type: 'bigint', transformer: bigintNumber })
  prunedThrough!: number;
}

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
  private readonly readSequence: (id: number) => Promise<EventSequence | null>;

  private constructor(
    readonly dataSource: DataSource,
    config: Pick<Config, 'EVENT_POLL_MS' | 'ACCESS_TOKEN_TTL_SECONDS' | 'STREAM_TICKET_TTL_SECONDS'>,
  ) {
    // A revocation matters while a token of its session may still be valid (lib/revocations.ts).
    const keepMs = Math.max(config.ACCESS_TOKEN_TTL_SECONDS, config.STREAM_TICKET_TTL_SECONDS) * 1000 + CLOCK_SKEW_MS;
    this.revocations = new SessionRevocations(dataSource, { maxAgeMs: config.EVENT_POLL_MS, keepMs });
    this.readSequence = rowReader(dataSource, EventSequence);
  }

  static async open(config: Config, logger?: Logger): Promise<EventLog> {
    const dataSource = await openDatabase(config, eventLogSpec, logger);
    return new EventLog(dataSource, config);
  }

  /**
   * Appends events that are not in the log yet (at-least-once relays may offer one twice).
   * The sequence row is locked by the UPDATE for the whole transaction, so appends are
   * serialised and numbers become visible in order.
   */
  async append(source: string, events: OutboxEvent[]): Promise<number> {
    if (!events.length) return 0;
    const appended = await inTransaction(this.dataSource, async (m: EntityManager) => {
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
    return this.dataSource.manager.find(LoggedEvent, {
      where: userId ? { seq: MoreThan(after), userId } : { seq: MoreThan(after) },
      order: { seq: 'ASC' },
      take: limit,
    });
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

  /** Asked by every poll of every stream and consumer: a fixed query (rowReader), not a TypeORM find. */
  async position(): Promise<{ lastSeq: number; prunedThrough: number }> {
    const row = await this.readSequence(1);
    if (!row) throw new Error('The event log has no sequence row: its migrations did not run.');
    return { lastSeq: row.lastSeq, prunedThrough: row.prunedThrough };
  }

  /** Deletes events older than `before`; remembers how far, so that a resume from there can be refused. */
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

  /** Forgets used stream tickets that have expired (they are refused by their expiry now). */
  async pruneSpentTickets(now = new Date()): Promise<void> {
    await this.dataSource.manager
      .createQueryBuilder()
      .delete()
      .from(SpentStreamTicket)
      .where('expires_at < :now', { now })
      .execute();
  }

  async close(): Promise<void> {
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
