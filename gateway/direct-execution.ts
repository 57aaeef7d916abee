// The facade's operations in one process: handed straight to the gateway's executor (query plan,
// subgraph fetches), skipping Apollo Server's request pipeline. That pipeline hashed the query
// text, ran the plugin hooks and computed a cache policy on every call: about a tenth of the CPU
// of a session read (issue 14's profile). What it did that still matters is done here: parse
// and validate (once per text and schema), error formatting, operation metrics and the
// response size cap. Operations from clients over HTTP still go through Apollo Server.
//
// An operation whose plan is one fetch from one subgraph, with nothing for the gateway to add or
// reshape, is sent to that subgraph as planned and its answer returned as it is (SingleFetchPlans):
// the executor turned the document into its own operation form, walked the plan and copied the
// answer into a new object on every call, about a tenth of a session read's CPU again.
import { createHash } from 'node:crypto';
import type { ApolloGateway, Experimental_DidResolveQueryPlanCallback, GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { DocumentNode, getOperationAST, GraphQLError, GraphQLFormattedError, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import { normalizeError } from '../lib/graphql-errors';
import type { Logger } from '../lib/logger';
import { observeOperation, secondsSince } from '../lib/metrics';
import { jsonExceeds, responseTooLarge } from '../lib/response-size';
import { DocumentCache, GatewayContext } from './data-sources';

type QueryPlan = Parameters<Experimental_DidResolveQueryPlanCallback>[0]['queryPlan'];
type FetchNode = Extract<NonNullable<QueryPlan['node']>, { kind: 'Fetch' }>;

interface SingleFetch {
  fetch: FetchNode;
  dataSource: GraphQLDataSource<GatewayContext>;
}

/** The fetch of a plan that is a single fetch whose answer needs no shaping by the gateway. */
export function singleFetch(plan: QueryPlan): FetchNode | undefined {
  const node = plan.node;
  if (node?.kind !== 'Fetch') return undefined;
  if (node.requires || node.hasDefers || node.inputRewrites?.length || node.outputRewrites?.length || node.contextRewrites?.length) return undefined;
  // The planner adds __typename where the gateway needs it to shape the answer (abstract types,
  // entities) and then removes it; a client's own __typename goes the usual way too.
  if (node.operation.includes('__typename')) return undefined;
  return node;
}

/**
 * The single-fetch plans of the documents the executor has run, told by the gateway
 * (`experimental_didResolveQueryPlan`, called with every plan it executes). Keyed by document:
 * documents are parsed again for a new supergraph, so a plan never outlives its supergraph.
 */
export class SingleFetchPlans {
  private readonly byDocument = new WeakMap<DocumentNode, SingleFetch | null>();

  readonly record: Experimental_DidResolveQueryPlanCallback = ({ queryPlan, serviceMap, requestContext }) => {
    if (this.byDocument.has(requestContext.document)) return;
    const fetch = singleFetch(queryPlan);
    const dataSource = fetch && (serviceMap[fetch.serviceName] as GraphQLDataSource<GatewayContext> | undefined);
    this.byDocument.set(requestContext.document, fetch && dataSource ? { fetch, dataSource } : null);
  };

  get(document: DocumentNode): SingleFetch | undefined {
    return this.byDocument.get(document) ?? undefined;
  }
}

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
  let passThrough = false;
  const prepared = new WeakMap<DocumentNode, Prepared>();
  // A new supergraph: documents are validated again against it.
  gateway.onSchemaLoadOrUpdate(({ apiSchema, coreSupergraphSdl }) => {
    schema = apiSchema;
    documents = new DocumentCache(apiSchema);
    // The gateway removes @inaccessible enum values from answers; a subgraph's answer would keep them.
    passThrough = Boolean(plans) && !/@inaccessible\b/.test(coreSupergraphSdl);
  });

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
        const single = passThrough ? plans!.get(entry.document) : undefined;
        let response: { data?: Record<string, unknown> | null; errors?: readonly (GraphQLError | GraphQLFormattedError)[] };
        try {
          response = single ? await sendSingleFetch(single, requestContext, contextValue) : await gateway.executor(requestContext);
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
          result = { errors: [normalizeError(e.toJSON(), e)] };
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

/** The planned fetch, sent as the executor sends it: the variables it uses, the request's context. */
async function sendSingleFetch({ fetch, dataSource }: SingleFetch, requestContext: Parameters<ApolloGateway['executor']>[0], context: GatewayContext) {
  const provided = requestContext.request.variables;
  const variables: Record<string, unknown> = Object.create(null);
  for (const name of fetch.variableUsages ?? []) {
    if (provided && Object.hasOwn(provided, name) && provided[name] !== undefined) variables[name] = provided[name];
  }
  const response = await dataSource.process({
    kind: 'incoming operation',
    request: { query: fetch.operation, variables, operationName: fetch.operationName },
    incomingRequestContext: requestContext,
    context,
    document: fetch.operationDocumentNode,
    pathInIncomingRequest: [],
  } as unknown as GraphQLDataSourceProcessOptions<GatewayContext>);
  return { data: response.data ?? null, errors: response.errors };
}

/** A plain thrown value (a data source's) as a GraphQL error that keeps it as its cause. */
function asGraphQLError(err: unknown): GraphQLError {
  if (err instanceof GraphQLError) return err;
  const cause = err instanceof Error ? err : new Error(String(err));
  return new GraphQLError(cause.message, { originalError: cause });
}

/** An error of the executor, or one a subgraph sent (already formatted), as the caller gets it. */
function formatError(err: unknown, logger: Logger) {
  if (isFormatted(err)) return normalizeError(err, err, logger);
  const e = asGraphQLError(err);
  return normalizeError(e.toJSON(), e, logger);
}

const isFormatted = (err: unknown): err is GraphQLFormattedError =>
  !(err instanceof Error) && typeof (err as GraphQLFormattedError | undefined)?.message === 'string';
