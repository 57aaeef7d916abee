// How the facade reaches the gateway: a function call in one process, HTTP otherwise.
// Either way the facade only ever sends GraphQL operations.
import type { GraphQLFormattedError } from 'graphql';
import type { Checks, ReadinessReport } from '../lib/http-app';
import { postGraphQL } from '../lib/http-client';
import {
  forwardedHeaders,
  Headers,
  headerValue,
  IDEMPOTENCY_KEY_HEADER,
  requestIdFrom,
  STREAM_TICKET_HEADER,
} from '../lib/request-context';

export interface GraphQLResult {
  data?: Record<string, any> | null;
  errors?: readonly GraphQLFormattedError[];
}

export interface GraphQLClient {
  execute(request: {
    query: string;
    variables?: Record<string, unknown>;
    headers: Headers;
    clientIp: string;
  }): Promise<GraphQLResult>;
  /** A subscription: its stream of results, or the errors that kept it from starting. */
  subscribe(request: {
    query: string;
    variables?: Record<string, unknown>;
    headers: Headers;
  }): Promise<AsyncGenerator<GraphQLResult> | GraphQLResult>;
  /** Readiness of everything behind the gateway: `{ database: 'up', auth: 'up', … }`. */
  checks(): Promise<Checks | ReadinessReport>;
  /**
   * In one process only: the user of an `Authorization` whose token the gateway has already
   * verified (lib/tokens.ts `known`), for the early refusal of expensive routes; else undefined.
   */
  knownUser?(authorization: string | undefined): string | undefined;
}

/** No connection could be made (refused, no route, none within undici's connect timeout): the request never reached that gateway, so another may safely take it. */
const unreachable = (err: unknown) => {
  const e = err as { code?: string; cause?: { code?: string } } | undefined;
  return ['ECONNREFUSED', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT'].includes(e?.code ?? e?.cause?.code ?? '');
};

/** How long a gateway that refused a connection is skipped. */
const SKIP_MS = 2000;

/** The gateways at these URLs, taken in turn; one that refuses connections is skipped for a moment. */
export function httpGraphQLClient(gatewayUrls: string[], hopSecret?: string): GraphQLClient {
  const gateways = gatewayUrls.map((url) => ({ url, graphql: new URL('/graphql', url), downUntil: 0 }));
  let next = 0;
  /** Tries each gateway once, starting with the next in turn and skipping those known down. */
  async function withGateway<T>(work: (gateway: (typeof gateways)[number]) => Promise<T>): Promise<T> {
    const start = next++ % gateways.length;
    const order = gateways.map((_, i) => gateways[(start + i) % gateways.length]);
    const now = Date.now();
    let lastError: unknown;
    for (const gateway of [...order.filter((g) => g.downUntil <= now), ...order.filter((g) => g.downUntil > now)]) {
      try {
        return await work(gateway);
      } catch (err) {
        if (!unreachable(err)) throw err;
        gateway.downUntil = Date.now() + SKIP_MS;
        lastError = err;
      }
    }
    throw lastError;
  }

  return {
    execute({ query, variables, headers, clientIp }) {
      const sent = forwardedHeaders(
        {
          requestId: requestIdFrom(headers),
          clientIp,
          authorization: headerValue(headers, 'authorization'),
          userAgent: headerValue(headers, 'user-agent'),
        },
        hopSecret,
      );
      const idempotencyKey = headerValue(headers, IDEMPOTENCY_KEY_HEADER);
      if (idempotencyKey !== undefined) sent[IDEMPOTENCY_KEY_HEADER] = idempotencyKey;
      return withGateway((gateway) => postGraphQL(gateway.graphql, sent, { query, variables }));
    },
    subscribe({ query, variables, headers }) {
      const sent = {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...forwardedHeaders(
          {
            requestId: requestIdFrom(headers),
            clientIp: '',
            authorization: headerValue(headers, 'authorization'),
            streamTicket: headerValue(headers, STREAM_TICKET_HEADER),
          },
          hopSecret,
        ),
      };
      return withGateway(async (gateway) => {
        const abort = new AbortController();
        const res = await fetch(new URL('/graphql/stream', gateway.url), {
          method: 'POST',
          headers: sent,
          body: JSON.stringify({ query, variables }),
          signal: abort.signal,
        });
        if (!res.ok || !res.body || !res.headers.get('content-type')?.startsWith('text/event-stream'))
          return (await res.json()) as GraphQLResult;
        return graphqlSseResults(res.body, abort);
      });
    },
    async checks() {
      try {
        return await withGateway(async (gateway) => {
          const res = await fetch(new URL('/health/ready', gateway.url), { signal: AbortSignal.timeout(3000) });
          const body = (await res.json()) as Partial<ReadinessReport>;
          return {
            checks: { gateway: 'up', ...(body.checks ?? {}) },
            ...(body.details ? { details: body.details } : {}),
          };
        });
      } catch {
        return { gateway: 'down' };
      }
    },
  };
}

/**
 * The results of a GraphQL-over-SSE response (distinct connections mode: `next` events carry
 * results, `complete` ends). Read only as fast as the caller pulls, so backpressure reaches
 * the gateway.
 */
async function* graphqlSseResults(
  body: ReadableStream<Uint8Array>,
  abort: AbortController,
): AsyncGenerator<GraphQLResult> {
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const frame = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const event = /^event: ?(.*)$/m.exec(frame)?.[1];
        const data = [...frame.matchAll(/^data: ?(.*)$/gm)].map((m) => m[1]).join('\n');
        if (event === 'complete') return;
        if (event === 'next' && data) yield JSON.parse(data) as GraphQLResult;
      }
    }
  } finally {
    abort.abort();
  }
}
