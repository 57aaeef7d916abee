// Which sessions were revoked, as the event log says (`session.revoked` events): how processes
// that cannot read the auth database refuse the tokens of an ended session. Kept in memory and
// brought up to date from the log when a question comes and the last reading is older than
// `maxAgeMs` (EVENT_POLL_MS): at most one reading of the log per `maxAgeMs` however many requests
// ask, instead of one query per request, and none at all while no request comes. Revocations
// this process appends are known at once. An answer is never older than `maxAgeMs`; a reading
// that fails fails the question (the caller answers service_unavailable), never a stale `false`.
//
// Memory is bounded by time, not by the log's retention: no token is issued in a session once it
// is revoked, so its last access token (or stream ticket) expires at most `keepMs` after the
// revocation (the longest token lifetime, plus a margin for clocks that disagree). A revocation is
// forgotten that long after this process learned of it, and one that old is not read at all.
import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import { selectCommitted } from './database/reads';
import { EventLogBackend, TableBackend } from './event-backends';

export const SESSION_REVOKED = 'session.revoked';
/** A user's new full scope set (issue 30): payload `{ scopes }`, the user's id as the resource. */
export const USER_SCOPES_CHANGED = 'user.scopes_changed';
/**
 * The events that end what a user's API keys were exchanged for, though no session of theirs is
 * revoked (a key's session is the key): the edge drops its cached key tokens on them (issue 41).
 */
export const USER_ENDED: readonly string[] = ['user.disabled', 'user.deleted'];

/** A user's newest scope set as the log says, and when it changed (ms). */
export interface ScopeChange {
  scopes: ReadonlySet<string>;
  changedAt: number;
  /** When this process learned of it, to forget it once no token issued before it can be valid. */
  learnedAt: number;
}

const PAGE = 1000;
/** How far the clocks of the process that signs tokens and one that checks them may disagree. */
export const CLOCK_SKEW_MS = 5 * 60_000;

export class SessionRevocations {
  /** Revoked session id → when this process learned of it (ms, never before the revocation), to forget it after `keepMs`. */
  private readonly revoked = new Map<string, number>();
  /**
   * User id → the newest scope change in the log (read the same way, in the same readings: the
   * scopes a token carries as issued give way to a change newer than the token).
   */
  private readonly scopeChanges = new Map<string, ScopeChange>();
  /** User id → when they were last disabled or deleted (ms, the log's time) and when this process learned of it. */
  private readonly usersEnded = new Map<string, { at: number; learnedAt: number }>();
  /** Every event up to this position has been looked at. */
  private readThrough = 0;
  /** When (performance.now()) the last successful reading started: it saw what the log held then. */
  private readStartedAt = -Infinity;
  private reading?: { startedAt: number; done: Promise<void> };
  private forgottenAt = Date.now();

  constructor(
    private readonly backend: EventLogBackend,
    private readonly options: { maxAgeMs: number; keepMs: number },
  ) {}

  /** Revocations this process has just appended to the log (committed). */
  appended(sessionIds: string[]): void {
    const now = Date.now();
    for (const id of sessionIds) this.revoked.set(id, now);
  }

  /** Scope changes this process has just appended to the log (committed). */
  appendedScopeChanges(changes: { userId: string; scopes: readonly string[]; changedAt: Date }[]): void {
    const now = Date.now();
    for (const c of changes) this.noteScopes(c.userId, c.scopes, c.changedAt.getTime(), now);
  }

  /** Users this process has just disabled or deleted (committed to the log). */
  appendedUserEnds(ends: { userId: string; at: Date }[]): void {
    const now = Date.now();
    for (const e of ends) this.noteUserEnded(e.userId, e.at.getTime(), now);
  }

