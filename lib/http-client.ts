// The hops between this service's own processes (facade → gateway → subgraph) are one small
// JSON POST each, on connections kept open to the next hop. undici's request API does one for
// about 0.07 ms of CPU where node:http with a keep-alive agent took 0.18 ms, and fetch (undici
// too, behind the WHATWG layer) or Apollo's make-fetch-happen 0.55–0.6 ms (issue 14).
import { STATUS_CODES } from 'node:http';
import type { GraphQLFormattedError } from 'graphql';
import type { Pool } from 'undici';
import { KEPT_JSON_HEADER, keepRanges } from './json-text';
import { recording, SpanKind, startSpan } from './tracing';

interface HttpAnswer {
  status: number;
  statusText: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

// One pool per origin. Idle connections are closed after 30 s at most, before the servers' 65 s
// keep-alive timeout, so a request is not sent on a connection the server is closing.
const pools = new Map<string, Pool>();
function poolFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) {
    // Loaded on the first hop: the one-process server makes none, and undici is some 8 MiB of its memory.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Pool } = require('undici') as typeof import('undici');
    pools.set(origin, (pool = new Pool(origin, { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 30_000 })));
  }
  return pool;
}

/** POSTs `body` and reads the whole answer as text. Rejects on network errors (with their `code`). */
async function post(url: string | URL, headers: Record<string, string>, body: string): Promise<HttpAnswer> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const res = await poolFor(target.origin).request({
    method: 'POST',
    path: `${target.pathname}${target.search}`,
    headers,
    body,
  });
  return {
    status: res.statusCode,
    statusText: res.statusText || (STATUS_CODES[res.statusCode] ?? ''),
    headers: res.headers,
    body: await res.body.text(),
  };
}

/** A GraphQL answer as it arrives over HTTP. */
export interface GraphQLAnswer {
  data?: Record<string, unknown> | null;
  errors?: GraphQLFormattedError[];
}

/**
 * POSTs a GraphQL request as JSON. The answer is the body when it is a GraphQL answer (`data` or
 * `errors`), whatever the status (a request the next hop refused still carries its errors);
 * anything else (a proxy's error page, a body cut short) rejects with the status and the body.
 * In a sampled trace it is a client span, and the next hop is its child (`traceparent`).
 */
export async function postGraphQL(
  url: string | URL,
  headers: Record<string, string>,
  request: object,
  /** The client span's name and what it adds (the gateway's: `fetch <subgraph>`, as Apollo Router's). */
  span?: { name: string; attributes: Record<string, string> },
): Promise<GraphQLAnswer> {
  const target = typeof url === 'string' ? new URL(url) : url;
  // Nothing is made for a request that is not sampled (or without tracing).
  if (!recording()) return sendGraphQL(target, { 'content-type': 'application/json', ...headers }, request);
  const client = startSpan(span?.name ?? 'POST', SpanKind.CLIENT, {
    ...span?.attributes,
    'http.request.method': 'POST',
    'server.address': target.hostname,
    'server.port': Number(target.port) || 80,
    'url.full': `${target.origin}${target.pathname}`,
  })!;
  try {
    const answer = await sendGraphQL(
      target,
      { 'content-type': 'application/json', ...headers, traceparent: client.scope.traceParent },
      request,
      client.attributes,
    );
    if (answer.errors?.length) client.fail(answer.errors[0].message);
    return answer;
  } catch (err) {
    client.fail((err as Error).message, err);
    throw err;
  } finally {
    client.end();
  }
}

async function sendGraphQL(
  url: URL,
  headers: Record<string, string>,
  request: object,
  attributes?: Record<string, unknown>,
): Promise<GraphQLAnswer> {
  const answer = await post(url, headers, JSON.stringify(request));
  if (attributes) attributes['http.response.status_code'] = answer.status;
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    body = undefined;
  }
  if (body && typeof body === 'object' && ('data' in body || Array.isArray((body as GraphQLAnswer).errors))) {
    // A subgraph's answer says where the texts of its kept arrays lie (./json-text.ts): kept here too.
    const kept = answer.headers[KEPT_JSON_HEADER];
    if (typeof kept === 'string') keepRanges(body, answer.body, kept);
    return body;
  }
  throw Object.assign(
    new Error(`${String(url)} answered ${answer.status} ${answer.statusText} without a GraphQL answer`),
    {
      status: answer.status,
      body: answer.body.slice(0, 500),
    },
  );
}
