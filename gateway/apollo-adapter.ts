// Everything here that depends on Apollo's internals, in one place (test/gateway/apollo-adapter.cases.ts
// pins it, so that an Apollo upgrade that changes any of it fails a test):
// - the gateway's `experimental_didResolveQueryPlan`, which hands the plans to ./single-fetch.ts;
// - the request context that the direct path builds by hand for the gateway's executor (the
//   fields of Apollo Server's GraphQLRequestContext that the executor reads);
// - the Apollo Server plugin that runs the operation pipeline's after-steps on Apollo's answers;
// - the supergraph Apollo Gateway is handed: without the `for: SECURITY` of the @authenticated and
//   @requiresScopes links, which it refuses because it cannot enforce them (the subgraphs do:
//   lib/operation-pipeline). The published supergraph keeps them for every other tool.
import { createHash } from 'node:crypto';
import { ApolloGateway, GraphQLDataSource, SupergraphSdlHook } from '@apollo/gateway';
import { HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import type { GatewayInterface } from '@apollo/server-gateway-interface';
import type {
  DocumentNode,
  FormattedExecutionResult,
  GraphQLSchema,
  OperationDefinitionNode,
  OperationTypeNode,
} from 'graphql';
import type { Logger } from '../lib/logger';
import { enterOperationSpan, Operation, OperationResult, Pipeline } from '../lib/operation-pipeline';
import { formatError } from '../lib/operation-pipeline/errors';
import type { GatewayContext } from './data-sources';
import { SingleFetchPlans, withSingleFetches } from './single-fetch';

export type GatewayExecutor = ApolloGateway['executor'];
export type ExecutorRequestContext = Parameters<GatewayExecutor>[0];

/**
 * The gateway, its single-fetch plans (./single-fetch.ts, fed by `experimental_didResolveQueryPlan`),
 * and the gateway as Apollo Server takes it (its executor sending single fetches straight).
 */
export function apolloGateway(options: {
  supergraphSdl: string | SupergraphSdlHook;
  buildService: (service: { name: string }) => GraphQLDataSource;
}) {
  const plans = new SingleFetchPlans();
  const gateway = new ApolloGateway({
    supergraphSdl: forApolloGateway(options.supergraphSdl),
    experimental_didResolveQueryPlan: plans.record,
    buildService: options.buildService,
  });
  plans.follow(gateway);
  const served: GatewayInterface = withSingleFetches(gateway, plans);
  return { gateway, plans, served };
}

const SECURITY_LINK =
  /(@link\(url: "https:\/\/specs\.apollo\.dev\/(?:authenticated|requiresScopes)\/v[\d.]+"), for: SECURITY\)/g;

/** The supergraph as Apollo Gateway loads it: the security features' links without `for: SECURITY`. */
export function withoutSecurityPurpose(supergraphSdl: string): string {
  return supergraphSdl.replace(SECURITY_LINK, '$1)');
}

function forApolloGateway(source: string | SupergraphSdlHook): string | SupergraphSdlHook {
  if (typeof source === 'string') return withoutSecurityPurpose(source);
  return async (options) => {
    const loaded = await source({ ...options, update: (sdl) => options.update(withoutSecurityPurpose(sdl)) });
    return { ...loaded, supergraphSdl: withoutSecurityPurpose(loaded.supergraphSdl) };
  };
}

/**
 * The request context the gateway's executor is called with on the direct path: the fields of
 * Apollo Server's GraphQLRequestContext that it reads (the pinning test checks that it reads no
 * other). Apollo Server hashed the query text per request; here once per document.
 */
const hashes = new WeakMap<DocumentNode, string>();
export function executorRequestContext(
  op: {
    request: { query: string; variables?: Record<string, unknown> | null };
    document?: DocumentNode;
    operation?: OperationDefinitionNode;
    context?: GatewayContext;
  },
  schema: GraphQLSchema,
  logger: Logger,
): ExecutorRequestContext {
  const document = op.document!;
  let queryHash = hashes.get(document);
  if (!queryHash) hashes.set(document, (queryHash = createHash('sha256').update(op.request.query).digest('hex')));
  return {
    request: { query: op.request.query, variables: op.request.variables ?? undefined },
    document,
    operation: op.operation!,
    operationName: op.operation!.name?.value ?? null,
    queryHash,
    schema,
    context: op.context!,
    contextValue: op.context!,
    logger,
    metrics: {},
  } as unknown as ExecutorRequestContext;
}

/** Runs the direct path's operation on the gateway's executor, through its single-fetch plans when given. */
export function executeOnGateway(
  executor: GatewayExecutor,
  requestContext: ExecutorRequestContext,
  plans?: SingleFetchPlans,
): Promise<OperationResult> {
  return (plans ? plans.execute(requestContext, executor) : executor(requestContext)) as Promise<OperationResult>;
}

/**
 * The operation pipeline's after-steps (the answer-size cap, the metric) on Apollo Server's answers
 * to /graphql. Apollo itself parses, validates and executes there; the limits ran before it (an
 * Express middleware), the principal is its context function, and its `formatError` is the
 * pipeline's error step (lib/operation-pipeline/errors.ts). Each step still has its one module.
 */
export function pipelinePlugin(
  p: Pipeline<unknown, GatewayContext>,
  kinds: readonly OperationTypeNode[],
  logger: Logger,
): ApolloServerPlugin<GatewayContext> {
  // The Idempotency-Key claim (lib/operation-pipeline/idempotency.ts): before Apollo executes.
  const claimStep = p.steps.find((s) => s.name === 'idempotency');
  const claim = claimStep?.before && ((op: Operation<unknown, GatewayContext>) => claimStep.before!(op));
  return {
    async requestDidStart({ request }) {
      const op = new Operation<unknown, GatewayContext>(
        { query: request.query ?? '', variables: request.variables, operationName: request.operationName },
        undefined,
        undefined,
        kinds,
        logger,
      );
      // A sampled trace: the operation's span, which the fetches Apollo makes for it are children of.
      enterOperationSpan(op);
      return {
        async responseForOperation({ operation, document, contextValue }) {
          if (!claim) return null;
          op.document = document;
          op.operation = operation;
          op.context = contextValue;
          try {
            await claim(op);
          } catch (err) {
            op.result = { errors: [err] };
          }
          if (!op.result) return null;
          // A replay (formatted already) or a refusal, answered instead of the execution.
          const result = op.normalized
            ? op.result
            : { ...op.result, errors: op.result.errors?.map((e) => formatError(e, op.logger)) };
          return {
            http: { headers: new HeaderMap() },
            body: { kind: 'single', singleResult: result as FormattedExecutionResult },
          };
        },
        async willSendResponse({ response, operation, contextValue }) {
          if (response.body.kind !== 'single') return;
          op.operation = operation;
          op.context = contextValue;
          op.result = response.body.singleResult;
          op.normalized = true; // by formatError
          await p.finish(op);
          if (op.result !== response.body.singleResult) {
            // A step replaced the answer (a refusal): a request error's status.
            response.body.singleResult = op.result as typeof response.body.singleResult;
            response.http.status = 400;
          }
        },
      };
    },
  };
}
