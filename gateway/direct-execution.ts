// The facade's operations in one process: handed straight to the gateway's executor (query plan,
// subgraph fetches), skipping Apollo Server's request pipeline. That pipeline hashed the query
// text, ran the plugin hooks and computed a cache policy on every call: about a tenth of the CPU
// of a session read (issue 14's profile). What it did that still matters is done here: parse
// and validate (once per text and schema), error formatting, operation metrics and the
// response size cap. Operations from clients over HTTP still go through Apollo Server.
// Plans of a single fetch go straight to their subgraph (./single-fetch.ts).
import { createHash } from 'node:crypto';
import type { ApolloGateway } from '@apollo/gateway';
import { DocumentNode, getOperationAST, GraphQLError, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import { errorResult, normalizeError } from '../lib/graphql-errors';
import type { Logger } from '../lib/logger';
import { observeOperation, secondsSince } from '../lib/metrics';
import { jsonExceeds, responseTooLarge } from '../lib/response-size';
import { DocumentCache } from '../lib/document-cache';
import type { GatewayContext } from './data-sources';
import type { SingleFetchPlans } from './single-fetch';

interface Prepared {
  document: DocumentNode;
  operation: OperationDefinitionNode;
  queryHash: string;
}

export interface DirectExecutionOptions {
  logger: Logger;
  /** The gateway's single-fetch plans, when it reports them; without, every operation goes through its executor. */
  plans?: SingleFetchPlans;
  metrics: boolean;
  maxResponseBytes: number;
}

export function directExecution(gateway: ApolloGateway, { logger, metrics, maxResponseBytes, plans }: DirectExecutionOptions) {
  let schema: GraphQLSchema | undefined;
  let documents: DocumentCache | undefined;
  const prepared = new WeakMap<DocumentNode, Prepared>();
  // A new supergraph: documents are validated again against it.
  gateway.onSchemaLoadOrUpdate(({ apiSchema }) => {
    schema = apiSchema;
    documents = new DocumentCache(apiSchema);
  });
  const executor: ApolloGateway['executor'] = (requestContext) => gateway.executor(requestContext);

  function prepare(query: string): Prepared | readonly GraphQLError[] {
    const doc = documents!.get(query);
    if (!('kind' in doc)) return doc;
    let entry = prepared.get(doc);
    if (!entry) {
      const operation = getOperationAST(doc);
      if (!operation) return [new GraphQLError('The document must hold exactly one operation.')];
      entry = { document: doc, operation, queryHash: createHash('sha256').update(query).digest('hex') };
      prepared.set(doc, entry);
    }
    return entry;
  }

  return {
    async execute(query: string, variables: Record<string, unknown> | undefined, contextValue: GatewayContext) {
      const start = process.hrtime.bigint();
      const entry = schema ? prepare(query) : [new GraphQLError('The supergraph is not loaded yet.')];
      let result: { data?: Record<string, unknown> | null; errors?: ReturnType<typeof normalizeError>[] };
      if (!('document' in entry)) {
        result = { errors: entry.map((e) => formatError(e, contextValue.logger)) };
      } else {
        // The fields of Apollo Server's request context that the gateway's executor reads.
        const requestContext = {
          request: { query, variables },
          document: entry.document,
          operation: entry.operation,
          operationName: entry.operation.name?.value ?? null,
          queryHash: entry.queryHash,
          schema: schema!,
          context: contextValue,
          contextValue,
          logger,
          metrics: {},
        } as unknown as Parameters<ApolloGateway['executor']>[0];
        let response: Awaited<ReturnType<ApolloGateway['executor']>>;
        try {
          response = await (plans ? plans.execute(requestContext, executor) : executor(requestContext));
        } catch (err) {
          // Query planning throws; Apollo Server answers that as an error of the operation, so do
          // we: a rejection here would reach the facade as "gateway unreachable" (503, retry).
          response = { errors: [asGraphQLError(err)] };
        }
        result = {
          data: response.data as Record<string, unknown> | null | undefined,
          ...(response.errors?.length ? { errors: response.errors.map((e) => formatError(e, contextValue.logger)) } : {}),
        };
        if (jsonExceeds(result, maxResponseBytes)) {
          const e = responseTooLarge(maxResponseBytes);
          result = errorResult(e);
        }
      }
      if (metrics) {
        const code = result.errors?.[0]?.extensions?.code;
        const operation = 'document' in entry ? entry.operation : undefined;
        observeOperation(operation?.name?.value, operation?.operation, result.errors?.length ? String(code ?? 'error') : 'ok', secondsSince(start));
      }
      return result;
    },
  };
}

/** A plain thrown value (a data source's) as a GraphQL error that keeps it as its cause. */
function asGraphQLError(err: unknown): GraphQLError {
  if (err instanceof GraphQLError) return err;
  const cause = err instanceof Error ? err : new Error(String(err));
  return new GraphQLError(cause.message, { originalError: cause });
}

function formatError(err: unknown, logger: Logger) {
  const e = asGraphQLError(err);
  return normalizeError(e.toJSON(), e, logger);
}
