// The hops between this service's own processes (facade → gateway → subgraph) are one small
// JSON POST each. node:http with a keep-alive agent does one for about a quarter of the CPU of
// fetch (undici) or Apollo's default make-fetch-happen (measured: 0.14 vs 0.55–0.6 ms per
// request and answer, see docs of issue 14); connections to the next hop stay open.
import http from 'node:http';
import https from 'node:https';

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

/**
 * The same as a fetch function for libraries that take one (Apollo's RemoteGraphQLDataSource):
 * POST only, and the answer has what they read (status, headers.get, json, text).
 */
export async function postAsFetch(url: string, init: { headers?: Record<string, string>; body?: string }) {
  const answer = await post(url, init.headers ?? {}, init.body ?? '');
  return {
    url,
    ok: answer.status >= 200 && answer.status < 300,
    status: answer.status,
    statusText: answer.statusText,
    headers: {
      get: (name: string) => {
        const v = answer.headers[name.toLowerCase()];
        return v === undefined ? null : Array.isArray(v) ? v.join(', ') : String(v);
      },
    },
    json: async () => JSON.parse(answer.body) as unknown,
    text: async () => answer.body,
  };
}
