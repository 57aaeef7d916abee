// Ending sessions. Each revocation is a `session.revoked` event: the other subgraphs and the
// event stream, which cannot read this database, refuse a session's tokens once its event is in
// the event log (lib/subgraph.ts).
import type { EntityManager } from 'typeorm';
import { Not } from 'typeorm';
import { affectedRows } from '../../lib/database/portable';
import type { Audit } from './audit';
import { Session } from './entities/session';

export type RevokeReason = 'logout' | 'revoked_by_user' | 'password_changed' | 'user_disabled' | 'user_deleted' | 'refresh_reused';

/**
 * Revokes the listed sessions that are still active. Each row is flipped by a compare-and-set,
 * so a session revoked by two operations at once gets one event.
 */
export async function revokeSessions(m: EntityManager, audit: Audit, sessionIds: string[], owner: { id: string; username: string }, reason: RevokeReason): Promise<number> {
  let revoked = 0;
  const now = new Date();
  for (const id of sessionIds) {
    const result = await m.update(Session, { id, storedState: 'active' }, { storedState: 'revoked', revokedAt: now });
    if (affectedRows(result) !== 1) continue;
    revoked++;
    await audit({ type: 'session.revoked', userId: owner.id, resourceId: id, username: owner.username, data: { session_id: id, reason } });
  }
  return revoked;
}

/**
 * Revokes every active session of a user (but `except`). Callers change the user's row first in
 * the same transaction: a login inserts its session only while that row says the user may log in,
 * so no session can slip in between this read and the commit.
 */
export async function revokeUserSessions(m: EntityManager, audit: Audit, owner: { id: string; username: string }, reason: RevokeReason, except?: string): Promise<number> {
  const active = await m.find(Session, {
    select: { id: true },
    where: { userId: owner.id, storedState: 'active', ...(except ? { id: Not(except) } : {}) },
    // MySQL: a locking read sees what committed after this transaction's snapshot was taken
    // (a login that got the user row just before us). SQLite's write lock already excludes it.
    ...(m.connection.options.type === 'mysql' ? { lock: { mode: 'pessimistic_write' as const } } : {}),
  });
  return revokeSessions(m, audit, active.map((s) => s.id), owner, reason);
}

