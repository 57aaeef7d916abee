// The hops between this service's own processes (facade → gateway → subgraph) are one small
// JSON POST each. node:http with a keep-alive agent does one for about a quarter of the CPU of
// fetch (undici) or Apollo's default make-fetch-happen (measured: 0.14 vs 0.55–0.6 ms per
// request and answer, issue 14); connections to the next hop stay open.
import http from 'node:http';
import https from 'node:https';
import type { GraphQLFormattedError } from 'graphql';

export interface HttpAnswer {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

// Idle sockets are closed after 30 s, before the servers' 65 s keep-alive timeout, so a
// request is not sent on a socket the server is closing.
const AGENT_OPTIONS = { keepAlive: true, timeout: 30_000, scheduling: 'lifo' as const };
const agents = { 'http:': new http.Agent(AGENT_OPTIONS), 'https:': new https.Agent(AGENT_OPTIONS) };

/** POSTs `body` and reads the whole answer as text. Rejects on network errors (with their `code`). */
export function post(url: string | URL, headers: Record<string, string>, body: string, signal?: AbortSignal): Promise<HttpAnswer> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const transport = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(
      target,
      { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, agent: agents[target.protocol as 'http:'], signal },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
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
 */
export async function postGraphQL(url: string | URL, headers: Record<string, string>, request: object): Promise<GraphQLAnswer> {
  const answer = await post(url, { 'content-type': 'application/json', ...headers }, JSON.stringify(request));
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    body = undefined;
  }
  if (body && typeof body === 'object' && ('data' in body || Array.isArray((body as GraphQLAnswer).errors))) return body as GraphQLAnswer;
  throw Object.assign(new Error(`${url} answered ${answer.status} ${answer.statusText} without a GraphQL answer`), {
    status: answer.status,
    body: answer.body.slice(0, 500),
  });
}
