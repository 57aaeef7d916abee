// Ending sessions. Each revocation is a `session.revoked` event: the other subgraphs and the
// event stream, which cannot read this database, refuse a session's tokens once its event is in
// the event log (lib/subgraph.ts).
import type { EntityManager, FindOptionsWhere } from 'typeorm';
import { LessThanOrEqual, MoreThan, Not } from 'typeorm';
import { affectedRows } from '../../lib/database/portable';
import type { Audit } from './audit';
import { Session } from './entities/session';

export type RevokeReason =
  | 'logout'
  | 'revoked_by_user'
  | 'password_changed'
  | 'user_disabled'
  | 'user_deleted'
  | 'refresh_reused'
  | 'session_limit';

/** Sessions revoked in one transaction by "log out everywhere else", and past the quota by one login. */
export const REVOKE_BATCH = 100;

/** MySQL: a locking read sees what committed after this transaction's snapshot was taken. SQLite's write lock already excludes it. */
const lockingRead = (m: EntityManager) =>
  m.connection.options.type === 'mysql' ? { lock: { mode: 'pessimistic_write' as const } } : {};

/**
 * A user's active sessions (Session.state): stored active, refresh token not expired. An expired
 * one needs no revoking: its tokens are dead (no access token outlives the refresh token).
 */
function activeOf(userId: string, filter: { except?: string; createdBefore?: Date } = {}): FindOptionsWhere<Session> {
  return {
    userId,
    storedState: 'active',
    refreshExpiresAt: MoreThan(new Date()),
    ...(filter.except ? { id: Not(filter.except) } : {}),
    ...(filter.createdBefore ? { createdAt: LessThanOrEqual(filter.createdBefore) } : {}),
  };
}

/**
 * Revokes the listed sessions that are still active. Each row is flipped by a compare-and-set,
 * so a session revoked by two operations at once gets one event.
 */
export async function revokeSessions(
  m: EntityManager,
  audit: Audit,
  sessionIds: string[],
  owner: { id: string; username: string },
  reason: RevokeReason,
): Promise<number> {
  let revoked = 0;
  const now = new Date();
  for (const id of sessionIds) {
    const result = await m.update(Session, { id, storedState: 'active' }, { storedState: 'revoked', revokedAt: now });
    if (affectedRows(result) !== 1) continue;
    revoked++;
    await audit({
      type: 'session.revoked',
      userId: owner.id,
      resourceId: id,
      username: owner.username,
      data: { session_id: id, reason },
    });
  }
  return revoked;
}

/**
 * Revokes every active session of a user (but `except`). Callers change the user's row first in
 * the same transaction: a login inserts its session only while that row says the user may log in,
 * so no session can slip in between this read and the commit.
 */
export async function revokeUserSessions(
  m: EntityManager,
  audit: Audit,
  owner: { id: string; username: string },
  reason: RevokeReason,
  except?: string,
): Promise<number> {
  // Locking (MySQL): sees a login that got the user row just before us.
  const active = await m.find(Session, {
    select: { id: true },
    where: activeOf(owner.id, { except }),
    ...lockingRead(m),
  });
  return revokeSessions(
    m,
    audit,
    active.map((s) => s.id),
    owner,
    reason,
  );
}

/**
 * One batch of "every session but `except`, created up to `createdBefore`": at most REVOKE_BATCH
 * sessions, oldest first, so that ending a user's many sessions is many short transactions, not
 * one long one. Whether more may be left.
 */
export async function revokeUserSessionsBatch(
  m: EntityManager,
  audit: Audit,
  owner: { id: string; username: string },
  reason: RevokeReason,
  except: string,
  createdBefore: Date,
): Promise<{ revoked: number; more: boolean }> {
  const batch = await m.find(Session, {
    select: { id: true },
    where: activeOf(owner.id, { except, createdBefore }),
    order: { createdAt: 'ASC', id: 'ASC' },
    take: REVOKE_BATCH,
    ...lockingRead(m),
  });
  const revoked = await revokeSessions(
    m,
    audit,
    batch.map((s) => s.id),
    owner,
    reason,
  );
  return { revoked, more: batch.length === REVOKE_BATCH };
}

/**
 * The session quota (MAX_SESSIONS_PER_USER): after a login inserted `newest`, its user's oldest
 * active sessions past the quota are revoked (`session_limit`), as Keycloak and GitHub do. Called
 * in the login's transaction, which holds the user's row: logins of one user take turns here.
 * At most REVOKE_BATCH a login, so sessions from before the quota go down over a few logins.
 */
export async function revokeSessionsOverQuota(
  m: EntityManager,
  audit: Audit,
  owner: { id: string; username: string },
  newest: string,
  quota: number,
): Promise<number> {
  const excess = await m.find(Session, {
    select: { id: true },
    where: activeOf(owner.id, { except: newest }),
    order: { createdAt: 'DESC', id: 'DESC' },
    skip: quota - 1, // the new session is one of the quota
    take: REVOKE_BATCH,
  });
  return revokeSessions(
    m,
    audit,
    excess.map((s) => s.id),
    owner,
    'session_limit',
  );
}
