// Headers that cross every hop (facade → gateway → subgraph): the caller's token, the
// request id and the client address.
import crypto from 'node:crypto';

export const REQUEST_ID_HEADER = 'x-request-id';
export const CLIENT_IP_HEADER = 'x-forwarded-for';
/** How a stream ticket (from `?ticket=`) travels from the facade to the event stream. */
export const STREAM_TICKET_HEADER = 'x-stream-ticket';

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

/** The headers a hop passes on to the next one (the caller's User-Agent too: sessions record it). */
export function forwardedHeaders(ctx: { requestId: string; clientIp: string; authorization?: string; streamTicket?: string; userAgent?: string }): Record<string, string> {
  return {
    [REQUEST_ID_HEADER]: ctx.requestId,
    [CLIENT_IP_HEADER]: ctx.clientIp,
    ...(ctx.authorization ? { authorization: ctx.authorization } : {}),
    ...(ctx.streamTicket ? { [STREAM_TICKET_HEADER]: ctx.streamTicket } : {}),
    ...(ctx.userAgent ? { 'user-agent': ctx.userAgent } : {}),
  };
}
