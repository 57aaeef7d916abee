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

export const SESSION_REVOKED = 'session.revoked';

const PAGE = 1000;
/** How far the clocks of the process that signs tokens and one that checks them may disagree. */
export const CLOCK_SKEW_MS = 5 * 60_000;

export class SessionRevocations {
  /** Revoked session id → when this process learned of it (ms, never before the revocation), to forget it after `keepMs`. */
  private readonly revoked = new Map<string, number>();
  /** Every event up to this position has been looked at. */
  private readThrough = 0;
  /** When (performance.now()) the last successful reading started: it saw what the log held then. */
  private readStartedAt = -Infinity;
  private reading?: { startedAt: number; done: Promise<void> };
  private forgottenAt = Date.now();

  constructor(
    private readonly log: DataSource,
    private readonly options: { maxAgeMs: number; keepMs: number },
  ) {}

  /** Revocations this process has just appended to the log (committed). */
  appended(sessionIds: string[]): void {
    const now = Date.now();
    for (const id of sessionIds) this.revoked.set(id, now);
  }

  /** Whether the session's revocation is in the log, as of at most `maxAgeMs` ago. */
  async isRevoked(sessionId: string): Promise<boolean> {
    const needFrom = performance.now() - this.options.maxAgeMs;
    while (this.readStartedAt < needFrom) await this.read(needFrom);
    return this.revoked.has(sessionId);
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
    // The head first, committed: every event up to it is committed too (the append moves it in
    // the same transaction), so nothing at or below it can appear later; events above it are
    // left for the next reading.
    const [head] = await selectCommitted<{ last_seq: number | string }>(
      this.log,
      'SELECT last_seq FROM event_sequence WHERE id = 1',
      [],
    );
    const through = Number(head?.last_seq ?? 0);
    const now = Date.now();
    // Revocations whose tokens have all expired are left out (a process starting reads no week of them).
    const since = new Date(now - this.options.keepMs);
    while (this.readThrough < through) {
      const rows: { seq: number | string; resource_id: string }[] = await this.log
        .createQueryBuilder()
        .select('e.seq', 'seq')
        .addSelect('e.resource_id', 'resource_id')
        .from('events', 'e')
        .where('e.type = :type AND e.seq > :after AND e.seq <= :through AND e.occurred_at > :since', {
          type: SESSION_REVOKED,
          after: this.readThrough,
          through,
          since,
        })
        .orderBy('e.seq')
        .limit(PAGE)
        .getRawMany();
      for (const row of rows) this.revoked.set(row.resource_id, now);
      this.readThrough = rows.length < PAGE ? through : Number(rows[rows.length - 1].seq);
    }
    this.forgetOld();
  }

  /** Revocations no token can outlive any more are forgotten (now and then). */
  private forgetOld(): void {
    const now = Date.now();
    if (now - this.forgottenAt < 60_000) return;
    this.forgottenAt = now;
    const before = now - this.options.keepMs;
    for (const [id, at] of this.revoked) if (at < before) this.revoked.delete(id);
  }

  /** How many revocations this process holds (for tests and metrics). */
  get size(): number {
    return this.revoked.size;
  }
}
