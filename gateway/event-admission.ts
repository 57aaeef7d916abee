// Who may open an event stream, and how many at once: the caller by token or stream ticket
// (while the session lasts), and the per-user cap on open streams (EVENT_STREAMS_PER_USER).
import { AppError } from '../lib/errors';
import type { EventLog } from '../lib/event-log';
import type { ApiKeyExchange } from '../lib/api-keys';
import { CLIENT_IP_HEADER, headerValue, Headers, requestIdFrom, STREAM_TICKET_HEADER } from '../lib/request-context';
import type { Principal, TokenVerifier } from '../lib/tokens';

/** Seconds a client refused for too many streams is told to wait: streams last long. */
const STREAM_RETRY_AFTER_SECONDS = 30;

/** The caller, by token or stream ticket, and only while the session has not been revoked. */
export function streamPrincipal(
  verifier: TokenVerifier,
  log: EventLog,
  apiKeys?: ApiKeyExchange,
): (headers: Headers) => Promise<Principal> {
  /** A stream ticket opens one stream: the first to show it spends it, on any instance. */
  async function spend(ticket: string): Promise<Principal> {
    const principal = await verifier.verifyToken(ticket, 'stream').catch(() => {
      throw new AppError('unauthorized', 'The stream ticket is invalid or has expired; ask for a new one.');
    });
    // Remembered for 10 minutes, longer than any ticket lives (STREAM_TICKET_TTL_SECONDS ≤ 300).
    if (!(await log.spendTicket(principal.tokenId, new Date(Date.now() + 10 * 60_000)))) {
      throw new AppError('unauthorized', 'The stream ticket has been used already; ask for a new one.');
    }
    return principal;
  }

  return async (headers) => {
    const ticket = headerValue(headers, STREAM_TICKET_HEADER);
    const given = headerValue(headers, 'authorization');
    // An API key: the token auth exchanges it for (lib/api-keys.ts); the client address as the hop forwarded it.
    const authorization =
      apiKeys && given
        ? await apiKeys.authorization(given, headerValue(headers, CLIENT_IP_HEADER) ?? '', requestIdFrom(headers))
        : given;
    const principal =
      !authorization && ticket ? await spend(ticket) : await verifier.verifyRequest({ headers: { authorization } });
    if (await log.sessionRevoked(principal.sessionId)) throw new AppError('unauthorized', 'The session has ended.');
    return principal;
  };
}

/**
 * Open streams per user in this process (REST bridge and /graphql/stream alike). `admit` counts
 * a stream synchronously, so that concurrent requests cannot all slip through: it gives the
 * stream's release (idempotent), or the refusal when the user has `max` open already.
 */
export function streamCaps(max: number): { admit(userId: string): (() => void) | AppError } {
  const openStreams = new Map<string, number>();
  return {
    admit(userId) {
      const open = openStreams.get(userId) ?? 0;
      if (open >= max) {
        return new AppError(
          'rate_limit_exceeded',
          `At most ${max} event streams of one user at once (EVENT_STREAMS_PER_USER); close one first.`,
          { limit: 'EVENT_STREAMS_PER_USER', max },
          STREAM_RETRY_AFTER_SECONDS,
        );
      }
      openStreams.set(userId, open + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const n = (openStreams.get(userId) ?? 1) - 1;
        if (n > 0) openStreams.set(userId, n);
        else openStreams.delete(userId);
      };
    },
  };
}