  /**
   * Whether a token exchanged for an API key (its session is the key) has been overtaken, as of at
   * most `maxAgeMs` ago: the key revoked, its owner disabled or deleted, or the owner's scopes
   * changed, at or after the token's `issuedAt` (seconds: within its second counts). A cache of
   * such tokens asks before each use (lib/api-keys.ts). A log that cannot be read throws.
   */
  async keyTokenOvertaken(userId: string, keyId: string, issuedAt: number): Promise<boolean> {
    await this.fresh();
    const since = issuedAt * 1000;
    const ended = this.usersEnded.get(userId);
    const change = this.scopeChanges.get(userId);
    return this.revoked.has(keyId) || (ended?.at ?? -Infinity) >= since || (change?.changedAt ?? -Infinity) >= since;
  }

  /** Whether the session's revocation is in the log, as of at most `maxAgeMs` ago. */
  async isRevoked(sessionId: string): Promise<boolean> {
    await this.fresh();
    return this.revoked.has(sessionId);
  }

  /**
   * The user's scopes: the newest change in the log, as of at most `maxAgeMs` ago, when it is
   * not older than the token (`issuedAt`, seconds: a change within the token's second counts,
   * the log being the newer truth), else the token's own. A log that cannot be read throws.
   */
  async scopesOf(userId: string, issuedAt: number, own: ReadonlySet<string>): Promise<ReadonlySet<string>> {
    await this.fresh();
    return this.knownScopesOf(userId, issuedAt, own);
  }

  /** When the user's newest scope change in what was read last happened (ms); undefined: none known. */
  knownScopeChangeAt(userId: string): number | undefined {
    return this.scopeChanges.get(userId)?.changedAt;
  }

  /** As scopesOf, from what was read last: for a caller that has just awaited isRevoked(). */
  knownScopesOf(userId: string, issuedAt: number, own: ReadonlySet<string>): ReadonlySet<string> {
    const change = this.scopeChanges.get(userId);
    return change && change.changedAt >= issuedAt * 1000 ? change.scopes : own;
  }

  private async fresh(): Promise<void> {
    const needFrom = performance.now() - this.options.maxAgeMs;
    while (this.readStartedAt < needFrom) await this.read(needFrom);
  }

  private noteScopes(userId: string, scopes: readonly string[], changedAt: number, now: number): void {
    const known = this.scopeChanges.get(userId);
    if (known && known.changedAt > changedAt) return;
    this.scopeChanges.set(userId, { scopes: new Set(scopes), changedAt, learnedAt: now });
  }

  private noteUserEnded(userId: string, at: number, now: number): void {
    const known = this.usersEnded.get(userId);
    if (!known || known.at <= at) this.usersEnded.set(userId, { at, learnedAt: now });
  }

  /** A reading that started at or after `needFrom`: the one under way, or a new one. */
  private read(needFrom: number): Promise<void> {
    const current = this.reading;
    if (current && current.startedAt >= needFrom) return current.done;
    // One reading at a time (they advance one position); a newer one follows the one under way.
    if (current) return current.done.catch(() => undefined).then(() => this.read(needFrom));
    const startedAt = performance.now();
    const done = this.readLog()
      .then(() => {
        this.readStartedAt = Math.max(this.readStartedAt, startedAt);
      })
      .finally(() => {
        if (this.reading?.done === done) this.reading = undefined;
      });
    this.reading = { startedAt, done };
    return done;
  }

  private async readLog(): Promise<void> {
    if (this.backend instanceof TableBackend) await this.readTable(this.backend.dataSource);
    else await this.readBackend();
    this.forgetOld();
  }

  /** Any backend (JetStream): the head, then the events of these types after what was read (by subject). */
  private async readBackend(): Promise<void> {
    const { lastSeq: through } = await this.backend.position();
    const now = Date.now();
    const since = new Date(now - this.options.keepMs);
    // A process starting reads no week of them: from the first event young enough to matter.
    if (this.readThrough === 0 && this.backend.positionBefore)
      this.readThrough = Math.min(through, await this.backend.positionBefore(since));
    while (this.readThrough < through) {
      const events = await this.backend.read(this.readThrough, PAGE, {
        types: [SESSION_REVOKED, USER_SCOPES_CHANGED, ...USER_ENDED],
      });
      for (const e of events) {
        if (e.seq > through) break;
        if (e.occurredAt <= since) continue;
        if (e.type === SESSION_REVOKED) this.revoked.set(e.resourceId, now);
        else if (e.type !== USER_SCOPES_CHANGED) this.noteUserEnded(e.resourceId, e.occurredAt.getTime(), now);
        else this.noteScopes(e.resourceId, payloadScopes(e.payload), e.occurredAt.getTime(), now);
      }
      this.readThrough = events.length < PAGE ? through : Math.min(through, events[events.length - 1].seq);
    }
  }

