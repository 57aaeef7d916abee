// The Apollo gateway: composes whatever subgraphs it is handed and serves the supergraph.
// It knows no particular subgraph: the entry point passes the list. Its parts: where the
// supergraph comes from (./supergraph-source.ts), readiness (./readiness.ts), the caller's
// context (./caller-context.ts), /graphql (./apollo-setup.ts) and the direct path (./direct-execution.ts).
import type { Router } from 'express';
import type { GraphQLFormattedError, GraphQLSchema } from 'graphql';
import type { Config } from '../lib/config';
import type { Checks, ReadinessReport } from '../lib/http-app';
import { ApiKeyExchange, EXCHANGE_API_KEY, exchangedToken } from '../lib/api-keys';
import type { IdempotencyStore } from '../lib/idempotency';
import type { Logger } from '../lib/logger';
import { operationLimits } from '../lib/operation-pipeline';
import { sharedExpensiveGate } from '../lib/kit/expensive';
import { headerValue, REQUEST_ID_HEADER, type Headers } from '../lib/request-context';
import { KeyMaterial, TokenVerifier } from '../lib/tokens';
import { apolloGateway } from './apollo-adapter';
import { apolloSetup } from './apollo-setup';
import { withSchemaBeside, ServedBeside } from './beside';
import type { CallerLog } from './caller-access';
import { callerContext } from './caller-context';
import { HttpDataSource, InProcessDataSource } from './data-sources';
import { directExecution } from './direct-execution';
import { subgraphsReadiness } from './readiness';
import { SubgraphEndpoint, supergraphSource } from './supergraph-source';

export type { Checks };
export type { SubgraphEndpoint };
export { supergraphSubgraphNames } from './supergraph-source';

export interface GatewayOptions {
  config: Config;
  logger: Logger;
  keys: KeyMaterial;
  subgraphs: SubgraphEndpoint[];
  /**
   * A supergraph file composed ahead of time (`npm run compose`), watched and reloaded when it
   * changes. Without it the gateway composes the subgraphs it is handed at start.
   */
  supergraphPath?: string;
  /** What is served beside the supergraph (the event stream's schema), shown in /graphql's schema too. */
  beside?: ServedBeside;
  /**
   * Idempotency-Key on mutations, kept in the shared events database (lib/idempotency.ts), and the
   * event log that says whether a caller may still have an answer (./caller-access.ts).
   */
  idempotency?: { store: IdempotencyStore; callers: CallerLog };
  /** API keys as bearer tokens, exchanged with auth through this gateway (lib/api-keys.ts). */
  apiKeys?: ApiKeyExchange;
}

export interface OperationRequest {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  headers: Headers;
  clientIp: string;
}

export interface OperationResult {
  data?: Record<string, unknown> | null;
  errors?: readonly GraphQLFormattedError[];
}

export interface Gateway {
  /** Runs one operation as if it had arrived over HTTP (one-process mode, no network hop). */
  execute(request: OperationRequest): Promise<OperationResult>;
  /** POST /graphql (and GET for the landing page is disabled). */
  router: Router;
  checks(): Promise<Checks>;
  /** The checks, with the figures the subgraphs give (e.g. `details.synthesis`). */
  readiness(): Promise<ReadinessReport>;
  /** The user of an `Authorization` this gateway has already verified, without checking it again (lib/tokens.ts `known`). */
  knownUser(authorization: string | undefined): string | undefined;
  stop(): Promise<void>;
}

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, logger, subgraphs } = options;
  const byName = new Map(subgraphs.map((s) => [s.name, s]));
  const supergraphSdl = await supergraphSource({
    subgraphs,
    supergraphPath: options.supergraphPath,
    hopSecret: config.SUBGRAPH_SECRET,
    logger,
  });
  const verifier = new TokenVerifier(options.keys, options.config.JWT_ISSUER);

  // Apollo's gateway sends usage metrics to Apollo's servers unless told not to; this service
  // calls no one outside its own deployment.
  process.env.APOLLO_TELEMETRY_DISABLED = 'true';
  const {
    gateway,
    plans,
    served: fast,
  } = apolloGateway({
    supergraphSdl,
    buildService: ({ name }) => {
      const endpoint = byName.get(name);
      // Checked before: a supergraph naming an unknown subgraph is refused (./supergraph-source.ts).
      if (!endpoint) throw new Error(`no address for the subgraph ${name} (SUBGRAPH_URLS)`);
      if ('local' in endpoint) return new InProcessDataSource(endpoint.local);
      // Addresses come from configuration, so one supergraph file serves every deployment.
      return new HttpDataSource(name, endpoint.url, config.SUBGRAPH_SECRET);
    },
  });
  // The API schema, for the operation limits (checked before Apollo validates and plans).
  let apiSchema: GraphQLSchema | undefined;
  const served = options.beside ? withSchemaBeside(fast, options.beside) : fast;
  served.onSchemaLoadOrUpdate(({ apiSchema: next }) => (apiSchema = next));

  const contextFor = callerContext(verifier, logger, options.apiKeys);
  // Before the gateway loads, so that it hears of the first schema. The one operation pipeline:
  // the direct path runs all of it; Apollo Server runs its steps through ./apollo-adapter.ts.
  const direct = directExecution(gateway, {
    logger,
    metrics: config.METRICS_ENABLED,
    maxResponseBytes: config.GRAPHQL_MAX_RESPONSE_BYTES,
    plans,
    limits: operationLimits(config),
    // A user already verified here whose expensive slots are all taken (the subgraphs of this
    // process hold them) is refused before the operation is looked at (issue 41 finding 2).
    early: {
      gate: sharedExpensiveGate(config),
      userOf: ({ caller }) =>
        'context' in caller
          ? (caller.context.principal?.userId ?? undefined)
          : verifier.known(headerValue(caller.headers, 'authorization'))?.userId,
      maxTokens: config.GRAPHQL_MAX_TOKENS,
    },
    contextFor,
    idempotency: options.idempotency,
  });
  // The exchange is one mutation of auth's, run on this gateway's direct path (no key: no exchange again).
  options.apiKeys?.connect((key, clientIp, requestId) =>
    direct
      .run({ query: EXCHANGE_API_KEY, variables: { key } }, { headers: { [REQUEST_ID_HEADER]: requestId }, clientIp })
      .then(exchangedToken),
  );
  const apollo = await apolloSetup({
    config,
    logger,
    gateway: served,
    apiSchema: () => apiSchema,
    pipeline: direct.pipeline,
    contextFor,
  });

  const readiness = () => subgraphsReadiness(subgraphs);
  return {
    router: apollo.router,
    execute: ({ query, variables, operationName, headers, clientIp }) =>
      direct.run({ query, variables, operationName }, { headers, clientIp }),
    checks: () => readiness().then((r) => r.checks),
    knownUser: (authorization: string | undefined) => verifier.known(authorization)?.userId,
    readiness,
    stop: () => apollo.stop(),
  };
}
