// /graphql: Apollo Server with its plugins, behind the pipeline's limits, as an Express router.
import { ApolloServer, HeaderMap } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express, { NextFunction, Request, Response, Router } from 'express';
import type { GraphQLSchema } from 'graphql';
import type { GatewayInterface } from '@apollo/server-gateway-interface';
import type { Config } from '../lib/config';
import { AppError, ERROR_STATUS, errorHeaders } from '../lib/errors';
import { answerJson } from '../lib/json-text';
import { graphqlBodyError, normalizeError } from '../lib/graphql-errors';
import { hopClientAddress, hopJsonBody, HopSecret } from '../lib/hop';
import type { Logger } from '../lib/logger';
import { Operation, OperationStep, Pipeline } from '../lib/operation-pipeline';
import type { Headers } from '../lib/request-context';
import { pipelinePlugin } from './apollo-adapter';
import type { ContextFor } from './caller-context';
import type { GatewayContext } from './data-sources';
import { DIRECT_KINDS, DirectCaller } from './direct-execution';
import { explorer } from './explorer';
import { asksForLegacyJson, httpStatusPlugin } from './http-status';

/** What a request to /graphql asks, as far as the limits need it. */
interface GraphQLInput {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}

/** GET /graphql?query=…&variables=<JSON>: what Apollo would read, for the limits. */
function fromQueryString(query: Record<string, unknown>): GraphQLInput {
  let variables: unknown;
  try {
    variables = typeof query.variables === 'string' ? JSON.parse(query.variables) : undefined;
  } catch {
    variables = undefined; // Apollo answers bad JSON itself
  }
  return { query: query.query, operationName: query.operationName, variables };
}

export interface ApolloSetup {
  router: Router;
  stop(): Promise<void>;
}

export async function apolloSetup(options: {
  config: Config;
  logger: Logger;
  /** Apollo's gateway, with what is served beside the supergraph. */
  gateway: GatewayInterface;
  /** The API schema, for the operation limits (checked before Apollo validates and plans); undefined until loaded. */
  apiSchema: () => GraphQLSchema | undefined;
  /** The direct path's pipeline: its limits step runs before Apollo, its after-steps in Apollo's plugin. */
  pipeline: Pipeline<DirectCaller, GatewayContext>;
  contextFor: ContextFor;
}): Promise<ApolloSetup> {
  const { config, logger, pipeline, contextFor } = options;
  const hop = new HopSecret(config.SUBGRAPH_SECRET);
  const limitsStep = pipeline.steps.find((s) => s.name === 'limits') as OperationStep;
  // The early refusal of an expensive field from a user whose slots are taken, before the limits.
  const earlyStep = pipeline.steps.find((s) => s.name === 'expensive-early');

  const apollo = new ApolloServer<GatewayContext>({
    gateway: options.gateway,
    // The pipeline's error step, with what Apollo knows of the error (its code for parse and validation errors).
    formatError: (formatted, error) => normalizeError(formatted, error, logger),
    includeStacktraceInErrorResponses: false,
    // Apollo's own (JSON.stringify and a newline), with the texts of kept arrays put in as they are
    // (lib/plain-lists.ts: a whole hub's typed nodes and edges are not serialised again per query).
    stringifyResult: (result) => `${answerJson(result)}\n`,
    introspection: config.introspection,
    // "Did you mean …?" in validation errors reveals the schema as well as introspection does.
    hideSchemaDetailsFromClientErrors: !config.introspection,
    plugins: [
      // Apollo's landing page loads Apollo Sandbox from Apollo's CDN; the explorer here is local (./explorer.ts).
      ApolloServerPluginLandingPageDisabled(),
      // The pipeline's answer-size cap and metric.
      pipelinePlugin(pipeline, DIRECT_KINDS, logger),
      // After the cap, so that it sees the cap's error.
      httpStatusPlugin(),
    ],
    // Shutdown is ours (lib/http-server.ts): Apollo's own signal handler would race it.
    stopOnTerminationSignals: false,
  });
  await apollo.start();

  /** The pipeline's first step on a request to /graphql: its refusal, already answered; undefined when it may go on. */
  function refusal(input: GraphQLInput, headers: Headers) {
    const apiSchema = options.apiSchema();
    if (!apiSchema || typeof input.query !== 'string') return undefined;
    const request = {
      query: input.query,
      variables: input.variables as Record<string, unknown> | undefined,
      operationName: input.operationName as string | undefined,
    };
    const op = new Operation<DirectCaller, GatewayContext>(
      request,
      { headers, clientIp: '' },
      apiSchema,
      DIRECT_KINDS,
      logger,
    );
    // Both steps answer (or not) before this returns; an early refusal is sent once its hold is over.
    const held = earlyStep?.before!(op);
    if (!op.result) void limitsStep.before!(op);
    if (!op.result) return undefined;
    // A refusal claimed no Idempotency-Key: the after-steps finish at once.
    void pipeline.finish(op);
    return { answer: op.answer, held };
  }

  const router = express.Router();
  if (config.graphqlExplorer) router.use(explorer());
  router.use(
    '/graphql',
    // /graphql itself, not every path below it (Apollo would answer /graphql/anything).
    (req: Request, _res: Response, next: NextFunction) => next(req.path === '/' ? undefined : 'router'),
    hopJsonBody(config, hop),
    (req: Request, res: Response, next: NextFunction) => {
      const input: unknown = req.method === 'GET' ? fromQueryString(req.query) : req.body;
      // Batches are refused by Apollo (allowBatchedHttpRequests is off).
      if (!input || typeof input !== 'object' || Array.isArray(input)) return next();
      // A token that turns out invalid is refused (401) before Apollo parses anything; a busy
      // user's expensive field gets 429 with Retry-After (lib/operation-pipeline/expensive-early.ts).
      const refusing = refusal(input, req.headers);
      if (!refusing) return next();
      const { answer: refused, held } = refusing;
      // The statuses and media types Apollo would use for a request error (./http-status.ts).
      const accept = req.headers.accept;
      const legacy = asksForLegacyJson(accept);
      const type =
        !legacy && accept && /application\/graphql-response\+json/i.test(accept)
          ? 'application/graphql-response+json; charset=utf-8'
          : 'application/json; charset=utf-8';
      const ext = refused.errors?.[0]?.extensions;
      const tooMany = ext?.code === 'rate_limit_exceeded';
      if (tooMany) res.set(errorHeaders('rate_limit_exceeded', ext.retryAfter as number | undefined));
      const send = () =>
        res
          .status(tooMany ? 429 : legacy ? 200 : 400)
          .type(type)
          .send(JSON.stringify(refused));
      if (held) void held.then(send);
      else send();
    },
    expressMiddleware(apollo, {
      context: async ({ req }) => {
        try {
          return await contextFor(req.headers, hopClientAddress(req, hop));
        } catch (err) {
          // Apollo answers a context failure with this error and its HTTP status.
          const e = err instanceof AppError ? err : new AppError('unauthorized');
          // A refused API-key exchange may be 429 (too many failed keys from this client) or 503.
          e.extensions.http = {
            status: ERROR_STATUS[e.code],
            headers: new HeaderMap(Object.entries(errorHeaders(e.code, e.retryAfter))),
          };
          throw e;
        }
      },
    }),
  );
  router.use('/graphql', graphqlBodyError);

  return { router, stop: () => apollo.stop() };
}