  private async readTable(log: DataSource): Promise<void> {
    // The head first, committed: every event up to it is committed too (the append moves it in
    // the same transaction), so nothing at or below it can appear later; events above it are
    // left for the next reading.
    const [head] = await selectCommitted<{ last_seq: number | string }>(
      log,
      'SELECT last_seq FROM event_sequence WHERE id = 1',
      [],
    );
    const through = Number(head?.last_seq ?? 0);
    const now = Date.now();
    // Revocations whose tokens have all expired are left out (a process starting reads no week of them).
    const since = new Date(now - this.options.keepMs);
    while (this.readThrough < through) {
      const rows: {
        seq: number | string;
        type: string;
        resource_id: string;
        payload: string;
        occurred_at: Date | string;
      }[] = await log
        .createQueryBuilder()
        .select('e.seq', 'seq')
        .addSelect('e.type', 'type')
        .addSelect('e.resource_id', 'resource_id')
        // Only scope changes carry what is needed from their payload.
        .addSelect(`CASE WHEN e.type = :scopes THEN e.payload ELSE '' END`, 'payload')
        .addSelect('e.occurred_at', 'occurred_at')
        .from('events', 'e')
        .where('e.type IN (:...types) AND e.seq > :after AND e.seq <= :through AND e.occurred_at > :since', {
          types: [SESSION_REVOKED, USER_SCOPES_CHANGED, ...USER_ENDED],
          scopes: USER_SCOPES_CHANGED,
          after: this.readThrough,
          through,
          since,
        })
        .orderBy('e.seq')
        .limit(PAGE)
        .getRawMany();
      for (const row of rows) {
        if (row.type === SESSION_REVOKED) this.revoked.set(row.resource_id, now);
        else if (row.type !== USER_SCOPES_CHANGED)
          this.noteUserEnded(row.resource_id, occurredAt(row.occurred_at), now);
        else this.noteScopes(row.resource_id, payloadScopes(row.payload), occurredAt(row.occurred_at), now);
      }
      this.readThrough = rows.length < PAGE ? through : Number(rows[rows.length - 1].seq);
    }
  }

  /** Revocations no token can outlive any more are forgotten (now and then). */
  private forgetOld(): void {
    const now = Date.now();
    if (now - this.forgottenAt < 60_000) return;
    this.forgottenAt = now;
    const before = now - this.options.keepMs;
    for (const [id, at] of this.revoked) if (at < before) this.revoked.delete(id);
    for (const [id, change] of this.scopeChanges) if (change.learnedAt < before) this.scopeChanges.delete(id);
    for (const [id, ended] of this.usersEnded) if (ended.learnedAt < before) this.usersEnded.delete(id);
  }

  /** How many revocations this process holds (for tests and metrics). */
  get size(): number {
    return this.revoked.size;
  }
}

/** The scopes of a `user.scopes_changed` payload; none (fail closed) when it is not readable. */
function payloadScopes(payload: string): string[] {
  try {
    const scopes = (JSON.parse(payload) as { scopes?: unknown }).scopes;
    return Array.isArray(scopes) ? scopes.filter((s): s is string => typeof s === 'string') : [];
  } catch {
    return [];
  }
}

/** A DATETIME(3) as each driver returns it: a Date (MySQL), or UTC text without a zone (SQLite). */
function occurredAt(value: Date | string): number {
  if (value instanceof Date) return value.getTime();
  return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value.replace(' ', 'T')}Z`).getTime();
}
