// The caller as the subgraphs would find it now, for what the gateway answers without them (an
// Idempotency-Key's replay, lib/operation-pipeline/idempotency.ts): none when the token's session
// has ended (a logout, a revocation, the user disabled), else its scopes as of the event log.
import { AppError } from '../lib/errors';
import type { CallerAccess } from '../lib/operation-pipeline';
import { effectiveScopes, scopesOfToken, type Principal } from '../lib/tokens';

/** What the event log tells of callers (lib/event-log.ts, read at most once per EVENT_POLL_MS). */
export interface CallerLog {
  sessionRevoked(sessionId: string): Promise<boolean>;
  scopesOf(userId: string, issuedAt: number, own: ReadonlySet<string>): Promise<ReadonlySet<string>>;
}

export function callerAccess(log: CallerLog): (principal: Principal | undefined) => Promise<CallerAccess> {
  return async (principal) => {
    if (!principal) return { scopes: undefined };
    let revoked: boolean;
    let scopes: ReadonlySet<string>;
    try {
      revoked = await log.sessionRevoked(principal.sessionId);
      scopes = await log.scopesOf(principal.userId, principal.issuedAt, scopesOfToken(principal));
    } catch {
      // Never from stale memory (lib/revocations.ts).
      throw new AppError('service_unavailable', 'The caller cannot be checked now; try again.');
    }
    if (revoked) return { scopes: undefined, authError: new AppError('unauthorized', 'The session has ended.') };
    return { scopes: effectiveScopes(principal, scopes) };
  };
}
