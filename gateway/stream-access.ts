// An open stream's caller, kept up to date from the events it reads (issue 41): a stream ends,
// with an error result, at the event that takes away what it needed. Its session's revocation
// ends it too (`endAfter` in ./events-schema.ts); these are the others:
// - `user.scopes_changed` of the caller whose new set (∩ an API key's own) lacks `events:read`,
//   or `admin:users` for a stream of every user's events;
// - `user.disabled` / `user.deleted` of the caller: an API key's session is the key, which
//   neither revokes.
// Events the caller's scopes already account for (older than its token, or than the newest scope
// change the process knew of when the stream opened) change nothing: a stream resuming from an
// old position replays history in which the caller may have lost and regained a scope.
import { AppError } from '../lib/errors';
import type { StreamEvent } from '../lib/event-stream';
import { USER_ENDED, USER_SCOPES_CHANGED } from '../lib/revocations';
import { effectiveScopes, type Principal } from '../lib/tokens';

export function accessLost(options: {
  principal: Principal;
  /** The scopes the stream was admitted with. */
  needs: readonly string[];
  /** When the newest scope change the caller's scopes were read with happened (ms), if any. */
  knownChangeAt: number | undefined;
}): (event: StreamEvent) => Error | undefined {
  const { principal, needs } = options;
  const issuedAt = principal.issuedAt * 1000;
  let scopesAsOf = Math.max(issuedAt, options.knownChangeAt ?? -Infinity);
  return (event) => {
    if (event.userId !== principal.userId && event.resourceId !== principal.userId) return undefined;
    const at = event.occurredAt.getTime();
    if (USER_ENDED.includes(event.type) && event.resourceId === principal.userId && at >= issuedAt)
      return new AppError('unauthorized', 'The account has been disabled or deleted: the stream has ended.');
    if (event.type !== USER_SCOPES_CHANGED || event.resourceId !== principal.userId || at < scopesAsOf)
      return undefined;
    scopesAsOf = at;
    const listed = (event.data as { scopes?: unknown }).scopes;
    const scopes = effectiveScopes(
      principal,
      new Set(Array.isArray(listed) ? listed.filter((s): s is string => typeof s === 'string') : []),
    );
    const missing = needs.filter((s) => !scopes.has(s));
    return missing.length
      ? new AppError('forbidden', `The stream has ended: the caller no longer holds the scope ${missing.join(', ')}.`)
      : undefined;
  };
}
