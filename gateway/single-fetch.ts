// Operations whose query plan is one fetch from one subgraph, with nothing for the gateway to add
// or reshape: sent to that subgraph as planned, and its answer returned as it is. Apollo's
// executor turned the document into its own operation form, walked the plan and copied the
// answer into a new object on every call: about a tenth of the CPU of a session read (issue 14).
// Apollo's planner still plans every operation; every other plan goes through its executor.
import type {
  Experimental_DidResolveQueryPlanCallback,
  GraphQLDataSource,
  GraphQLDataSourceProcessOptions,
} from '@apollo/gateway';
import type { GatewayExecutor, GatewayInterface } from '@apollo/server-gateway-interface';
import { GraphQLError, GraphQLFormattedError, GraphQLSchema, Kind, OperationDefinitionNode } from 'graphql';
import { getVariableValues } from 'graphql/execution/values';
import type { GatewayContext } from './data-sources';

type QueryPlan = Parameters<Experimental_DidResolveQueryPlanCallback>[0]['queryPlan'];
type FetchNode = Extract<NonNullable<QueryPlan['node']>, { kind: 'Fetch' }>;
type RequestContext = Parameters<GatewayExecutor>[0];

interface SingleFetch {
  fetch: FetchNode;
  dataSource: GraphQLDataSource<GatewayContext>;
}

/** The fetch of a plan that is a single fetch whose answer needs no shaping by the gateway. */
export function singleFetch(plan: QueryPlan): FetchNode | undefined {
  const node = plan.node;
  if (node?.kind !== 'Fetch') return undefined;
  if (
    node.requires ||
    node.hasDefers ||
    node.inputRewrites?.length ||
    node.outputRewrites?.length ||
    node.contextRewrites?.length
  )
    return undefined;
  // The planner adds __typename where the gateway needs it to shape the answer (abstract types,
  // entities) and then removes it; a client's own __typename goes the usual way too.
  if (node.operation.includes('__typename')) return undefined;
  return node;
}

/**
 * Root fields only, none of them the gateway's own: it answers a root `__typename`, `__schema` and
 * `__type` itself and adds them to the subgraph's answer, so such operations go to its executor
 * (so do root fragments, rather than looking inside them).
 */
const plainRoot = (operation: OperationDefinitionNode) =>
  operation.selectionSet.selections.every((s) => s.kind === Kind.FIELD && !s.name.value.startsWith('__'));

/**
 * The single-fetch plans of the operations the gateway has executed, as it reports them
 * (`record`, for ApolloGateway's `experimental_didResolveQueryPlan`, called with every plan it
 * executes). Keyed by the operation's node in its parsed document: one document may hold several
 * operations, and documents are parsed again for a new supergraph, so a plan never outlives it.
 */
export class SingleFetchPlans {
  private readonly byOperation = new WeakMap<OperationDefinitionNode, SingleFetch | null>();
  private apiSchema?: GraphQLSchema;
  private enabled = false;

  readonly record: Experimental_DidResolveQueryPlanCallback = ({ queryPlan, serviceMap, requestContext }) => {
    const operation = requestContext.operation as OperationDefinitionNode | undefined;
    if (!operation || this.byOperation.has(operation)) return;
    const fetch = plainRoot(operation) ? singleFetch(queryPlan) : undefined;
    const dataSource = fetch && (serviceMap[fetch.serviceName] as GraphQLDataSource<GatewayContext> | undefined);
    this.byOperation.set(operation, fetch && dataSource ? { fetch, dataSource } : null);
  };

  /** Hears of each supergraph: the gateway removes @inaccessible enum values from answers, a subgraph's answer would keep them. */
  follow(gateway: Pick<GatewayInterface, 'onSchemaLoadOrUpdate'>): void {
    gateway.onSchemaLoadOrUpdate(({ apiSchema, coreSupergraphSdl }) => {
      this.apiSchema = apiSchema;
      this.enabled = !/@inaccessible\b/.test(coreSupergraphSdl);
    });
  }

  /** Runs the operation: its single fetch when it has one, else `executor` (the gateway's). */
  execute(requestContext: RequestContext, executor: GatewayExecutor): ReturnType<GatewayExecutor> {
    const operation = requestContext.operation as OperationDefinitionNode | undefined;
    const single = this.enabled && operation ? this.byOperation.get(operation) : undefined;
    if (!single) return executor(requestContext);
    // What the executor checks first: variables that do not fit their types are refused before any fetch.
    const definitions = operation!.variableDefinitions;
    if (definitions?.length) {
      const { errors } = getVariableValues(this.apiSchema!, definitions, requestContext.request.variables ?? {});
      if (errors) return Promise.resolve({ errors });
    }
    return send(single, requestContext);
  }
}

/** The gateway as Apollo Server takes it, its executor sending single fetches straight. */
export function withSingleFetches(gateway: GatewayInterface, plans: SingleFetchPlans): GatewayInterface {
  return {
    onSchemaLoadOrUpdate: (callback) => gateway.onSchemaLoadOrUpdate(callback),
    stop: () => gateway.stop(),
    async load(options) {
      const loaded = await gateway.load(options);
      const { executor } = loaded;
      return { ...loaded, executor: executor && ((requestContext) => plans.execute(requestContext, executor)) };
    },
  };
}

/**
 * The planned fetch, sent as the executor sends it: the variables it uses, the request's context.
 * Errors come back as the executor makes them (a GraphQLError naming the subgraph), so that
 * everything after it sees the same.
 */
async function send({ fetch, dataSource }: SingleFetch, requestContext: RequestContext) {
  const provided = requestContext.request.variables;
  const variables = Object.create(null) as Record<string, unknown>;
  for (const name of fetch.variableUsages ?? []) {
    if (provided && Object.hasOwn(provided, name) && provided[name] !== undefined) variables[name] = provided[name];
  }
  let response;
  try {
    response = await dataSource.process({
      kind: 'incoming operation',
      request: { query: fetch.operation, variables, operationName: fetch.operationName },
      incomingRequestContext: requestContext,
      context: requestContext.context as GatewayContext,
      document: fetch.operationDocumentNode,
      pathInIncomingRequest: [],
    } as unknown as GraphQLDataSourceProcessOptions<GatewayContext>);
  } catch (err) {
    // As the executor: a fetch that failed (the subgraph unreachable, a non-2xx answer) is an error
    // of the operation, not of the request.
    const e = err instanceof Error ? err : new Error(String(err));
    return { data: null, errors: [downstreamError({ message: e.message }, fetch.serviceName, e)] };
  }
  const errors = response.errors?.map((e) => downstreamError(e, fetch.serviceName));
  return { data: response.data ?? null, ...(errors ? { errors } : {}) };
}

/** A subgraph's error (or a failed fetch's, `cause`) as the executor makes it. */
const downstreamError = (e: GraphQLFormattedError, serviceName: string, cause: unknown = e) =>
  new GraphQLError(e.message || `Error while fetching subquery from service "${serviceName}"`, {
    originalError: cause as Error,
    path: e.path,
    // The executor's code for an error that came without one.
    extensions: { ...(e.extensions?.code ? {} : { code: 'DOWNSTREAM_SERVICE_ERROR' }), ...e.extensions, serviceName },
  });
