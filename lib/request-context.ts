// Headers that cross every hop (facade → gateway → subgraph): the caller's token, the
// request id, the trace (`traceparent`), and with the hop secret the client address (lib/hop.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import crypto from 'node:crypto';

/** The trace a request's work belongs to (lib/tracing/propagation.ts `TraceScope`), for code that has no request at hand. */
export interface RequestScope {
  readonly traceId: string;
  readonly spanId: string;
  readonly sampled: boolean;
  /** The W3C `traceparent` the next hop is sent. */
  readonly traceParent: string;
}

/**
 * The one AsyncLocalStorage of a request: its trace scope, read by log lines (lib/logger.ts), the
 * database spans and the hops' headers. Entered only while tracing is on (lib/http-app.ts), so
 * that a process without tracing pays nothing for it.
 */
export const requestScope = new AsyncLocalStorage<RequestScope>();

export const REQUEST_ID_HEADER = 'x-request-id';
/** The client's address as the previous hop saw it; believed only with the hop secret (lib/hop.ts). */
export const CLIENT_IP_HEADER = 'x-client-address';
export const HOP_SECRET_HEADER = 'x-hop-secret';
/** How a stream ticket (from `?ticket=`) travels from the facade to the event stream. */
export const STREAM_TICKET_HEADER = 'x-stream-ticket';

/** The gateway's id of one client operation, on each of its subgraph requests: budgets per operation (lib/operation-budget.ts). */
export const OPERATION_ID_HEADER = 'x-operation-id';

/** A command's Idempotency-Key (lib/idempotency.ts): from the client to the gateway, which honours it. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

export type Headers = Record<string, string | string[] | undefined>;

export function headerValue(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A caller-supplied id is echoed when it is sane; otherwise a new one is made. */
export function requestIdFrom(headers: Headers): string {
  const given = headerValue(headers, REQUEST_ID_HEADER);
  return given && /^[\w.:-]{1,128}$/.test(given) ? given : crypto.randomUUID();
}

/**
 * The headers a hop passes on to the next one (the caller's User-Agent too: sessions record it).
 * The client address goes only with the hop secret, without which the next hop would not believe it.
 */
export function forwardedHeaders(
  ctx: {
    requestId: string;
    clientIp: string;
    authorization?: string;
    streamTicket?: string;
    userAgent?: string;
    operationId?: string;
  },
  hopSecret: string | undefined,
): Record<string, string> {
  const trace = requestScope.getStore();
  return {
    [REQUEST_ID_HEADER]: ctx.requestId,
    // Sampled or not: the next hop keeps the trace id (and, trusting this hop, its decision).
    ...(trace ? { traceparent: trace.traceParent } : {}),
    ...(hopSecret
      ? { [HOP_SECRET_HEADER]: hopSecret, ...(ctx.clientIp ? { [CLIENT_IP_HEADER]: ctx.clientIp } : {}) }
      : {}),
    ...(ctx.operationId ? { [OPERATION_ID_HEADER]: ctx.operationId } : {}),
    ...(ctx.authorization ? { authorization: ctx.authorization } : {}),
    ...(ctx.streamTicket ? { [STREAM_TICKET_HEADER]: ctx.streamTicket } : {}),
    ...(ctx.userAgent ? { 'user-agent': ctx.userAgent } : {}),
  };
}
