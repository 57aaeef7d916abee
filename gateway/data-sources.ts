// How the gateway reaches a subgraph: over HTTP (distributed) or by executing its schema
// in this process (one-process mode). Both pass the same headers, and in both the
// subgraph builds its own context, verifying the token itself.
import { GraphQLDataSource, GraphQLDataSourceProcessOptions, RemoteGraphQLDataSource } from '@apollo/gateway';
import { DocumentNode, execute, GraphQLError, GraphQLSchema, parse, validate } from 'graphql';
import { normalizeError } from '../lib/graphql-errors';
import { postAsFetch } from '../lib/http-client';
import type { Logger } from '../lib/logger';
import { secondsSince, subgraphRequestDuration } from '../lib/metrics';
import { forwardedHeaders } from '../lib/request-context';
import type { RunningSubgraph } from '../lib/subgraph';
import type { Principal } from '../lib/tokens';

export interface GatewayContext {
  requestId: string;
  clientIp: string;
  authorization?: string;
  /** The verified principal of `authorization`, handed to in-process subgraphs so they need not verify again. */
  principal?: Principal;
  userAgent?: string;
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

export class ForwardingDataSource extends RemoteGraphQLDataSource<GatewayContext> {
  constructor(config: ConstructorParameters<typeof RemoteGraphQLDataSource<GatewayContext>>[0], private readonly subgraphName: string) {
    // Apollo's default fetch (make-fetch-happen: cache and retry layers, an Error built per
    // request to inspect a stack) took about a sixth of the gateway's CPU; see lib/http-client.ts.
    super({ ...config, fetcher: postAsFetch as unknown as RemoteGraphQLDataSource['fetcher'] });
  }

  override process(options: GraphQLDataSourceProcessOptions<GatewayContext>) {
    return timed(this.subgraphName, () => super.process(options));
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>) {
    if (!context?.requestId) return; // schema loading and health checks carry no caller
    for (const [name, value] of Object.entries(forwardedHeaders(context as GatewayContext))) request.http?.headers.set(name, value);
  }
}

/** Parsed and validated documents, keyed by text: callers send few distinct ones. */
export class DocumentCache {
  private readonly docs = new Map<string, DocumentNode | readonly GraphQLError[]>();
  constructor(private readonly schema: GraphQLSchema, private readonly max = 2000) {}

  get(source: string): DocumentNode | readonly GraphQLError[] {
    let doc = this.docs.get(source);
    if (!doc) {
      try {
        const parsed = parse(source);
        const errors = validate(this.schema, parsed);
        doc = errors.length ? errors : parsed;
      } catch (err) {
        doc = [err as GraphQLError];
      }
      if (this.docs.size >= this.max) this.docs.delete(this.docs.keys().next().value!);
      this.docs.set(source, doc);
    }
    return doc;
  }
}

export class InProcessDataSource implements GraphQLDataSource<GatewayContext> {
  private readonly documents: DocumentCache;

  constructor(private readonly subgraph: RunningSubgraph) {
    this.documents = new DocumentCache(subgraph.schema);
  }

  process(options: GraphQLDataSourceProcessOptions<GatewayContext>) {
    return timed(this.subgraph.name, () => this.execute(options));
  }

  private async execute({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>) {
    const doc = this.documents.get(request.query!);
    const logger = context?.logger;
    if (!('kind' in doc)) return { errors: doc.map((e) => normalizeError(e.toJSON(), e, logger)) };
    const headers = context?.requestId ? forwardedHeaders(context as GatewayContext) : {};
    const contextValue = await this.subgraph.createContext({ headers, clientIp: context?.clientIp ?? '127.0.0.1', verified: context?.principal });
    const result = await execute({
      schema: this.subgraph.schema,
      document: doc,
      variableValues: request.variables,
      operationName: request.operationName,
      contextValue,
    });
    return {
      data: result.data as Record<string, unknown> | null | undefined,
      ...(result.errors ? { errors: result.errors.map((e) => normalizeError(e.toJSON(), e, contextValue.logger)) } : {}),
    };
  }
}
