// How the facade reaches the gateway: a function call in one process, HTTP otherwise.
// Either way the facade only ever sends GraphQL operations.
import type { GraphQLFormattedError } from 'graphql';
import type { Checks } from '../lib/http-app';
import { forwardedHeaders, Headers, headerValue, requestIdFrom } from '../lib/request-context';

export interface GraphQLResult {
  data?: Record<string, any> | null;
  errors?: readonly GraphQLFormattedError[];
}

export interface GraphQLClient {
  execute(request: { query: string; variables?: Record<string, unknown>; headers: Headers; clientIp: string }): Promise<GraphQLResult>;
  /** Readiness of everything behind the gateway: `{ database: 'up', auth: 'up', … }`. */
  checks(): Promise<Checks>;
}

/** No connection could be made: the request never reached that gateway, so another may safely take it. */
const unreachable = (err: unknown) =>
  ['ECONNREFUSED', 'EHOSTUNREACH'].includes(((err as { cause?: { code?: string } })?.cause?.code) ?? '');

/** How long a gateway that refused a connection is skipped. */
const SKIP_MS = 2000;

/** The gateways at these URLs, taken in turn; one that refuses connections is skipped for a moment. */
export function httpGraphQLClient(gatewayUrls: string[]): GraphQLClient {
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
      const body = JSON.stringify({ query, variables });
      const sent = {
        'content-type': 'application/json',
        ...forwardedHeaders({ requestId: requestIdFrom(headers), clientIp, authorization: headerValue(headers, 'authorization') }),
      };
      return withGateway(async (gateway) => {
        const res = await fetch(gateway.graphql, { method: 'POST', headers: sent, body });
        return (await res.json()) as GraphQLResult;
      });
    },
    async checks() {
      try {
        return await withGateway(async (gateway) => {
          const res = await fetch(new URL('/health/ready', gateway.url), { signal: AbortSignal.timeout(3000) });
          const body = (await res.json()) as { checks?: Checks };
          return { gateway: 'up', ...(body.checks ?? {}) } as Checks;
        });
      } catch {
        return { gateway: 'down' };
      }
    },
  };
}
