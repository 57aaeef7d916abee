// How the gateway reaches a subgraph: over HTTP (distributed) or by executing its schema
// in this process (one-process mode). Both pass the same headers, and in both the
// subgraph builds its own context, verifying the token itself.
import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { postGraphQL } from '../lib/http-client';
import type { Logger } from '../lib/logger';
import { secondsSince, subgraphRequestDuration } from '../lib/metrics';
import { forwardedHeaders, HOP_SECRET_HEADER } from '../lib/request-context';
import type { RunningSubgraph } from '../lib/subgraph';
import type { Principal } from '../lib/tokens';

export interface GatewayContext {
  requestId: string;
  clientIp: string;
  authorization?: string;
  /** The verified principal of `authorization`, handed to in-process subgraphs so they need not verify again. */
  principal?: Principal;
  userAgent?: string;
  /** This operation's id on each of its subgraph requests: budgets per operation (lib/operation-budget.ts). */
  operationId?: string;
  /** The caller's Idempotency-Key (lib/idempotency.ts): the gateway's own, never passed to subgraphs. */
  idempotencyKey?: string;
  logger: Logger;
}

/** Times a subgraph fetch (graphql_subgraph_request_duration_seconds). */
async function timed<T extends { errors?: readonly unknown[] }>(subgraph: string, fetch: () => Promise<T>): Promise<T> {
  const start = process.hrtime.bigint();
  let outcome = 'error';
  try {
    const response = await fetch();
    if (!response.errors?.length) outcome = 'ok';
    return response;
  } finally {
    subgraphRequestDuration.observe({ subgraph, outcome }, secondsSince(start));
  }
}

/**
 * The caller's headers for the subgraph; schema loading and health checks carry no caller. The
 * hop secret goes on every request that crosses HTTP.
 */
const callerHeaders = (
  context: GraphQLDataSourceProcessOptions<GatewayContext>['context'],
  hopSecret: string | undefined,
): Record<string, string> =>
  context?.requestId
    ? forwardedHeaders(context as GatewayContext, hopSecret)
    : hopSecret
      ? { [HOP_SECRET_HEADER]: hopSecret }
      : {};

/**
 * A subgraph across HTTP: the fetch as one JSON POST on lib/http-client.ts's keep-alive
 * connections, with the caller's headers. Apollo's RemoteGraphQLDataSource built fetch
 * `Request`/`Headers` objects per fetch (a few per cent of the gateway) for options not used
 * here (persisted queries, cache hints).
 */
export class HttpDataSource implements GraphQLDataSource<GatewayContext> {
  private readonly url: URL;
  private readonly span: { name: string; attributes: Record<string, string> };

  constructor(
    private readonly subgraphName: string,
    url: string,
    private readonly hopSecret: string | undefined,
  ) {
    this.url = new URL(url);
    this.span = { name: `fetch ${subgraphName}`, attributes: { 'subgraph.name': subgraphName } };
  }

  process({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>) {
    const body = { query: request.query, variables: request.variables, operationName: request.operationName };
    // In a sampled trace the request is the fetch's span (`fetch <subgraph>`, as Apollo Router's).
    return timed(this.subgraphName, () =>
      postGraphQL(this.url, callerHeaders(context, this.hopSecret), body, this.span),
    );
  }
}

/** A subgraph in this process: its own executor, called with the gateway's verified principal. */
export class InProcessDataSource implements GraphQLDataSource<GatewayContext> {
  constructor(private readonly subgraph: RunningSubgraph) {}

  process(options: GraphQLDataSourceProcessOptions<GatewayContext>) {
    const { request } = options;
    // Apollo's union types some kinds' context as any: every fetch of ours carries a GatewayContext.
    const context = options.context as GatewayContext;
    // Nothing crosses HTTP: no secret; the address is passed as it is.
    const caller = {
      headers: callerHeaders(context, undefined),
      clientIp: context?.clientIp ?? '127.0.0.1',
      verified: context?.principal,
    };
    return timed(this.subgraph.name, async () => {
      const { operation: _operation, ...answer } = await this.subgraph.execute(
        { query: request.query!, variables: request.variables, operationName: request.operationName },
        caller,
      );
      return answer;
    });
  }
}
