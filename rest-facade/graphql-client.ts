// How the facade reaches the gateway: a function call in one process, HTTP otherwise.
// Either way the facade only ever sends GraphQL operations.
import type { GraphQLFormattedError } from 'graphql';
import { forwardedHeaders, Headers, headerValue, requestIdFrom } from '../lib/request-context';

export interface GraphQLResult {
  data?: Record<string, any> | null;
  errors?: readonly GraphQLFormattedError[];
}

export interface GraphQLClient {
  execute(request: { query: string; variables?: Record<string, unknown>; headers: Headers; clientIp: string }): Promise<GraphQLResult>;
  /** Readiness of everything behind the gateway: `{ database: 'up', auth: 'up', … }`. */
  checks(): Promise<Record<string, 'up' | 'down'>>;
}

export function httpGraphQLClient(gatewayUrl: string): GraphQLClient {
  const graphqlUrl = new URL('/graphql', gatewayUrl);
  return {
    async execute({ query, variables, headers, clientIp }) {
      const res = await fetch(graphqlUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...forwardedHeaders({ requestId: requestIdFrom(headers), clientIp, authorization: headerValue(headers, 'authorization') }),
        },
        body: JSON.stringify({ query, variables }),
      });
      return (await res.json()) as GraphQLResult;
    },
    async checks() {
      try {
        const res = await fetch(new URL('/health/ready', gatewayUrl), { signal: AbortSignal.timeout(3000) });
        const body = (await res.json()) as { checks?: Record<string, 'up' | 'down'> };
        return { gateway: 'up', ...(body.checks ?? {}) };
      } catch {
        return { gateway: 'down' };
      }
    },
  };
}
