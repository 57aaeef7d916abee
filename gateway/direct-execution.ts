// The facade's operations in one process: the operation pipeline (lib/operation-pipeline) with
// the gateway's executor (query plan, subgraph fetches) as its execute step, skipping Apollo
// Server's request pipeline. That pipeline hashed the query text, ran the plugin hooks and
// computed a cache policy on every call: about a tenth of the CPU of a session read (issue 14's
// profile). Operations from clients over HTTP still go through Apollo Server, which runs the same
// steps through ./apollo-adapter.ts. Plans of a single fetch go straight to their subgraph
// (./single-fetch.ts).
import type { ApolloGateway } from '@apollo/gateway';
import { buildASTSchema, GraphQLSchema, OperationTypeNode, parse } from 'graphql';
import { DocumentCache } from '../lib/document-cache';
import type { IdempotencyStore } from '../lib/idempotency';
import type { Logger } from '../lib/logger';
import {
  ExpensiveEarlyParts,
  FormattedResult,
  Operation,
  OperationLimits,
  operationPipeline,
  OperationRequest,
} from '../lib/operation-pipeline';
import { Headers, headerValue } from '../lib/request-context';
import { executeOnGateway, executorRequestContext } from './apollo-adapter';
import { callerAccess, type CallerLog } from './caller-access';
import type { GatewayContext } from './data-sources';
import type { SingleFetchPlans } from './single-fetch';

/** Who calls: a context made already, or a request's headers and address (the principal step makes the context). */
export type DirectCaller = { context: GatewayContext } | { headers: Headers; clientIp: string };

export interface DirectExecutionOptions {
  logger: Logger;
  /** The gateway's single-fetch plans, when it reports them; without, every operation goes through its executor. */
  plans?: SingleFetchPlans;
  metrics: boolean;
  maxResponseBytes: number;
  /** The operation limits (the gateway's own callers); none where the caller is trusted (tests). */
  limits?: OperationLimits;
  /** The context of a caller known by its headers (the gateway verifies the token). */
  contextFor?: (headers: Headers, clientIp: string) => Promise<GatewayContext>;
  /**
   * Idempotency-Key on mutations (lib/idempotency.ts), and the event log that says whether the
   * caller may still have the answer (./caller-access.ts); without, the header is ignored.
   */
  idempotency?: { store: IdempotencyStore; callers: CallerLog };
  /** The early refusal of expensive fields (lib/operation-pipeline/expensive-early.ts), where they run in this process. */
  early?: ExpensiveEarlyParts<DirectCaller, GatewayContext>;
}

/** Queries and mutations: subscriptions are /graphql/stream's. */
export const DIRECT_KINDS = [OperationTypeNode.QUERY, OperationTypeNode.MUTATION];

export function directExecution(gateway: ApolloGateway, options: DirectExecutionOptions) {
  const { logger, metrics, maxResponseBytes, plans, limits, contextFor, idempotency, early } = options;
  let schema: GraphQLSchema | undefined;
  let documents: DocumentCache | undefined;
  // What each field needs is declared in the supergraph (its scope directives), not in the API
  // schema; built when first asked (an Idempotency-Key's check of the caller).
  let supergraphSdl: string | undefined;
  let needs: GraphQLSchema | undefined;
  // A new supergraph: documents are validated again against it.
  gateway.onSchemaLoadOrUpdate(({ apiSchema, coreSupergraphSdl }) => {
    schema = apiSchema;
    documents = new DocumentCache(apiSchema);
    supergraphSdl = coreSupergraphSdl;
    needs = undefined;
  });
  const needsSchema = () =>
    (needs ??= supergraphSdl
      ? buildASTSchema(parse(supergraphSdl), { assumeValid: true, assumeValidSDL: true })
      : undefined);
  const access = idempotency && callerAccess(idempotency.callers);
  const executor: ApolloGateway['executor'] = (requestContext) => gateway.executor(requestContext);

  const pipeline = operationPipeline<DirectCaller, GatewayContext>({
    early,
    limits: limits && {
      limits,
      authenticated: ({ caller }) =>
        Boolean('context' in caller ? caller.context.authorization : headerValue(caller.headers, 'authorization')),
    },
    documents: () => documents,
    principal: ({ caller }) => {
      if ('context' in caller) return caller.context;
      if (!contextFor) throw new Error('directExecution: a caller by headers needs contextFor');
      return contextFor(caller.headers, caller.clientIp);
    },
    execute: (op) => executeOnGateway(executor, executorRequestContext(op, op.schema!, logger), plans),
    maxResponseBytes,
    metrics,
    idempotency: idempotency && {
      store: idempotency.store,
      needs: needsSchema,
      access: (op) => access!(op.context?.principal ?? undefined),
    },
  });

  async function run(request: OperationRequest, caller: DirectCaller): Promise<FormattedResult> {
    const op = await pipeline.run(new Operation(request, caller, schema, DIRECT_KINDS, logger));
    return op.answer;
  }

  return {
    pipeline,
    run,
    /** One operation of a caller whose context is made (one process: the gateway's own). */
    execute: (query: string, variables: Record<string, unknown> | undefined, context: GatewayContext) =>
      run({ query, variables }, { context }),
  };
}
